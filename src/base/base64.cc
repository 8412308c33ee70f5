#include "base/base64.h"

#include <array>
#include <cstdint>

namespace chronoq::base {
namespace {

constexpr std::array<int8_t, 256> MakeTable() {
  std::array<int8_t, 256> t{};
  for (auto& v : t) v = -1;
  constexpr std::string_view kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (size_t i = 0; i < kAlphabet.size(); ++i) {
    t[static_cast<unsigned char>(kAlphabet[i])] = static_cast<int8_t>(i);
  }
  return t;
}

constexpr std::array<int8_t, 256> kTable = MakeTable();

}  // namespace

std::optional<std::string> Base64Decode(std::string_view text) {
  // Padding: at most two '=' at the very end, and only where they complete a group of four.
  size_t pad = 0;
  while (pad < 2 && pad < text.size() && text[text.size() - 1 - pad] == '=') ++pad;
  if (pad > 0 && text.size() % 4 != 0) return std::nullopt;
  std::string_view body = text.substr(0, text.size() - pad);
  if (body.size() % 4 == 1) return std::nullopt;  // no encoding ends with one character
  std::string out;
  out.reserve(body.size() / 4 * 3 + 2);
  uint32_t acc = 0;
  int bits = 0;
  for (char c : body) {
    int8_t v = kTable[static_cast<unsigned char>(c)];
    if (v < 0) return std::nullopt;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  // The bits left over must be zero, or the text is not the encoding of any bytes.
  if (bits > 0 && (acc & ((1u << bits) - 1)) != 0) return std::nullopt;
  return out;
}

}  // namespace chronoq::base
