// RedisReply: a RESP2 reply as a plain value (hiredis types stay in src/redis/*.cc).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace chronoq::redis {

struct RedisReply {
  enum class Type { kNil, kInteger, kString, kStatus, kError, kArray };
  Type type = Type::kNil;
  int64_t integer = 0;
  std::string str;  // kString, kStatus, kError
  std::vector<RedisReply> elements;

  bool is_error() const { return type == Type::kError; }
  bool is_nil() const { return type == Type::kNil; }
  // An error reply's first word: "MOVED", "ASK", "NOSCRIPT", "READONLY", "LOADING", ...
  std::string_view error_kind() const {
    return is_error() ? std::string_view(str).substr(0, str.find(' ')) : std::string_view();
  }
};

}  // namespace chronoq::redis
