// JSON string literals: quoting and escaping, shared by the server's answers and the CLI.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace chronoq::base {

// Appends `s` as a quoted, escaped JSON string. Bytes that do not form valid UTF-8 become U+FFFD.
void AppendJsonString(std::string& out, std::string_view s);

// Length of the prefix of `s` that needs no escaping and is plain ASCII: no control byte, no '"',
// no '\\', nothing at or above 0x80.
size_t JsonPlainPrefix(std::string_view s);

}  // namespace chronoq::base
