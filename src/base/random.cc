#include "base/random.h"

#include <cstdint>
#include <random>

namespace chronoq::base {
namespace {

// xoshiro256** (Blackman and Vigna, public domain algorithm).
class Xoshiro {
 public:
  Xoshiro() {
    std::random_device rd;
    for (auto& s : s_) s = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  }
  uint64_t Next() {
    const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = Rotl(s_[3], 45);
    return result;
  }

 private:
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

}  // namespace

std::string NewMsgId() {
  thread_local Xoshiro rng;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id(32, '0');
  for (int half = 0; half < 2; ++half) {
    uint64_t v = rng.Next();
    for (int i = 0; i < 16; ++i) {
      id[half * 16 + i] = kHex[v & 0xf];
      v >>= 4;
    }
  }
  return id;
}

}  // namespace chronoq::base
