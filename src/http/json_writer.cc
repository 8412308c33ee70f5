#include "http/json_writer.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstring>

#include "base/check.h"
#include "base/utf8.h"

namespace chronoq::http {
namespace {

constexpr char kHex[] = "0123456789abcdef";

constexpr uint64_t kOnes = 0x0101010101010101ULL;
constexpr uint64_t kHighs = 0x8080808080808080ULL;

// Non-zero when one of the 8 bytes of x is zero.
constexpr uint64_t HasZeroByte(uint64_t x) { return (x - kOnes) & ~x & kHighs; }

// Length of the prefix of `s` that needs no escaping and is plain ASCII: no control byte, no '"',
// no '\\', nothing at or above 0x80. Eight bytes at a time.
size_t PlainPrefix(std::string_view s) {
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

void AppendEscaped(std::string& out, std::string_view s) {
  while (!s.empty()) {
    size_t plain = PlainPrefix(s);
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
  size_t plain = PlainPrefix(s);
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

void JsonWriter::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!first_.empty()) {
    if (!first_.back()) out_.push_back(',');
    first_.back() = false;
  }
}

JsonWriter& JsonWriter::BeginObject() {
  BeforeValue();
  out_.push_back('{');
  first_.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::EndObject() {
  out_.push_back('}');
  first_.pop_back();
  return *this;
}

JsonWriter& JsonWriter::BeginArray() {
  BeforeValue();
  out_.push_back('[');
  first_.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::EndArray() {
  out_.push_back(']');
  first_.pop_back();
  return *this;
}

JsonWriter& JsonWriter::Key(std::string_view k) {
  BeforeValue();
  if (PlainPrefix(k) == k.size()) {  // keys are our own names: nothing to escape
    out_.push_back('"');
    out_.append(k);
    out_ += "\":";
  } else {
    AppendJsonString(out_, k);
    out_.push_back(':');
  }
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::LiteralKey(std::string_view k) {
  CQ_DCHECK(PlainPrefix(k) == k.size(), "JSON key literal '{}' needs escaping", k);
  BeforeValue();
  out_.push_back('"');
  out_.append(k);
  out_ += "\":";
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::String(std::string_view s) {
  BeforeValue();
  AppendJsonString(out_, s);
  return *this;
}

JsonWriter& JsonWriter::Int(int64_t v) {
  BeforeValue();
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  out_.append(buf, end);
  return *this;
}

JsonWriter& JsonWriter::Double(double v) {
  BeforeValue();
  if (std::isfinite(v)) {
    fmt::format_to(std::back_inserter(out_), "{}", v);
  } else {
    out_ += "0";
  }
  return *this;
}

JsonWriter& JsonWriter::Bool(bool v) {
  BeforeValue();
  out_ += v ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::Null() {
  BeforeValue();
  out_ += "null";
  return *this;
}

}  // namespace chronoq::http
