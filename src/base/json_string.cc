#include "base/json_string.h"

#include <cstdint>
#include <cstring>

#include "base/utf8.h"

namespace chronoq::base {
namespace {

constexpr char kHex[] = "0123456789abcdef";

constexpr uint64_t kOnes = 0x0101010101010101ULL;
constexpr uint64_t kHighs = 0x8080808080808080ULL;

// Non-zero when one of the 8 bytes of x is zero.
constexpr uint64_t HasZeroByte(uint64_t x) { return (x - kOnes) & ~x & kHighs; }

}  // namespace

// Eight bytes at a time.
size_t JsonPlainPrefix(std::string_view s) {
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t x;
    std::memcpy(&x, s.data() + i, 8);
    uint64_t special = (x & kHighs) | ((x - 0x2020202020202020ULL) & ~x & kHighs) |
                       HasZeroByte(x ^ (kOnes * '"')) | HasZeroByte(x ^ (kOnes * '\\'));
    if (special != 0) break;
  }
  for (; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c >= 0x80 || c == '"' || c == '\\') break;
  }
  return i;
}

namespace {

void AppendEscaped(std::string& out, std::string_view s) {
  while (!s.empty()) {
    size_t plain = JsonPlainPrefix(s);
    out.append(s.data(), plain);
    s.remove_prefix(plain);
    if (s.empty()) break;
    unsigned char c = static_cast<unsigned char>(s[0]);
    s.remove_prefix(1);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (c >= 0x80) {
          out.push_back(static_cast<char>(c));  // part of a UTF-8 sequence (validated before)
        } else {
          out += "\\u00";
          out.push_back(kHex[c >> 4]);
          out.push_back(kHex[c & 0xf]);
        }
    }
  }
}

// Replaces each byte that does not start a valid UTF-8 sequence with U+FFFD.
std::string Sanitize(std::string_view s) {
  std::string out;
  size_t i = 0;
  while (i < s.size()) {
    size_t len = 1;
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0xF0)
      len = 4;
    else if (c >= 0xE0)
      len = 3;
    else if (c >= 0xC0)
      len = 2;
    if (i + len <= s.size() && base::IsValidUtf8(s.substr(i, len))) {
      out.append(s.substr(i, len));
      i += len;
    } else {
      out += "\xEF\xBF\xBD";
      ++i;
    }
  }
  return out;
}

}  // namespace

void AppendJsonString(std::string& out, std::string_view s) {
  out.push_back('"');
  size_t plain = JsonPlainPrefix(s);
  if (plain == s.size()) {  // the common case: plain ASCII
    out.append(s);
    out.push_back('"');
    return;
  }
  if (base::IsValidUtf8(s.substr(plain))) {
    AppendEscaped(out, s);
  } else {
    AppendEscaped(out, Sanitize(s));
  }
  out.push_back('"');
}

}  // namespace chronoq::base
