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

MessageRecord CopyWithoutPayload(const MessageRecord& r) {
  MessageRecord out;
  out.topic = r.topic;
  out.msg_id = r.msg_id;
  out.produce_time = r.produce_time;
  out.trigger_time = r.trigger_time;
  out.expire_time = r.expire_time;
  out.max_retry = r.max_retry;
  out.retry = r.retry;
  out.phase = r.phase;
  out.end_status = r.end_status;
  out.visible_at = r.visible_at;
  out.ended_at = r.ended_at;
  out.seq = r.seq;
  // A new field must be copied above; this trips when the record changes size.
  static_assert(sizeof(MessageRecord) == 3 * sizeof(std::string) + 8 * 3 + 8 + 8 + 8 + 8 + 8 + 8,
                "MessageRecord changed: update CopyWithoutPayload");
  return out;
}

TimePoint NaturalEndTime(const MessageRecord& r) {
  if (r.phase == Phase::kEnded) return r.ended_at;
  TimePoint end = r.expire_time;
  if (r.retry >= r.max_deliveries()) end = std::min(end, r.visible_at);
  return end;
}

MsgStatus StatusAt(const MessageRecord& r, TimePoint now) {
  if (r.phase == Phase::kEnded) return r.end_status;
  if (now >= NaturalEndTime(r)) return r.retry == 0 ? MsgStatus::kExpire : MsgStatus::kRetryExhaust;
  if (r.visible_at > now) {
    return r.phase == Phase::kPending ? MsgStatus::kWaiting : MsgStatus::kConsuming;
  }
  return MsgStatus::kReady;
}

}  // namespace chronoq::core
