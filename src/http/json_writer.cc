#include "http/json_writer.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

#include "base/check.h"
#include "base/json_string.h"

namespace chronoq::http {

void AppendJsonString(std::string& out, std::string_view s) { base::AppendJsonString(out, s); }

namespace {
constexpr size_t kBits = 64;  // containers whose first-element flag is a bit of first_bits_
}  // namespace

bool JsonWriter::First() const {
  const size_t d = depth_ - 1;
  return d < kBits ? ((first_bits_ >> d) & 1) != 0 : deeper_.back();
}

void JsonWriter::SetFirst(bool first) {
  const size_t d = depth_ - 1;
  if (d < kBits) {
    first_bits_ = first ? first_bits_ | (uint64_t{1} << d) : first_bits_ & ~(uint64_t{1} << d);
  } else {
    deeper_.back() = first;
  }
}

void JsonWriter::Open() {
  if (depth_ >= kBits) deeper_.push_back(true);
  ++depth_;
  if (depth_ <= kBits) SetFirst(true);
}

void JsonWriter::Close() {
  CQ_DCHECK(depth_ > 0, "JsonWriter: a container closed that was not open");
  --depth_;
  if (depth_ >= kBits) deeper_.pop_back();
}

void JsonWriter::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (depth_ > 0) {
    if (!First()) out_.push_back(',');
    SetFirst(false);
  }
}

JsonWriter& JsonWriter::BeginObject() {
  BeforeValue();
  out_.push_back('{');
  Open();
  return *this;
}

JsonWriter& JsonWriter::EndObject() {
  out_.push_back('}');
  Close();
  return *this;
}

JsonWriter& JsonWriter::BeginArray() {
  BeforeValue();
  out_.push_back('[');
  Open();
  return *this;
}

JsonWriter& JsonWriter::EndArray() {
  out_.push_back(']');
  Close();
  return *this;
}

JsonWriter& JsonWriter::Key(std::string_view k) {
  BeforeValue();
  if (base::JsonPlainPrefix(k) == k.size()) {  // keys are our own names: nothing to escape
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
  CQ_DCHECK(base::JsonPlainPrefix(k) == k.size(), "JSON key literal '{}' needs escaping", k);
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

void JsonWriter::AppendInt(std::string& out, std::string_view key_text, int64_t v) {
  out.append(key_text);
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  out.append(buf, end);
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
