#include "core/state_machine.h"

#include <fmt/format.h>

#include <algorithm>

namespace chronoq::core {
namespace {

MessageRecord Ended(const MessageRecord& r, MsgStatus status, TimePoint at) {
  MessageRecord out = r;
  out.phase = Phase::kEnded;
  out.end_status = status;
  out.ended_at = at;
  return out;
}

Status Illegal(const MessageRecord& r, MsgStatus s, std::string_view why) {
  return InvalidState(fmt::format("message '{}' is {} (status {}); {}", r.msg_id, StatusName(s),
                                  static_cast<int>(s), why));
}

}  // namespace

std::string_view EventName(EventKind k) {
  switch (k) {
    case EventKind::kDeliver:
      return "deliver";
    case EventKind::kAck:
      return "ack";
    case EventKind::kNack:
      return "nack";
    case EventKind::kDelete:
      return "delete";
    case EventKind::kFinalize:
      return "finalize";
  }
  return "unknown";
}

MessageRecord CreateRecord(NewMessage m, TimePoint now, uint64_t seq) {
  MessageRecord r;
  r.topic = std::move(m.topic);
  r.msg_id = std::move(m.msg_id);
  r.payload = std::move(m.payload);
  r.produce_time = now;
  r.trigger_time = SaturatingAdd(now, std::max(m.delay, Millis(0)));
  r.expire_time = SaturatingAdd(r.trigger_time, m.ttl);
  r.max_retry = m.max_retry;
  r.retry = 0;
  r.phase = Phase::kPending;
  r.visible_at = r.trigger_time;
  r.seq = seq;
  return r;
}

bool Replaceable(const MessageRecord& existing, TimePoint now) {
  return !InLife(StatusAt(existing, now));
}

Result<MessageRecord> Apply(const MessageRecord& r, const Event& e, TimePoint now) {
  const MsgStatus s = StatusAt(r, now);
  switch (e.kind) {
    case EventKind::kDeliver: {
      if (s != MsgStatus::kReady) return Illegal(r, s, "only a READY message can be delivered");
      if (e.ack_timeout <= Millis(0)) return InvalidArgument("ack timeout must be positive");
      MessageRecord out = r;
      out.phase = Phase::kDelivered;
      out.retry = r.retry + 1;
      out.visible_at = SaturatingAdd(now, e.ack_timeout);
      return out;
    }
    case EventKind::kAck: {
      const bool late_ack = s == MsgStatus::kReady && r.phase == Phase::kDelivered;
      if (s != MsgStatus::kConsuming && !late_ack) {
        return Illegal(r, s, "only a delivered message that has not ended can be acked");
      }
      return Ended(r, MsgStatus::kConsumeOk, now);
    }
    case EventKind::kNack: {
      if (s != MsgStatus::kConsuming) {
        return Illegal(r, s, "only a message being consumed (status 3) can be nacked");
      }
      if (r.retry >= r.max_deliveries()) return Ended(r, MsgStatus::kRetryExhaust, now);
      MessageRecord out = r;
      out.phase = Phase::kPending;
      out.visible_at = now;
      return out;
    }
    case EventKind::kDelete: {
      if (!InLife(s)) return Illegal(r, s, "it has already ended");
      return Ended(r, MsgStatus::kDelete, now);
    }
    case EventKind::kFinalize: {
      if (r.phase == Phase::kEnded || InLife(s)) {
        return Illegal(r, s, "only an in-life record whose time has run out can be finalized");
      }
      return Ended(r, s, NaturalEndTime(r));
    }
  }
  return Internal("unknown event");
}

}  // namespace chronoq::core
