// The message lifecycle as a pure function: (record, event, now) -> new record or kInvalidState.
// No I/O, no clock reads, no locks; every backend applies the same moves (the Redis backend
// mirrors them in Lua; the contract suite proves they agree). Diagram: docs/lifecycle.md.
//
// Legal moves, by the status at `now` (StatusAt):
// - Deliver: READY -> CONSUMING (retry + 1, deadline now + ack timeout).
// - Ack: CONSUMING, or READY after an ack timeout -> CONSUME_OK.
// - Nack: CONSUMING -> READY at now, or RETRY_EXHAUST on the last delivery.
// - Delete: WAITING, READY, CONSUMING -> DELETE.
// - Finalize: EXPIRE or RETRY_EXHAUST not yet stored -> the same status, stored, ended at its
//   natural end.
// Every other (status, event) pair returns kInvalidState with a sentence saying why.
#pragma once

#include <cstdint>
#include <string>

#include "base/result.h"
#include "base/time.h"
#include "core/message.h"

namespace chronoq::core {

enum class EventKind { kDeliver, kAck, kNack, kDelete, kFinalize };

std::string_view EventName(EventKind k);

struct Event {
  EventKind kind;
  Millis ack_timeout{0};  // kDeliver only; must be > 0
};

// What a producer asked for, after defaults and validation (API.md section 4, sendMsg).
struct NewMessage {
  std::string topic;
  std::string msg_id;
  std::string payload;
  Millis delay{0};        // <= 0 means now
  Millis ttl{0};          // > 0
  int32_t max_retry = 0;  // >= 0
};

// The record of a freshly sent message: WAITING when the trigger time is after `now`, else READY.
MessageRecord CreateRecord(NewMessage m, TimePoint now, uint64_t seq);

// Whether a send with the msgId of `existing` replaces it (it has ended) rather than being
// answered with it (it is in life).
bool Replaceable(const MessageRecord& existing, TimePoint now);

Result<MessageRecord> Apply(const MessageRecord& r, const Event& e, TimePoint now);

}  // namespace chronoq::core
