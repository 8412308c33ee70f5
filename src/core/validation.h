// Checks of request values against Limits. Each failure is kInvalidArgument with a sentence that
// names the parameter and says what is wrong (it becomes the `msg` of a code-400 answer).
// Pure functions.
#pragma once

#include <string_view>

#include "base/status.h"
#include "core/limits.h"

namespace chronoq::core {

// Non-empty, at most max_topic_bytes, valid UTF-8, no control characters.
Status ValidateTopic(std::string_view topic, const Limits& limits);
// Same rules with max_msg_id_bytes; `param` names it in the message ("msgId").
Status ValidateMsgId(std::string_view msg_id, const Limits& limits);
// Non-empty, at most max_msg_bytes, valid UTF-8 (any code point, NUL included).
Status ValidatePayload(std::string_view msg, const Limits& limits);
// At most max_delay (negative delays mean "now" and are fine).
Status ValidateDelay(Millis delay, const Limits& limits);

}  // namespace chronoq::core
