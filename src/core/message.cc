#include "core/message.h"

#include <algorithm>

namespace chronoq::core {

std::string_view StatusName(MsgStatus s) {
  switch (s) {
    case MsgStatus::kWaiting:
      return "WAITING";
    case MsgStatus::kReady:
      return "READY";
    case MsgStatus::kConsuming:
      return "CONSUMING";
    case MsgStatus::kConsumeOk:
      return "CONSUME_OK";
    case MsgStatus::kExpire:
      return "EXPIRE";
    case MsgStatus::kRetryExhaust:
      return "RETRY_EXHAUST";
    case MsgStatus::kDelete:
      return "DELETE";
  }
  return "UNKNOWN";
}

void AssignScalars(MessageRecord& dst, const MessageRecord& src) {
  dst.produce_time = src.produce_time;
  dst.trigger_time = src.trigger_time;
  dst.expire_time = src.expire_time;
  dst.max_retry = src.max_retry;
  dst.retry = src.retry;
  dst.phase = src.phase;
  dst.end_status = src.end_status;
  dst.visible_at = src.visible_at;
  dst.ended_at = src.ended_at;
  dst.seq = src.seq;
  dst.priority = src.priority;
  dst.count_trigger = src.count_trigger;
  dst.count = src.count;
  dst.last_error = src.last_error;
  dst.retry_interval = src.retry_interval;
  dst.dead_letter = src.dead_letter;
  dst.callback = src.callback;
  dst.push = src.push;
  // A new field must be copied above; this trips when the record changes size.
  static_assert(sizeof(MessageRecord) == 4 * sizeof(std::string) + 8 * 3 + 8 + 8 + 8 + 8 + 8 + 8 +
                                             8 + 8 + 8 + sizeof(std::optional<DeadLetter>) +
                                             sizeof(CallbackRef) + 8,
                "MessageRecord changed: update AssignScalars");
}

MessageRecord CopyWithoutPayload(const MessageRecord& r) {
  MessageRecord out;
  out.topic = r.topic;
  out.msg_id = r.msg_id;
  AssignScalars(out, r);
  return out;
}

TimePoint NaturalEndTime(const MessageRecord& r) {
  if (r.phase == Phase::kEnded) return r.ended_at;
  TimePoint end = r.expire_time;
  if (r.retry >= r.max_deliveries()) end = std::min(end, r.ack_deadline());
  return end;
}

MsgStatus StatusAt(const MessageRecord& r, TimePoint now) {
  if (r.phase == Phase::kEnded) return r.end_status;
  if (now >= NaturalEndTime(r)) return r.retry == 0 ? MsgStatus::kExpire : MsgStatus::kRetryExhaust;
  if (r.phase == Phase::kDelivered && r.ack_deadline() > now) return MsgStatus::kConsuming;
  // Pending before its time, or a delivery not acked by its deadline during the retry interval.
  if (r.visible_at > now) return MsgStatus::kWaiting;
  return MsgStatus::kReady;
}

}  // namespace chronoq::core
