#include "redis/key_id.h"

namespace chronoq::redis {
namespace {

constexpr char kBinary = '\x01';
constexpr size_t kHexDigits = 32;

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;  // uppercase stays text: it would not come back as it was sent
}

}  // namespace

std::string KeyIdOf(std::string_view msg_id) {
  if (msg_id.size() != kHexDigits) return std::string(msg_id);
  std::string out(1 + kHexDigits / 2, kBinary);
  for (size_t i = 0; i < kHexDigits; i += 2) {
    const int hi = HexValue(msg_id[i]);
    const int lo = HexValue(msg_id[i + 1]);
    if (hi < 0 || lo < 0) return std::string(msg_id);
    out[1 + i / 2] = static_cast<char>(hi * 16 + lo);
  }
  return out;
}

std::string MsgIdOf(std::string_view key_id) {
  if (key_id.size() != 1 + kHexDigits / 2 || key_id[0] != kBinary) return std::string(key_id);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(kHexDigits, '0');
  for (size_t i = 0; i < kHexDigits / 2; ++i) {
    const auto b = static_cast<unsigned char>(key_id[1 + i]);
    out[2 * i] = kHex[b >> 4];
    out[2 * i + 1] = kHex[b & 0xf];
  }
  return out;
}

int RecordBucketOf(std::string_view key_id) {
  uint32_t h = 2166136261u;
  for (char c : key_id) {
    h ^= static_cast<unsigned char>(c);
    h *= 16777619u;
  }
  return static_cast<int>(h % kRecordBuckets);
}

}  // namespace chronoq::redis
