#include "core/validation.h"

#include <fmt/format.h>

#include "base/utf8.h"
#include "core/scope.h"

namespace chronoq::core {
namespace {

Status ValidateName(std::string_view param, std::string_view value, size_t max_bytes,
                    std::string_view limit_key) {
  if (value.empty()) return InvalidArgument(fmt::format("{} is empty", param));
  if (value.size() > max_bytes) {
    return InvalidArgument(fmt::format("{} is {} bytes long; the limit is {} bytes ({})", param,
                                       value.size(), max_bytes, limit_key));
  }
  if (!base::IsValidUtf8(value)) {
    return InvalidArgument(fmt::format("{} is not valid UTF-8", param));
  }
  for (size_t i = 0; i < value.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(value[i]);
    if (c < 0x20 || c == 0x7F) {
      return InvalidArgument(fmt::format(
          "{} contains a control character (byte 0x{:02X} at offset {}); control characters are "
          "not allowed",
          param, c, i));
    }
  }
  return Status::Ok();
}

}  // namespace

Status ValidateTopic(std::string_view topic, const Limits& limits) {
  return ValidateTopicParam("topic", topic, limits);
}

Status ValidateTopicParam(std::string_view param, std::string_view topic, const Limits& limits) {
  return ValidateName(param, topic, limits.max_topic_bytes, "max-topic-bytes");
}

Status ValidateScopedTopic(std::string_view topic, const Limits& limits) {
  return ValidateScopedTopicParam("topic", topic, limits);
}

Status ValidateScopedTopicParam(std::string_view param, std::string_view topic,
                                const Limits& limits) {
  // An internal name of a namespace (core/scope.h; the service makes them, a client's name never
  // holds the separator): the client's part is checked as a name of its own.
  std::string_view ns;
  std::string_view client;
  if (topic.find(kScopeSeparator) != std::string_view::npos &&
      SplitScopedTopic(topic, &ns, &client)) {
    return ValidateName(param, client, limits.max_topic_bytes, "max-topic-bytes");
  }
  return ValidateName(param, topic, limits.max_topic_bytes, "max-topic-bytes");
}

Status ValidateMsgId(std::string_view msg_id, const Limits& limits) {
  return ValidateName("msgId", msg_id, limits.max_msg_id_bytes, "max-msg-id-bytes");
}

Status ValidatePayload(std::string_view msg, const Limits& limits) {
  if (msg.empty()) return InvalidArgument("msg is empty");
  if (msg.size() > limits.max_msg_bytes) {
    return InvalidArgument(
        fmt::format("msg is {} bytes long; the limit is {} bytes (max-msg-bytes)", msg.size(),
                    limits.max_msg_bytes));
  }
  if (!base::IsValidUtf8(msg)) return InvalidArgument("msg is not valid UTF-8");
  return Status::Ok();
}

Status ValidateDelay(Millis delay, const Limits& limits) {
  if (delay > limits.max_delay) {
    return InvalidArgument(fmt::format("delayMillis is {}; the limit is {} ms (max-delay-millis)",
                                       delay.count(), limits.max_delay.count()));
  }
  return Status::Ok();
}

Status ValidatePriority(int64_t priority) {
  if (priority < 0 || priority > kMaxPriority) {
    return InvalidArgument(
        fmt::format("priority must be between 0 and {}, got {}", kMaxPriority, priority));
  }
  return Status::Ok();
}

Status ValidateTriggerTime(int64_t trigger_ms, TimePoint now, const Limits& limits) {
  if (trigger_ms < 0) {
    return InvalidArgument(fmt::format(
        "triggerTime must be a time in milliseconds since the epoch (>= 0), got {}", trigger_ms));
  }
  const int64_t latest = ToEpochMs(SaturatingAdd(now, limits.max_delay));
  if (trigger_ms > latest) {
    return InvalidArgument(
        fmt::format("triggerTime {} is {} ms from now; the limit is {} ms (max-delay-millis)",
                    trigger_ms, trigger_ms - ToEpochMs(now), limits.max_delay.count()));
  }
  return Status::Ok();
}

Status ValidateCountTrigger(int64_t count_trigger) {
  if (count_trigger < 0) {
    return InvalidArgument(
        fmt::format("countTrigger must be 0 (none) or a positive count, got {}", count_trigger));
  }
  return Status::Ok();
}

Status ValidateReason(std::string_view reason, const Limits& limits) {
  if (reason.size() > limits.max_reason_bytes) {
    return InvalidArgument(fmt::format("reason is {} bytes long; the limit is {} bytes",
                                       reason.size(), limits.max_reason_bytes));
  }
  if (!base::IsValidUtf8(reason)) return InvalidArgument("reason is not valid UTF-8");
  return Status::Ok();
}

Status ValidateAtLeast(std::string_view name, int64_t value, int64_t min) {
  if (value < min)
    return InvalidArgument(fmt::format("{} must be at least {}, got {}", name, min, value));
  return Status::Ok();
}

}  // namespace chronoq::core
