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
