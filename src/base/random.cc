#include "base/random.h"

#include <array>
#include <chrono>
#include <cstdint>
#include <cstring>
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

// The two lowercase hex digits of each byte value.
constexpr std::array<char, 512> kHexPairs = [] {
  constexpr char kHex[] = "0123456789abcdef";
  std::array<char, 512> t{};
  for (int b = 0; b < 256; ++b) {
    t[2 * b] = kHex[b >> 4];
    t[2 * b + 1] = kHex[b & 0xf];
  }
  return t;
}();

// v as 16 lowercase hex digits, most significant first, a byte (two digits) at a time.
void PutHex(char* out, uint64_t v) {
  for (int i = 7; i >= 0; --i, v >>= 8) std::memcpy(out + 2 * i, &kHexPairs[2 * (v & 0xff)], 2);
}

}  // namespace

std::string NewMsgId() {
  // Time first, so that ids generated later sort later: new records land at the end of their
  // topic's key range (cheap inserts in the store) instead of at random places.
  thread_local Xoshiro rng;
  thread_local uint16_t counter = static_cast<uint16_t>(rng.Next());
  uint64_t ms = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                          std::chrono::system_clock::now().time_since_epoch())
                                          .count());
  const uint64_t hi = (ms << 16) | ++counter;  // 48 bits of time, 16 of counter
  const uint64_t lo = rng.Next();              // 64 random bits
  char id[32];
  PutHex(id, hi);
  PutHex(id + 16, lo);
  return std::string(id, sizeof(id));
}

}  // namespace chronoq::base
