#include "core/history.h"

#include <fmt/format.h>

#include <cstring>

namespace chronoq::core {
namespace {

void Entry(std::vector<HistoryEntry>& out, TimePoint t, HistoryEvent e, int64_t attempt,
           std::string reason, std::string_view node) {
  out.push_back(HistoryEntry{t, e, attempt, std::move(reason), std::string(node)});
}

// The entries of an end (after.phase == kEnded; before in life).
void Ended(std::vector<HistoryEntry>& out, const MessageRecord& before, const MessageRecord& after,
           std::string_view node, std::string_view dead_letter_topic) {
  const TimePoint at = after.ended_at;
  // A delivery whose deadline had passed before the end (and was not redelivered; a late ack
  // too: HistoryAsOf showed the timeout before it came).
  if (before.phase == Phase::kDelivered && before.ack_deadline() <= at) {
    Entry(out, before.ack_deadline(), HistoryEvent::kTimedOut, before.retry, "", node);
  }
  switch (after.end_status) {
    case MsgStatus::kConsumeOk:
      Entry(out, at, HistoryEvent::kAcked, after.retry, "", node);
      return;
    case MsgStatus::kDelete:
      Entry(out, at, HistoryEvent::kDeleted, after.retry, "", node);
      return;
    case MsgStatus::kExpire:
    case MsgStatus::kRetryExhaust: {
      if (before.phase == Phase::kDelivered && before.ack_deadline() > at) {
        // Ended by the nack (or failed push) of its last delivery.
        Entry(out, at, after.push ? HistoryEvent::kPushFailed : HistoryEvent::kNacked, after.retry,
              after.last_error, node);
      }
      Entry(out, at,
            after.end_status == MsgStatus::kExpire ? HistoryEvent::kExpired
                                                   : HistoryEvent::kRetryExhausted,
            after.retry, "", node);
      if (!dead_letter_topic.empty()) {
        Entry(out, at, HistoryEvent::kDeadLettered, after.retry,
              fmt::format("to {}", dead_letter_topic), node);
      }
      return;
    }
    default:
      return;
  }
}

}  // namespace

Status HistoryOff(std::string_view topic) {
  return Status(Errc::kInvalidArgument,
                fmt::format("topic '{}' does not record message history (its configuration has "
                            "history=false); setTopicConfig with history=true records the changes "
                            "from then on",
                            topic));
}

std::string_view HistoryEventName(HistoryEvent e) {
  switch (e) {
    case HistoryEvent::kSent:
      return "sent";
    case HistoryEvent::kUpdated:
      return "updated";
    case HistoryEvent::kCounted:
      return "counted";
    case HistoryEvent::kTouched:
      return "touched";
    case HistoryEvent::kDelivered:
      return "delivered";
    case HistoryEvent::kNacked:
      return "nacked";
    case HistoryEvent::kTimedOut:
      return "timedOut";
    case HistoryEvent::kPushFailed:
      return "pushFailed";
    case HistoryEvent::kReleased:
      return "released";
    case HistoryEvent::kAcked:
      return "acked";
    case HistoryEvent::kDeleted:
      return "deleted";
    case HistoryEvent::kExpired:
      return "expired";
    case HistoryEvent::kRetryExhausted:
      return "retryExhausted";
    case HistoryEvent::kDeadLettered:
      return "deadLettered";
    case HistoryEvent::kRedriven:
      return "redriven";
  }
  return "unknown";
}

std::vector<HistoryEntry> HistoryOf(const MessageRecord* before, const MessageRecord& after,
                                    TimePoint now, std::string_view node,
                                    std::string_view dead_letter_topic, HistoryCause cause) {
  std::vector<HistoryEntry> out;
  if (before == nullptr) {
    if (cause == HistoryCause::kRedriven) {
      Entry(out, now, HistoryEvent::kRedriven, after.retry, "", node);
    } else if (after.dead_letter) {
      Entry(out, now, HistoryEvent::kDeadLettered, after.retry,
            fmt::format("from {}", after.dead_letter->topic), node);
    } else {
      Entry(out, now, HistoryEvent::kSent, after.retry, "", node);
    }
    return out;
  }
  if (after.phase == Phase::kEnded) {
    if (before->phase != Phase::kEnded) Ended(out, *before, after, node, dead_letter_topic);
    return out;
  }
  if (after.phase == Phase::kDelivered) {
    if (after.retry > before->retry) {
      if (before->phase == Phase::kDelivered) {
        Entry(out, before->ack_deadline(), HistoryEvent::kTimedOut, before->retry, "", node);
      }
      Entry(out, now, HistoryEvent::kDelivered, after.retry, "", node);
    } else if (after.visible_at != before->visible_at) {
      Entry(out, now, HistoryEvent::kTouched, after.retry, "", node);
    }
    return out;
  }
  // after is pending.
  if (before->phase == Phase::kDelivered) {
    if (after.retry < before->retry) {
      Entry(out, now, HistoryEvent::kReleased, after.retry, "", node);
    } else {
      Entry(out, now, after.push ? HistoryEvent::kPushFailed : HistoryEvent::kNacked, after.retry,
            after.last_error, node);
    }
  } else if (after.count != before->count) {
    Entry(out, now, HistoryEvent::kCounted, after.retry, fmt::format("count {}", after.count),
          node);
  } else {
    Entry(out, now, HistoryEvent::kUpdated, after.retry, "", node);
  }
  return out;
}

namespace {

void Put64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void PutStr(std::string& out, std::string_view s) {
  Put64(out, s.size());
  out.append(s);
}
bool Get64(std::string_view& in, uint64_t* v) {
  if (in.size() < 8) return false;
  uint64_t x = 0;
  for (int i = 0; i < 8; ++i) x |= static_cast<uint64_t>(static_cast<uint8_t>(in[i])) << (8 * i);
  in.remove_prefix(8);
  *v = x;
  return true;
}
bool GetStr(std::string_view& in, std::string* s) {
  uint64_t n = 0;
  if (!Get64(in, &n) || in.size() < n) return false;
  s->assign(in.data(), n);
  in.remove_prefix(n);
  return true;
}

constexpr char kHistoryFormat = 1;

}  // namespace

std::string EncodeHistory(const StoredHistory& h) {
  std::string out;
  out.push_back(kHistoryFormat);
  Put64(out, h.seq);
  Put64(out, h.entries.size());
  for (const HistoryEntry& e : h.entries) {
    Put64(out, static_cast<uint64_t>(ToEpochMs(e.time)));
    out.push_back(static_cast<char>(e.event));
    Put64(out, static_cast<uint64_t>(e.attempt));
    PutStr(out, e.reason);
    PutStr(out, e.node);
  }
  return out;
}

Result<StoredHistory> DecodeHistory(std::string_view in) {
  auto corrupt = [] { return Status(Errc::kCorruption, "a stored message history is corrupt"); };
  if (in.empty() || in[0] != kHistoryFormat) return corrupt();
  in.remove_prefix(1);
  StoredHistory h;
  uint64_t n = 0;
  if (!Get64(in, &h.seq) || !Get64(in, &n) || n > in.size()) return corrupt();
  h.entries.reserve(n);
  for (uint64_t i = 0; i < n; ++i) {
    HistoryEntry e;
    uint64_t t = 0;
    uint64_t attempt = 0;
    if (!Get64(in, &t) || in.empty()) return corrupt();
    e.time = FromEpochMs(static_cast<int64_t>(t));
    e.event = static_cast<HistoryEvent>(in[0]);
    in.remove_prefix(1);
    if (!Get64(in, &attempt) || !GetStr(in, &e.reason) || !GetStr(in, &e.node)) return corrupt();
    e.attempt = static_cast<int64_t>(attempt);
    h.entries.push_back(std::move(e));
  }
  if (!in.empty()) return corrupt();
  return h;
}

std::vector<HistoryEntry> HistoryAsOf(std::vector<HistoryEntry> stored, const MessageRecord& m,
                                      TimePoint now, std::string_view node) {
  const TimePoint deadline = m.ack_deadline();
  if (m.phase == Phase::kDelivered && deadline <= now && deadline <= NaturalEndTime(m)) {
    Entry(stored, deadline, HistoryEvent::kTimedOut, m.retry, "", node);
  }
  return stored;
}

StoredHistory AppendHistory(std::optional<StoredHistory> stored, uint64_t seq,
                            std::vector<HistoryEntry> added, int64_t max_entries) {
  StoredHistory h;
  if (stored && stored->seq == seq) h = std::move(*stored);
  h.seq = seq;
  for (HistoryEntry& e : added) h.entries.push_back(std::move(e));
  const size_t max = static_cast<size_t>(std::max<int64_t>(max_entries, 1));
  if (h.entries.size() > max) {
    h.entries.erase(h.entries.begin(),
                    h.entries.begin() + static_cast<std::ptrdiff_t>(h.entries.size() - max));
  }
  return h;
}

}  // namespace chronoq::core
