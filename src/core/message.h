// MessageRecord: the persisted state of one message, and its statuses (docs/lifecycle.md).
//
// The record stores a phase (pending, delivered, ended) plus absolute times; the status a client
// sees (1..7) is derived from the record and the current time by StatusAt(), so it is always true
// at the instant it is read even when no background work has run (API.md section 5).
// Plain value type; no I/O, no clock, no locks.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/time.h"
#include "core/callback.h"

namespace chronoq::core {

// Wire values of API.md section 5.
enum class MsgStatus : int {
  kWaiting = 1,       // trigger time not reached
  kReady = 2,         // consumable
  kConsuming = 3,     // delivered, ack deadline not passed
  kConsumeOk = 4,     // acked
  kExpire = 5,        // ttl passed, never delivered
  kRetryExhaust = 6,  // delivered at least once, then ttl passed or deliveries used up
  kDelete = 7,        // deleted
};

// "WAITING", "READY", ...
std::string_view StatusName(MsgStatus s);
inline constexpr bool InLife(MsgStatus s) { return static_cast<int>(s) <= 3; }

enum class Phase : uint8_t {
  kPending = 0,    // never delivered, or nacked: consumable from visible_at on
  kDelivered = 1,  // handed to a consumer; visible_at is the ack deadline
  kEnded = 2,      // end_status says how; ended_at says when
};

// On a dead letter (API-EXTENSIONS.md section 4): where and how the message died.
struct DeadLetter {
  std::string topic;                      // the source topic
  MsgStatus status = MsgStatus::kExpire;  // kExpire or kRetryExhaust
  int64_t retry = 0;                      // deliveries made in the source topic
  TimePoint end_time{};                   // when it ended there
  bool operator==(const DeadLetter&) const = default;
};

struct MessageRecord {
  std::string topic;
  std::string msg_id;
  std::string payload;
  TimePoint produce_time{};
  TimePoint trigger_time{};
  TimePoint expire_time{};  // trigger_time + ttl, saturated
  int32_t max_retry = 0;    // at most max_retry + 1 deliveries
  int32_t priority = 0;     // 0..9; higher is delivered first among consumable messages
  int64_t retry = 0;        // deliveries so far
  Phase phase = Phase::kPending;
  MsgStatus end_status = MsgStatus::kWaiting;  // meaningful only when phase == kEnded
  // Depends on phase. kPending: when it is or became consumable (its trigger time, or the time
  // of the nack plus the retry interval). kDelivered: when it is consumable again if not acked:
  // the ack deadline plus retry_interval. kEnded: unused.
  TimePoint visible_at{};
  TimePoint ended_at{};  // kEnded only: when it ended (start of its retention period)
  uint64_t seq = 0;      // orders messages with equal visible_at; unique within a topic
  // Count trigger (API-EXTENSIONS.md section 1): a waiting message becomes consumable when
  // `count` (raised by countMsg) reaches `count_trigger`, or at its trigger time. 0: none.
  int64_t count_trigger = 0;
  int64_t count = 0;
  std::string last_error;  // the last nack reason (later: push failure); empty: none
  // kDelivered: the topic's retry interval at the delivery; a delivery not acked by its deadline
  // (visible_at - retry_interval) waits this long before it is consumable again (status 1
  // meanwhile). 0 otherwise.
  Millis retry_interval{0};
  std::optional<DeadLetter> dead_letter{};  // set on a message a dead-letter topic received
  // Push delivery (docs/push.md). `callback`: the message's own target (absent: its topic's, at
  // each attempt). `push`: the message is in its topic's push lane: chronoq delivers it to the
  // callback and never hands it to pullers; decided at the send (its own callback, or its
  // topic's at that time) and kept for life. For a push-lane message, `retry` counts attempts.
  CallbackRef callback{};
  bool push = false;

  // kDelivered: the ack deadline.
  TimePoint ack_deadline() const { return visible_at - retry_interval; }

  int64_t max_deliveries() const { return static_cast<int64_t>(max_retry) + 1; }
  bool operator==(const MessageRecord&) const = default;
};

// The status at `now`: the stored end status when ended; otherwise derived from the times.
MsgStatus StatusAt(const MessageRecord& r, TimePoint now);

// For an in-life record: the time it ends by itself if nobody acts on it, which is the earlier of
// its expire time and, when its deliveries are used up, its visible_at (the last ack deadline).
// kTimeMax-like saturation applies; for an ended record, its ended_at.
TimePoint NaturalEndTime(const MessageRecord& r);

// Copies every field of `src` but topic, msg_id and payload into `dst`.
void AssignScalars(MessageRecord& dst, const MessageRecord& src);
// A copy of `r` without its payload (which may be megabytes), for indexes and metadata writes.
MessageRecord CopyWithoutPayload(const MessageRecord& r);

// A message plus its status at the time it was read: what the API returns.
struct Message {
  MessageRecord record;
  MsgStatus status = MsgStatus::kWaiting;
};

}  // namespace chronoq::core
