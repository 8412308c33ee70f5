// Json: a small JSON value and parser for clients of the API (bench, CLI). Numbers keep their
// integer value when they are integers. Not for untrusted giant inputs: recursion depth is capped.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace chronoq::client {

class Json {
 public:
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };

  Json() = default;
  static Result<Json> Parse(std::string_view text);

  Type type() const { return type_; }
  bool is_null() const { return type_ == Type::kNull; }
  bool is_object() const { return type_ == Type::kObject; }
  bool is_array() const { return type_ == Type::kArray; }

  // Typed reads; a wrong type gives the zero value.
  int64_t AsInt() const { return type_ == Type::kNumber ? int_ : 0; }
  double AsDouble() const { return type_ == Type::kNumber ? dbl_ : 0; }
  bool AsBool() const { return type_ == Type::kBool && bool_; }
  const std::string& AsString() const { return str_; }
  const std::vector<Json>& items() const { return arr_; }
  const std::vector<std::pair<std::string, Json>>& members() const { return obj_; }

  // Object member by name; a null value when absent or not an object.
  const Json& operator[](std::string_view key) const;
  bool Has(std::string_view key) const;

 private:
  friend class JsonParser;
  Type type_ = Type::kNull;
  bool bool_ = false;
  int64_t int_ = 0;
  double dbl_ = 0;
  std::string str_;
  std::vector<Json> arr_;
  std::vector<std::pair<std::string, Json>> obj_;
};

}  // namespace chronoq::client
