#include "core/validation.h"

#include <fmt/format.h>

#include "base/utf8.h"

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
  return ValidateName("topic", topic, limits.max_topic_bytes, "max-topic-bytes");
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

}  // namespace chronoq::core
