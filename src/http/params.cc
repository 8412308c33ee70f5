#include "http/params.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstring>

namespace chronoq::http {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Shortens a value quoted in an error message.
std::string Quote(std::string_view v) {
  constexpr size_t kMax = 64;
  if (v.size() <= kMax) return std::string(v);
  return std::string(v.substr(0, kMax)) + "...";
}

// Whether `s` holds a '%' or '+' (memchr is vectorised; find_first_of compares byte by byte
// against the set).
bool NeedsDecoding(std::string_view s) {
  // A default string_view has a null data(), which memchr must not get.
  return !s.empty() && (std::memchr(s.data(), '%', s.size()) != nullptr ||
                        std::memchr(s.data(), '+', s.size()) != nullptr);
}

Result<std::string> Decode(std::string_view s, std::string_view source) {
  // A default string_view (no '=' in a pair) has a null data(), which memchr must not get.
  if (s.empty()) return std::string();
  // memchr is vectorised; find_first_of compares byte by byte against the set.
  const void* pct = std::memchr(s.data(), '%', s.size());
  const void* plus = std::memchr(s.data(), '+', s.size());
  if (pct == nullptr && plus == nullptr) return std::string(s);  // nothing to decode
  size_t special =
      static_cast<size_t>(static_cast<const char*>(pct == nullptr    ? plus
                                                   : plus == nullptr ? pct
                                                                     : std::min(pct, plus)) -
                          s.data());
  std::string out;
  out.reserve(s.size());
  out.append(s.substr(0, special));
  for (size_t i = special; i < s.size(); ++i) {
    char c = s[i];
    if (c == '+') {
      out.push_back(' ');
    } else if (c == '%') {
      int hi = i + 1 < s.size() ? HexValue(s[i + 1]) : -1;
      int lo = i + 2 < s.size() ? HexValue(s[i + 2]) : -1;
      if (hi < 0 || lo < 0) {
        return InvalidArgument(fmt::format("malformed percent-encoding in the {}: '{}'", source,
                                           Quote(s.substr(i, 3))));
      }
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else {
      out.push_back(c);
    }
  }
  return out;
}

// The media type of a Content-Type value (before any ';', trimmed), as given: compared with
// EqualsIgnoreCase, so that the usual header costs no copy.
std::string_view MediaType(std::string_view content_type) {
  std::string_view t = content_type.substr(0, content_type.find(';'));
  while (!t.empty() && (t.front() == ' ' || t.front() == '\t')) t.remove_prefix(1);
  while (!t.empty() && (t.back() == ' ' || t.back() == '\t')) t.remove_suffix(1);
  return t;
}

char AsciiLower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// REQUIRES: `lower` is lower case.
bool EqualsIgnoreCase(std::string_view s, std::string_view lower) {
  if (s.size() != lower.size()) return false;
  if (s == lower) return true;  // the usual header, already lower case: one memcmp
  for (size_t i = 0; i < s.size(); ++i) {
    if (AsciiLower(s[i]) != lower[i]) return false;
  }
  return true;
}

bool IsIntegerSyntax(std::string_view s) {
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) s.remove_prefix(1);
  if (s.empty()) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

std::string Params::Value::TakeText() {
  if (owned_text == nullptr) return std::string(text);
  std::string out = std::move(*owned_text);
  owned_text = nullptr;
  text = std::string_view();
  return out;
}

std::string* Params::Own(std::string s) {
  owned_.push_back(std::make_unique<std::string>(std::move(s)));
  return owned_.back().get();
}

const Params::Value* Params::FindValue(std::string_view name) const {
  if (index_ != nullptr) {
    auto it = index_->find(std::string(name));
    return it == index_->end() ? nullptr : &values_[it->second];
  }
  for (const Value& v : values_) {
    if (v.name == name) return &v;
  }
  return nullptr;
}

Status Params::Insert(const Value& v) {
  if (index_ == nullptr && values_.size() >= kIndexFrom) {
    index_ = std::make_unique<std::unordered_map<std::string, size_t>>();
    for (size_t i = 0; i < values_.size(); ++i) index_->emplace(values_[i].name, i);
  }
  if (Value* old = FindValue(v.name); old != nullptr) {
    if (old->source == v.source) {
      return InvalidArgument(
          fmt::format("parameter '{}' is given twice in the {}", Quote(v.name), v.source));
    }
    // The body wins over the query string.
    old->owned_text = v.owned_text;
    old->text = v.text;
    old->non_scalar = v.non_scalar;
    old->source = v.source;
    return Status::Ok();
  }
  if (index_ != nullptr) index_->emplace(v.name, values_.size());
  values_.push_back(v);
  return Status::Ok();
}

Status Params::Add(std::string_view source, std::string name, std::string value, bool non_scalar) {
  Value v;
  v.source = source;
  v.name = *Own(std::move(name));
  v.owned_text = Own(std::move(value));
  v.text = *v.owned_text;
  v.non_scalar = non_scalar;
  return Insert(v);
}

Status Params::AddView(std::string_view source, std::string_view name, std::string_view value) {
  return Insert(Value{name, value, source});
}

void Params::Replace(std::string_view name, std::string text) {
  Value* v = FindValue(name);
  if (v == nullptr) return;
  v->owned_text = Own(std::move(text));
  v->text = *v->owned_text;
}

const std::string_view* Params::Find(std::string_view name) const {
  const Value* v = FindValue(name);
  return v == nullptr ? nullptr : &v->text;
}

const std::string_view* Params::Find(std::string_view name, bool* non_scalar) const {
  const Value* v = FindValue(name);
  if (v == nullptr) return nullptr;
  *non_scalar = v->non_scalar;
  return &v->text;
}

bool Params::NonScalar(std::string_view name) const {
  const Value* v = FindValue(name);
  return v != nullptr && v->non_scalar;
}

const std::string_view* Params::FirstUnknown(std::initializer_list<std::string_view> known) const {
  for (const Value& v : values_) {
    if (std::find(known.begin(), known.end(), v.name) == known.end()) return &v.name;
  }
  return nullptr;
}

Status ParseUrlEncoded(std::string_view text, std::string_view source, Params* out) {
  // Searched once for the whole text: a pair is looked at again only when the text has a '%' or
  // a '+' somewhere.
  const bool plain = !NeedsDecoding(text);
  while (!text.empty()) {
    size_t amp = text.find('&');
    std::string_view pair = text.substr(0, amp);
    text = amp == std::string_view::npos ? std::string_view() : text.substr(amp + 1);
    if (pair.empty()) continue;
    size_t eq = pair.find('=');
    std::string_view raw_key = pair.substr(0, eq);
    // A pair without '=' has an empty value (a view of static bytes, never a null one).
    std::string_view raw_value =
        eq == std::string_view::npos ? std::string_view("", 0) : pair.substr(eq + 1);
    if (plain || !NeedsDecoding(pair)) {
      // The common case: views into the request, no copy.
      if (raw_key.empty()) continue;
      CQ_RETURN_IF_ERROR(out->AddView(source, raw_key, raw_value));
      continue;
    }
    CQ_ASSIGN_OR_RETURN(std::string key, Decode(raw_key, source));
    CQ_ASSIGN_OR_RETURN(std::string value, Decode(raw_value, source));
    if (key.empty()) continue;
    CQ_RETURN_IF_ERROR(out->Add(source, std::move(key), std::move(value)));
  }
  return Status::Ok();
}

Result<Params> Params::Parse(std::string_view query, bool has_content_type,
                             std::string_view content_type, std::string_view body) {
  Params p;
  p.values_.reserve(8);
  CQ_RETURN_IF_ERROR(ParseUrlEncoded(query, "query string", &p));
  if (body.empty()) return p;
  std::string_view media = MediaType(content_type);
  if (!has_content_type || EqualsIgnoreCase(media, "application/x-www-form-urlencoded")) {
    CQ_RETURN_IF_ERROR(ParseUrlEncoded(body, "form body", &p));
  } else if (EqualsIgnoreCase(media, "application/json") ||
             (media.size() > 5 && EqualsIgnoreCase(media.substr(media.size() - 5), "+json"))) {
    CQ_RETURN_IF_ERROR(ParseJsonBody(body, &p));
  } else {
    std::string lower(media);
    std::transform(lower.begin(), lower.end(), lower.begin(), AsciiLower);
    p.ignored_body_type_ = lower.empty() ? std::string("(empty)") : std::move(lower);
  }
  return p;
}

std::optional<int64_t> ParseInt64(std::string_view s) {
  if (!IsIntegerSyntax(s)) return std::nullopt;
  bool neg = s[0] == '-';
  if (s[0] == '+' || s[0] == '-') s.remove_prefix(1);
  // Accumulate negatively so INT64_MIN parses.
  int64_t v = 0;
  for (char c : s) {
    int d = c - '0';
    if (__builtin_mul_overflow(v, 10, &v) || __builtin_sub_overflow(v, d, &v)) return std::nullopt;
  }
  if (!neg) {
    if (v == INT64_MIN) return std::nullopt;
    v = -v;
  }
  return v;
}

std::optional<bool> ParseBool(std::string_view s) {
  std::string l(s);
  std::transform(l.begin(), l.end(), l.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (l == "true" || l == "1" || l == "yes" || l == "on") return true;
  if (l == "false" || l == "0" || l == "no" || l == "off") return false;
  return std::nullopt;
}

void ParamReader::Fail(std::string msg) {
  if (status_.ok()) status_ = InvalidArgument(std::move(msg));
}

Params::Value* ParamReader::Raw(std::string_view name, bool required, bool empty_is_absent) {
  Params::Value* v = p_.FindValue(name);
  if (v != nullptr && v->non_scalar) {
    Fail(fmt::format("parameter '{}' must be a string, number or boolean, not an object or array",
                     name));
    return nullptr;
  }
  if (v != nullptr && empty_is_absent && v->text.empty()) {
    if (required) Fail(fmt::format("required parameter '{}' is empty", name));
    return nullptr;
  }
  if (v == nullptr && required) {
    std::string msg = fmt::format("required parameter '{}' is missing", name);
    if (!p_.ignored_body_type().empty()) {
      msg += fmt::format(
          " (the request body was ignored: its Content-Type '{}' is neither "
          "application/x-www-form-urlencoded nor application/json)",
          Quote(p_.ignored_body_type()));
    }
    Fail(std::move(msg));
  }
  return v;
}

std::optional<std::string> ParamReader::String(std::string_view name, bool required) {
  Params::Value* v = Raw(name, required, /*empty_is_absent=*/false);
  if (v == nullptr) return std::nullopt;
  return v->TakeText();
}

std::optional<std::string> ParamReader::JsonText(std::string_view name) {
  Params::Value* v = p_.FindValue(name);
  if (v == nullptr || v->text.empty()) return std::nullopt;
  return v->TakeText();
}

std::optional<int64_t> ParamReader::Long(std::string_view name, bool required) {
  const Params::Value* raw = Raw(name, required, /*empty_is_absent=*/true);
  if (raw == nullptr) return std::nullopt;
  const std::string_view* v = &raw->text;
  std::optional<int64_t> n = ParseInt64(*v);
  if (!n) {
    if (IsIntegerSyntax(*v)) {
      Fail(
          fmt::format("parameter '{}' is outside the 64-bit integer range: '{}'", name, Quote(*v)));
    } else {
      Fail(fmt::format("parameter '{}' must be a decimal integer, got '{}'", name, Quote(*v)));
    }
  }
  return n;
}

std::optional<int32_t> ParamReader::Int(std::string_view name, bool required) {
  const Params::Value* raw = Raw(name, required, /*empty_is_absent=*/true);
  if (raw == nullptr) return std::nullopt;
  const std::string_view* v = &raw->text;
  std::optional<int64_t> n = ParseInt64(*v);
  if (!n) {
    if (IsIntegerSyntax(*v)) {
      Fail(
          fmt::format("parameter '{}' is outside the 32-bit integer range: '{}'", name, Quote(*v)));
    } else {
      Fail(fmt::format("parameter '{}' must be a decimal integer, got '{}'", name, Quote(*v)));
    }
    return std::nullopt;
  }
  if (*n < INT32_MIN || *n > INT32_MAX) {
    Fail(fmt::format("parameter '{}' is outside the 32-bit integer range: '{}'", name, Quote(*v)));
    return std::nullopt;
  }
  return static_cast<int32_t>(*n);
}

std::optional<bool> ParamReader::Bool(std::string_view name, bool required) {
  const Params::Value* raw = Raw(name, required, /*empty_is_absent=*/true);
  if (raw == nullptr) return std::nullopt;
  const std::string_view* v = &raw->text;
  std::optional<bool> b = ParseBool(*v);
  if (!b) {
    Fail(fmt::format("parameter '{}' must be a boolean (true/false, 1/0, yes/no, on/off), got '{}'",
                     name, Quote(*v)));
  }
  return b;
}

}  // namespace chronoq::http
