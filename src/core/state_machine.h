// The message lifecycle as a pure function: (record, event, now) -> new record or kInvalidState.
// No I/O, no clock reads, no locks; every backend applies the same moves (the Redis backend
// mirrors them in Lua; the contract suite proves they agree). Diagram: docs/lifecycle.md.
//
// Legal moves, by the status at `now` (StatusAt):
// - Deliver: READY -> CONSUMING (retry + 1, deadline now + ack timeout; not acked by then, it is
//   WAITING for the retry interval, then READY).
// - Ack: CONSUMING, or a delivery past its ack deadline not yet delivered again -> CONSUME_OK.
// - Nack: CONSUMING -> READY at now + retry interval (WAITING until then), or RETRY_EXHAUST on
//   the last delivery.
// - Delete: WAITING, READY, CONSUMING -> DELETE.
// - Finalize: EXPIRE or RETRY_EXHAUST not yet stored -> the same status, stored, ended at its
//   natural end.
// - Release: CONSUMING -> READY at now + retry interval (WAITING until then), the delivery not
//   counted (retry - 1): a push attempt that never started because its target was busy.
// - Touch: CONSUMING -> CONSUMING with the ack deadline now + ack timeout (touchMsg).
// - Count: WAITING -> count + n; READY at now when count reaches count_trigger (countMsg).
// - ApplyUpdate (updateMsg): WAITING or READY -> new trigger time / ttl / maxRetry / priority.
// Every other (status, event) pair returns kInvalidState with a sentence saying why.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/result.h"
#include "base/time.h"
#include "core/message.h"
#include "core/topic_config.h"

namespace chronoq::core {

enum class EventKind { kDeliver, kAck, kNack, kDelete, kFinalize, kTouch, kCount, kRelease };

std::string_view EventName(EventKind k);

struct Event {
  EventKind kind;
  Millis ack_timeout{0};      // kDeliver and kTouch; must be > 0
  int64_t count = 0;          // kCount: added to the count; must be >= 1
  std::string_view reason{};  // kNack: kept as last_error when not empty
  // kDeliver and kNack: the topic's retry interval (>= 0): how long a nacked or timed-out
  // delivery waits before it is consumable again (RetryIntervalOf). kRelease: the back-off.
  Millis retry_interval{0};
};

// What a producer asked for, after defaults and validation (API.md section 4, sendMsg).
struct NewMessage {
  std::string topic;
  std::string msg_id;
  std::string payload;
  Millis delay{0};  // <= 0 means now; ignored when trigger_time is set
  // Absent: the topic's (core/topic_config.h), resolved by the backend with ResolveDefaults.
  std::optional<Millis> ttl{};         // > 0
  std::optional<int32_t> max_retry{};  // >= 0
  // Extensions (API-EXTENSIONS.md section 2).
  std::optional<TimePoint> trigger_time{};  // absolute; a past time means now
  int32_t priority = 0;                     // 0..9
  int64_t count_trigger = 0;                // >= 0; 0: none
  CallbackRef callback{};                   // validated (core::ValidateCallback)
  bool push = false;                        // set by ResolveDefaults: the push lane
};

// Fills the ttl and maxRetry a message left out from its topic's configuration, and decides its
// lane: push when it has a callback or its topic has one now.
void ResolveDefaults(NewMessage& m, const EffectiveTopicConfig& topic);

// Push delivery (docs/push.md).
// The retry interval of `r`'s failed deliveries: its own callback's, else the topic's.
Millis RetryIntervalOf(const MessageRecord& r, const EffectiveTopicConfig& topic);
// The callback an attempt of push-lane message `r` goes to: its own, else its topic's (absent:
// neither has one; the attempt fails).
std::optional<Callback> CallbackOf(const MessageRecord& r, const EffectiveTopicConfig& topic);
// The lease of one push attempt of `r` (its ack timeout): the callback's timeout (the default
// when it has none) plus `margin`.
Millis PushLease(const MessageRecord& r, const EffectiveTopicConfig& topic, Millis margin);
// How long a released push waits before it is due again.
inline constexpr Millis kReleaseBackoff = Millis(50);
// An ack or nack that names an attempt (> 0) applies only while `r` is in that attempt (its
// `retry` equals it): the outcome of an attempt whose lease ran out, after which another attempt
// took the message, changes nothing (kInvalidState). attempt 0: no check.
Status CheckAttempt(const MessageRecord& r, int64_t attempt);

// The record of a freshly sent message: WAITING when the trigger time is after `now`, else READY.
// REQUIRES: ttl and max_retry set (ResolveDefaults).
MessageRecord CreateRecord(NewMessage m, TimePoint now, uint64_t seq);

// Dead letters (API-EXTENSIONS.md section 4). The message `dead_letter_topic` receives when
// `ended` (status 5 or 6) ends in a topic that names it: same msgId, payload, priority and last
// error, consumable at `now`, with the dead-letter topic's ttl and maxRetry, and dead_letter set.
// It keeps `ended`'s own callback (docs/push.md) but is in the pull lane whatever the dead-letter
// topic's configuration: dead letters wait for pullers and redrive, never for a push.
MessageRecord DeadLetterOf(const MessageRecord& ended, const std::string& dead_letter_topic,
                           const EffectiveTopicConfig& dead_letter_config, TimePoint now,
                           uint64_t seq);
// The message redriveMsg sends back to the source topic of `dead` (its dead_letter.topic): a new
// message (retry 0) with the same msgId, payload, priority and own callback, the source topic's
// ttl and maxRetry, consumable after `delay` (<= 0: now); in the push lane when it has a callback
// or the source topic has one now (as a send would be, ResolveDefaults).
MessageRecord RedriveOf(const MessageRecord& dead, const EffectiveTopicConfig& source_config,
                        Millis delay, TimePoint now, uint64_t seq);

// The fields updateMsg may change; absent ones stay.
struct MessageUpdate {
  std::optional<TimePoint> trigger_time;  // <= now: consumable at once ("trigger now")
  std::optional<std::string> payload;
  std::optional<Millis> ttl;  // > 0: the new expire time is the trigger time + ttl
  std::optional<int32_t> max_retry;
  std::optional<int32_t> priority;
};

// updateMsg on a WAITING or READY message (else kInvalidState naming the status). A new trigger
// time moves visible_at (to now when it is not in the future); a new ttl counts from the
// (possibly new) trigger time; when only the trigger time changes, the ttl is kept. The payload
// is replaced when given.
Result<MessageRecord> ApplyUpdate(const MessageRecord& r, const MessageUpdate& u, TimePoint now);

// Whether a send with the msgId of `existing` replaces it (it has ended) rather than being
// answered with it (it is in life).
bool Replaceable(const MessageRecord& existing, TimePoint now);

Result<MessageRecord> Apply(const MessageRecord& r, const Event& e, TimePoint now);

}  // namespace chronoq::core
