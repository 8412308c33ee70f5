// Topic: the in-memory state of one topic inside the embedded engine: its in-life messages, the
// visibility index ordered by (visible_at, seq), the expiry index, the retention index of ended
// messages, and the getTopicInfo counts, maintained incrementally (DESIGN.md section 3).
//
// Operation. Counts are kept "as of" processed(): an in-life message counts as ready when its
// visible_at <= processed(), else as waiting (pending, in the bucket of visible_at - processed())
// or consuming (delivered). AdvanceTo(now) moves processed() forward, touching only the messages
// whose class changes (each message crosses each bucket boundary at most once), and finalizes
// messages whose time ran out. Every mutation requires processed() == now, so callers advance
// first. Nothing scans all messages.
//
// Records held here carry no payload (it lives in the store). The owner persists first, then
// applies the change here.
//
// Concurrency: none; the engine's shard lock guards a Topic.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/split_hash_map.h"
#include "core/message.h"
#include "core/topic_info.h"
#include "engine/btree_index.h"

namespace chronoq::engine {

// What AdvanceTo observed, for persistence, monitor statistics and long-poll wake-ups.
struct AdvanceResult {
  std::vector<core::MessageRecord> finalized;  // ended by ttl or used-up deliveries; persist these
  int64_t triggered = 0;                       // waiting messages whose trigger time came
  int64_t ready_gap_sum_ms = 0;                // over `triggered`: processing time - trigger time
  int64_t ready_gap_max_ms = 0;
  int64_t ack_timeouts = 0;   // deliveries whose ack deadline passed
  bool became_ready = false;  // something became consumable
};

class Topic {
 public:
  // `retention`: how long ended records stay readable (end-life-msg-expire-millis).
  Topic(std::string name, TimePoint now, Millis retention);
  Topic(const Topic&) = delete;
  Topic& operator=(const Topic&) = delete;

  const std::string& name() const { return name_; }
  TimePoint processed() const { return processed_; }

  // Moves processed() to `now` (no-op when now <= processed()).
  void AdvanceTo(TimePoint now, AdvanceResult* out);

  // The in-life record with this id, or nullptr. Records held here have no payload and no topic
  // (the Topic knows its name); use Copy() for a complete one.
  const core::MessageRecord* FindLive(const std::string& msg_id) const;
  // A copy of a record held here, with its topic filled in.
  core::MessageRecord Copy(const core::MessageRecord& live) const;

  // REQUIRES: processed() == now for all mutations below.
  // Adds an in-life record (payload dropped). REQUIRES: no live record with its id.
  void Insert(core::MessageRecord rec, TimePoint now);
  // Replaces the live record with the same id by `rec`: re-indexed when still in life, moved to
  // the retention index (purged at ended_at + retention) when ended.
  void Update(core::MessageRecord rec, TimePoint now);
  // Removes the live record with this id without keeping it for retention (deleteMsg release).
  void Forget(const std::string& msg_id, TimePoint now);

  // Up to `max` records at the head of the visibility index with visible_at <= now, in order
  // (held records: see FindLive).
  // After AdvanceTo(now) they are all READY.
  std::vector<const core::MessageRecord*> DueHead(TimePoint now, size_t max) const;

  // Retention of ended records (records live in the store).
  // The time an ended record stops being readable and is purged.
  TimePoint PurgeTime(const core::MessageRecord& ended) const;
  void AddRetention(const core::MessageRecord& ended);
  void RemoveRetention(const core::MessageRecord& ended);
  struct Purge {
    std::string msg_id;
    uint64_t seq;
  };
  // Removes and returns retention entries due at or before `now`.
  std::vector<Purge> PopPurgeable(TimePoint now);

  // Counts as of processed(). Call AdvanceTo(now) first for counts true at `now`.
  core::TopicInfo Info() const;

  size_t live_count() const { return live_.size(); }
  size_t retained_count() const { return retained_.size(); }
  TimePoint last_active() const { return last_active_; }
  void Touch(TimePoint now) {
    if (now > last_active_) last_active_ = now;
  }

  // The earliest future time at which AdvanceTo or PopPurgeable has work, or when an empty topic
  // turns inactive (a past inactivity time counts only while nothing is retained, so that it is
  // not due again and again); kTimeMax when nothing is pending.
  TimePoint NextDue(Millis inactive_after) const;

 private:
  // A visibility-index entry: the record, plus what time passing needs to know about it, so
  // that walking due entries never touches the records themselves.
  struct VisEntry {
    core::MessageRecord* rec = nullptr;
    bool pending = false;   // phase kPending (else kDelivered)
    bool last_try = false;  // deliveries used up: it ends when visible_at passes
  };
  static VisEntry EntryOf(core::MessageRecord* r);

  // Adds (sign = +1) or removes (-1) the contribution to the counts, as of `at`, of an entry
  // visible at `t`.
  void Count(TimePoint t, bool pending, TimePoint at, int sign);
  void Count(const core::MessageRecord& r, TimePoint at, int sign) {
    Count(r.visible_at, r.phase == core::Phase::kPending, at, sign);
  }
  void Index(core::MessageRecord* r);    // into vis_ and exp_
  void Unindex(core::MessageRecord* r);  // out of vis_ and exp_
  void Erase(core::MessageRecord* r);    // from live_ and both indexes; counts untouched
  void Finalize(core::MessageRecord* r, AdvanceResult* out);
  void ShiftBuckets(TimePoint from, TimePoint to);

  std::string name_;
  TimePoint processed_;
  TimePoint last_active_;
  // msgId -> in-life record; split so that growing it never rehashes everything at once.
  base::SplitHashMap<std::unique_ptr<core::MessageRecord>, 64> live_;
  BTreeIndex<VisEntry> vis_;              // (visible_at, seq) of every in-life record
  BTreeIndex<core::MessageRecord*> exp_;  // (expire_time, seq) of every in-life record
  BTreeIndex<std::string> retained_;      // (purge_at, seq) -> msg id of ended records
  const Millis retention_;

  // Invariant: counts equal the classification of every live record as of processed_.
  int64_t waiting_ = 0;
  int64_t ready_ = 0;
  int64_t consuming_ = 0;
  std::array<int64_t, core::kBucketCount> buckets_{};
};

}  // namespace chronoq::engine
