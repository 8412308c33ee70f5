// Message history (API-EXTENSIONS.md section 8, getMsgHistory): what happened to one message,
// entry by entry, for topics whose configuration has `history` on. The entries of a change are
// derived from the record before and after it (HistoryOf), so every backend records the same
// entries for the same change; the backend stores them with the message, in the write that makes
// the change, bounded per message (oldest dropped first), and deletes them with the record.
//
// What the records cannot show is not recorded when it happens but when it is next observed: an
// ack deadline that passes writes nothing (DESIGN.md section 3), so "timed out" is recorded, with
// the deadline as its time, by the next delivery or end of that message (a late ack included).
// Until then getMsgHistory adds it to its answer (HistoryAsOf), so a reader sees it as soon as
// the deadline has passed, with the same time and attempt the write will have.
//
// Plain value types and pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "base/time.h"
#include "core/message.h"

namespace chronoq::core {

enum class HistoryEvent : uint8_t {
  kSent = 1,
  kUpdated = 2,
  kCounted = 3,
  kTouched = 4,
  kDelivered = 5,   // attempt: the delivery's number (1 = first)
  kNacked = 6,      // reason: the nack's reason
  kTimedOut = 7,    // the ack deadline of delivery `attempt` passed (time: the deadline)
  kPushFailed = 8,  // a push attempt failed; reason: its error
  kReleased = 9,    // a push attempt was undone without counting (its lease was released)
  kAcked = 10,
  kDeleted = 11,
  kExpired = 12,         // the ttl passed before a delivery
  kRetryExhausted = 13,  // the ttl passed after a delivery, or the deliveries were used up
  kDeadLettered = 14,    // reason: "to <topic>" (the source) or "from <topic>" (the dead letter)
  kRedriven = 15,        // back in its source topic; reason: "from <dead-letter topic>"
};
// getMsgHistory's refusal of a topic whose effective configuration has history off
// (kInvalidArgument, the same sentence on every backend).
Status HistoryOff(std::string_view topic);

// "sent", "updated", "counted", "touched", "delivered", "nacked", "timedOut", "pushFailed",
// "released", "acked", "deleted", "expired", "retryExhausted", "deadLettered", "redriven".
std::string_view HistoryEventName(HistoryEvent e);

struct HistoryEntry {
  TimePoint time{};
  HistoryEvent event = HistoryEvent::kSent;
  int64_t attempt = 0;  // deliveries (push attempts) so far after the event
  std::string reason;   // empty: none
  std::string node;     // the node that wrote it
  bool operator==(const HistoryEntry&) const = default;
};

// What the write of one change adds. `before` null: a new message (sent, or `redriven` when
// the caller says so; a record with a dead_letter is a dead letter arriving). `dead_letter_topic`:
// where the topic sends its expired and exhausted messages ("" none).
enum class HistoryCause : uint8_t { kAuto, kRedriven };
std::vector<HistoryEntry> HistoryOf(const MessageRecord* before, const MessageRecord& after,
                                    TimePoint now, std::string_view node,
                                    std::string_view dead_letter_topic,
                                    HistoryCause cause = HistoryCause::kAuto);

// The stored form: the entries of one message, oldest first. `seq` is the message's (a newer
// message under the same msgId starts a new history).
struct StoredHistory {
  uint64_t seq = 0;
  std::vector<HistoryEntry> entries;
};
std::string EncodeHistory(const StoredHistory& h);
// getMsgHistory's answer for the message `m` at `now`: its stored entries, plus the "timed out"
// its next write will record when its delivery's ack deadline has passed (and came before its
// natural end); that entry names `node` (the reader's).
std::vector<HistoryEntry> HistoryAsOf(std::vector<HistoryEntry> stored, const MessageRecord& m,
                                      TimePoint now, std::string_view node);
Result<StoredHistory> DecodeHistory(std::string_view in);
// `stored` (of the message `seq`; a history of another seq is dropped) plus `added`, keeping the
// newest `max_entries` (>= 1).
StoredHistory AppendHistory(std::optional<StoredHistory> stored, uint64_t seq,
                            std::vector<HistoryEntry> added, int64_t max_entries);

}  // namespace chronoq::core
