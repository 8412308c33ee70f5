// Checks of request values against Limits. Each failure is kInvalidArgument with a sentence that
// names the parameter and says what is wrong (it becomes the `msg` of a code-400 answer).
// Pure functions.
#pragma once

#include <cstdint>
#include <string_view>

#include "base/status.h"
#include "base/time.h"
#include "core/limits.h"

namespace chronoq::core {

// Non-empty, at most max_topic_bytes, valid UTF-8, no control characters.
Status ValidateTopic(std::string_view topic, const Limits& limits);
// The same for a parameter naming a topic (deadLetterTopic).
Status ValidateTopicParam(std::string_view param, std::string_view topic, const Limits& limits);
// The same, but an internal name of a namespace (core/scope.h, "ns\x1Ftopic" with a valid
// namespace) is checked by its client part, with the same sentences. The service checks topics
// with these: it makes such names from a client's; a client's name never holds the separator
// (service/session.h refuses it with ValidateTopicParam's sentence before anything else).
Status ValidateScopedTopic(std::string_view topic, const Limits& limits);
Status ValidateScopedTopicParam(std::string_view param, std::string_view topic,
                                const Limits& limits);
// Same rules with max_msg_id_bytes; `param` names it in the message ("msgId").
Status ValidateMsgId(std::string_view msg_id, const Limits& limits);
// Non-empty, at most max_msg_bytes, valid UTF-8 (any code point, NUL included).
Status ValidatePayload(std::string_view msg, const Limits& limits);
// At most max_delay (negative delays mean "now" and are fine).
Status ValidateDelay(Millis delay, const Limits& limits);

// API-EXTENSIONS.md sections 2-3.
// 0..kMaxPriority.
Status ValidatePriority(int64_t priority);
// An absolute trigger time (ms since the epoch): >= 0 and at most max_delay after `now` (a past
// time is fine: it means now).
Status ValidateTriggerTime(int64_t trigger_ms, TimePoint now, const Limits& limits);
// >= 0 (0: none).
Status ValidateCountTrigger(int64_t count_trigger);
// At most max_reason_bytes, valid UTF-8 (may be empty: no reason).
Status ValidateReason(std::string_view reason, const Limits& limits);
// `name` (a parameter taking a count, a ttl, ...) is at least `min`.
Status ValidateAtLeast(std::string_view name, int64_t value, int64_t min);

}  // namespace chronoq::core
