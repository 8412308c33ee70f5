#include "http/json_writer.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

#include "base/check.h"
#include "base/json_string.h"

namespace chronoq::http {

void AppendJsonString(std::string& out, std::string_view s) { base::AppendJsonString(out, s); }

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
