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
    case EventKind::kTouch:
      return "touch";
    case EventKind::kCount:
      return "count";
    case EventKind::kRelease:
      return "release";
  }
  return "unknown";
}

void ResolveDefaults(NewMessage& m, const EffectiveTopicConfig& topic) {
  if (!m.ttl) m.ttl = topic.ttl;
  if (!m.max_retry) m.max_retry = topic.max_retry;
  m.push = m.callback.has_value() || topic.callback.has_value();
}

Millis RetryIntervalOf(const MessageRecord& r, const EffectiveTopicConfig& topic) {
  if (r.callback && r.callback->retry_interval) return *r.callback->retry_interval;
  return topic.retry_interval;
}

std::optional<Callback> CallbackOf(const MessageRecord& r, const EffectiveTopicConfig& topic) {
  return r.callback ? r.callback.ToOptional() : topic.callback;
}

Millis PushLease(const MessageRecord& r, const EffectiveTopicConfig& topic, Millis margin) {
  const std::optional<Callback> cb = CallbackOf(r, topic);
  return (cb ? cb->timeout : kDefaultCallbackTimeout) + margin;
}

Status CheckAttempt(const MessageRecord& r, int64_t attempt) {
  if (attempt <= 0 || r.retry == attempt) return Status::Ok();
  return InvalidState(
      fmt::format("push attempt {} of message '{}' is over: the message is at attempt {}", attempt,
                  r.msg_id, r.retry));
}

MessageRecord CreateRecord(NewMessage m, TimePoint now, uint64_t seq) {
  MessageRecord r;
  r.topic = std::move(m.topic);
  r.msg_id = std::move(m.msg_id);
  r.payload = std::move(m.payload);
  r.produce_time = now;
  r.trigger_time = m.trigger_time.has_value() ? std::max(*m.trigger_time, now)
                                              : SaturatingAdd(now, std::max(m.delay, Millis(0)));
  r.expire_time = SaturatingAdd(r.trigger_time, m.ttl.value());
  r.max_retry = m.max_retry.value();
  r.retry = 0;
  r.phase = Phase::kPending;
  r.visible_at = r.trigger_time;
  r.seq = seq;
  r.priority = m.priority;
  r.count_trigger = m.count_trigger;
  r.callback = std::move(m.callback);
  r.push = m.push;
  return r;
}

MessageRecord DeadLetterOf(const MessageRecord& ended, const std::string& dead_letter_topic,
                           const EffectiveTopicConfig& dead_letter_config, TimePoint now,
                           uint64_t seq) {
  NewMessage m;
  m.topic = dead_letter_topic;
  m.msg_id = ended.msg_id;
  m.payload = ended.payload;
  m.ttl = dead_letter_config.ttl;
  m.max_retry = dead_letter_config.max_retry;
  m.priority = ended.priority;
  MessageRecord r = CreateRecord(std::move(m), now, seq);
  r.last_error = ended.last_error;
  r.dead_letter = DeadLetter{ended.topic, ended.end_status, ended.retry, ended.ended_at};
  r.callback = ended.callback;  // kept for getMsg and a redrive; never pushed from here
  return r;
}

MessageRecord RedriveOf(const MessageRecord& dead, const EffectiveTopicConfig& source_config,
                        Millis delay, TimePoint now, uint64_t seq) {
  NewMessage m;
  m.topic = dead.dead_letter ? dead.dead_letter->topic : dead.topic;
  m.msg_id = dead.msg_id;
  m.payload = dead.payload;
  m.delay = delay;
  m.ttl = source_config.ttl;
  m.max_retry = source_config.max_retry;
  m.priority = dead.priority;
  m.callback = dead.callback;
  m.push = m.callback.has_value() || source_config.callback.has_value();
  return CreateRecord(std::move(m), now, seq);
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
      if (e.retry_interval < Millis(0)) return InvalidArgument("retry interval must be >= 0");
      out.retry_interval = e.retry_interval;
      out.visible_at = SaturatingAdd(SaturatingAdd(now, e.ack_timeout), e.retry_interval);
      return out;
    }
    case EventKind::kAck: {
      // A delivery past its ack deadline (waiting for its retry interval, or ready) that nobody
      // took again.
      const bool late_ack =
          (s == MsgStatus::kReady || s == MsgStatus::kWaiting) && r.phase == Phase::kDelivered;
      if (s != MsgStatus::kConsuming && !late_ack) {
        return Illegal(r, s, "only a delivered message that has not ended can be acked");
      }
      return Ended(r, MsgStatus::kConsumeOk, now);
    }
    case EventKind::kNack: {
      if (s != MsgStatus::kConsuming) {
        return Illegal(r, s, "only a message being consumed (status 3) can be nacked");
      }
      if (r.retry >= r.max_deliveries()) {
        MessageRecord out = Ended(r, MsgStatus::kRetryExhaust, now);
        if (!e.reason.empty()) out.last_error = std::string(e.reason);
        return out;
      }
      if (e.retry_interval < Millis(0)) return InvalidArgument("retry interval must be >= 0");
      MessageRecord out = r;
      out.phase = Phase::kPending;
      out.retry_interval = Millis(0);
      out.visible_at = SaturatingAdd(now, e.retry_interval);
      if (!e.reason.empty()) out.last_error = std::string(e.reason);
      return out;
    }
    case EventKind::kRelease: {
      if (s != MsgStatus::kConsuming) {
        return Illegal(r, s, "only a message being consumed (status 3) can be released");
      }
      if (e.retry_interval < Millis(0)) return InvalidArgument("retry interval must be >= 0");
      MessageRecord out = r;
      out.phase = Phase::kPending;
      out.retry = r.retry > 0 ? r.retry - 1 : 0;
      out.retry_interval = Millis(0);
      out.visible_at = SaturatingAdd(now, e.retry_interval);
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
    case EventKind::kTouch: {
      if (s != MsgStatus::kConsuming) {
        return Illegal(r, s, "only a message being consumed (status 3) can be touched");
      }
      if (e.ack_timeout <= Millis(0)) return InvalidArgument("ack timeout must be positive");
      MessageRecord out = r;
      out.visible_at = SaturatingAdd(SaturatingAdd(now, e.ack_timeout), r.retry_interval);
      return out;
    }
    case EventKind::kCount: {
      if (s != MsgStatus::kWaiting) {
        return Illegal(r, s, "only a waiting message (status 1) can be counted");
      }
      if (e.count < 1) return InvalidArgument("count must be at least 1");
      MessageRecord out = r;
      out.count = r.count > INT64_MAX - e.count ? INT64_MAX : r.count + e.count;
      if (out.count_trigger > 0 && out.count >= out.count_trigger) out.visible_at = now;
      return out;
    }
  }
  return Internal("unknown event");
}

Result<MessageRecord> ApplyUpdate(const MessageRecord& r, const MessageUpdate& u, TimePoint now) {
  const MsgStatus s = StatusAt(r, now);
  if (s != MsgStatus::kWaiting && s != MsgStatus::kReady) {
    return Illegal(r, s, "only a WAITING or READY message can be updated");
  }
  MessageRecord out = r;
  const Millis ttl = u.ttl.value_or(r.expire_time - r.trigger_time);
  if (u.trigger_time.has_value()) {
    out.trigger_time = std::max(*u.trigger_time, now);
    out.visible_at = out.trigger_time;
    // A READY (or retry-WAITING) message may be a delivery whose ack deadline passed:
    // rescheduled, it is pending again (not a delivery with a new deadline), so it waits, then is
    // ready, like a fresh send.
    out.phase = Phase::kPending;
    out.retry_interval = Millis(0);
  }
  if (u.trigger_time.has_value() || u.ttl.has_value()) {
    out.expire_time = SaturatingAdd(out.trigger_time, ttl);
  }
  if (u.payload.has_value()) out.payload = *u.payload;
  if (u.max_retry.has_value()) out.max_retry = *u.max_retry;
  if (u.priority.has_value()) out.priority = *u.priority;
  return out;
}

}  // namespace chronoq::core
