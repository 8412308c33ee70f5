// Internal to src/config (other modules use config.h): the one table of settings that the flag,
// environment and file parsers, validation and every rendering (help, docs, sample file,
// --print-config) share.
#pragma once

#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "config/config.h"

namespace chronoq::config::internal {

using Field =
    std::variant<std::string ServerConfig::*, int64_t ServerConfig::*, bool ServerConfig::*>;

struct Key {
  std::string_view name;
  Field field;
  std::string_view help;       // meaning: one or two sentences
  std::string_view unit = {};  // "ms", "bytes", ...; empty when the value has none
  std::string_view group =
      {};               // heading in the docs and the sample file; empty: the previous key's
  bool hidden = false;  // tests only: not documented, not read from the environment or a file
};

// Every key, in documentation order.
const std::vector<Key>& Keys();
// nullptr when `name` is no key.
const Key* FindKey(std::string_view name);

// "string", "integer" or "boolean".
std::string_view TypeName(const Field& f);
// The value as text ("3600000", "true", "0.0.0.0:8080").
std::string Text(const ServerConfig& cfg, const Field& f);
// A TOML basic string: quotes and backslashes escaped, control characters as \uXXXX.
std::string TomlString(std::string_view s);
// The value as a TOML value (strings quoted and escaped); redis-url with its password redacted.
std::string TomlValue(const ServerConfig& cfg, const Key& k);

}  // namespace chronoq::config::internal
