// UTF-8 checks used by request validation.
#pragma once

#include <string_view>

namespace chronoq::base {

// True when `s` is well-formed UTF-8 (no overlong forms, no surrogates, nothing above U+10FFFF).
// NUL bytes are valid.
bool IsValidUtf8(std::string_view s);

// True when `s` holds a C0 control byte (0x00-0x1F) or DEL (0x7F).
bool HasControlChars(std::string_view s);

}  // namespace chronoq::base
