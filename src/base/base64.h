// Base64 (RFC 4648, standard alphabet) decoding, for payloads that carry binary bytes as text (a
// gRPC callback's request message with "format":"base64", docs/push.md). Pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace chronoq::base {

// The bytes `text` encodes, or nullopt when it is not base64: a character outside the alphabet
// (whitespace included), a misplaced '=', or a length that no encoding has. Padding may be left
// out.
std::optional<std::string> Base64Decode(std::string_view text);

}  // namespace chronoq::base
