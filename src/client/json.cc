#include "client/json.h"

#include <fmt/format.h>

#include <charconv>
#include <cstdlib>

namespace chronoq::client {

class JsonParser {
 public:
  explicit JsonParser(std::string_view s) : s_(s) {}

  Result<Json> ParseDocument() {
    Json v;
    CQ_RETURN_IF_ERROR(Value(&v, 0));
    SkipSpace();
    if (pos_ != s_.size()) return Error("data after the JSON value");
    return v;
  }

 private:
  Status Error(std::string_view what) const {
    return InvalidArgument(fmt::format("bad JSON at offset {}: {}", pos_, what));
  }
  void SkipSpace() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) {
      ++pos_;
    }
  }
  bool Eat(char c) {
    SkipSpace();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool Literal(std::string_view word) {
    if (s_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  static void AppendUtf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
      out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }

  bool Hex4(uint32_t* out) {
    if (pos_ + 4 > s_.size()) return false;
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      char c = s_[pos_ + i];
      v <<= 4;
      if (c >= '0' && c <= '9')
        v |= c - '0';
      else if (c >= 'a' && c <= 'f')
        v |= c - 'a' + 10;
      else if (c >= 'A' && c <= 'F')
        v |= c - 'A' + 10;
      else
        return false;
    }
    pos_ += 4;
    *out = v;
    return true;
  }

  Status String(std::string* out) {
    if (!Eat('"')) return Error("expected a string");
    for (;;) {
      if (pos_ >= s_.size()) return Error("unterminated string");
      char c = s_[pos_++];
      if (c == '"') return Status::Ok();
      if (c != '\\') {
        out->push_back(c);
        continue;
      }
      if (pos_ >= s_.size()) return Error("unterminated escape");
      char e = s_[pos_++];
      switch (e) {
        case '"':
          out->push_back('"');
          break;
        case '\\':
          out->push_back('\\');
          break;
        case '/':
          out->push_back('/');
          break;
        case 'b':
          out->push_back('\b');
          break;
        case 'f':
          out->push_back('\f');
          break;
        case 'n':
          out->push_back('\n');
          break;
        case 'r':
          out->push_back('\r');
          break;
        case 't':
          out->push_back('\t');
          break;
        case 'u': {
          uint32_t cp;
          if (!Hex4(&cp)) return Error("bad \\u escape");
          if (cp >= 0xD800 && cp <= 0xDBFF && Literal("\\u")) {
            uint32_t lo;
            if (!Hex4(&lo) || lo < 0xDC00 || lo > 0xDFFF) return Error("bad surrogate pair");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          }
          AppendUtf8(*out, cp);
          break;
        }
        default:
          return Error("bad escape");
      }
    }
  }

  Status Number(Json* v) {
    size_t start = pos_;
    if (pos_ < s_.size() && s_[pos_] == '-') ++pos_;
    bool integer = true;
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (c >= '0' && c <= '9') {
        ++pos_;
      } else if (c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') {
        integer = false;
        ++pos_;
      } else {
        break;
      }
    }
    std::string_view text = s_.substr(start, pos_ - start);
    if (text.empty() || text == "-") return Error("bad number");
    v->type_ = Json::Type::kNumber;
    std::string copy(text);
    v->dbl_ = std::strtod(copy.c_str(), nullptr);
    if (integer) {
      auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v->int_);
      if (ec != std::errc()) v->int_ = static_cast<int64_t>(v->dbl_);
    } else {
      v->int_ = static_cast<int64_t>(v->dbl_);
    }
    return Status::Ok();
  }

  Status Value(Json* v, int depth) {
    if (depth > 64) return Error("nested too deeply");
    SkipSpace();
    if (pos_ >= s_.size()) return Error("unexpected end");
    char c = s_[pos_];
    if (c == '{') {
      ++pos_;
      v->type_ = Json::Type::kObject;
      if (Eat('}')) return Status::Ok();
      do {
        std::string key;
        CQ_RETURN_IF_ERROR(String(&key));
        if (!Eat(':')) return Error("expected ':'");
        Json member;
        CQ_RETURN_IF_ERROR(Value(&member, depth + 1));
        v->obj_.emplace_back(std::move(key), std::move(member));
      } while (Eat(','));
      if (!Eat('}')) return Error("expected '}'");
      return Status::Ok();
    }
    if (c == '[') {
      ++pos_;
      v->type_ = Json::Type::kArray;
      if (Eat(']')) return Status::Ok();
      do {
        Json item;
        CQ_RETURN_IF_ERROR(Value(&item, depth + 1));
        v->arr_.push_back(std::move(item));
      } while (Eat(','));
      if (!Eat(']')) return Error("expected ']'");
      return Status::Ok();
    }
    if (c == '"') {
      v->type_ = Json::Type::kString;
      return String(&v->str_);
    }
    if (Literal("true")) {
      v->type_ = Json::Type::kBool;
      v->bool_ = true;
      return Status::Ok();
    }
    if (Literal("false")) {
      v->type_ = Json::Type::kBool;
      return Status::Ok();
    }
    if (Literal("null")) return Status::Ok();
    return Number(v);
  }

  std::string_view s_;
  size_t pos_ = 0;
};

Result<Json> Json::Parse(std::string_view text) { return JsonParser(text).ParseDocument(); }

const Json& Json::operator[](std::string_view key) const {
  static const Json kNull;
  for (const auto& [k, v] : obj_) {
    if (k == key) return v;
  }
  return kNull;
}

bool Json::Has(std::string_view key) const {
  for (const auto& [k, v] : obj_) {
    if (k == key) return true;
  }
  return false;
}

}  // namespace chronoq::client
