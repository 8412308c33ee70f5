// Topic: the in-memory state of one topic inside the embedded engine (DESIGN.md section 3,
// docs/storage-format.md): the in-life messages near enough to be held in memory, indexed by
// (visible_at, seq) and by expiry; a histogram of the waiting messages that are further away and
// live only on disk; and the getTopicInfo counts over both, maintained incrementally.
//
// Priority. Each priority level (0..9) has its own visibility index, created when a record of that
// level is first held, so a topic that uses only priority 0 has one index, as before. Pull order is
// priority descending, then (visible_at, seq): the head is found by merging the levels from 9 down
// (PeekReady). Nothing moves between indexes when a trigger time or an ack deadline comes.
//
// Lanes (docs/push.md). A push-lane record (MessageRecord::push, decided at the send and kept for
// life) lives in ten more levels, 10..19 (its priority + 10): PeekReady of the pull lane merges
// 9..0 and never sees it, that of the push lane merges 19..10. Everything else (counts, expiry,
// retry intervals, the far tier, NextDue) is shared by both lanes, unchanged; AdvanceTo tells
// which lane had something become consumable.
//
// Tiers. Every delivered message and every pending message whose (visible_at, seq) is before the
// load cursor is held here (the "near" tier). Pending messages at or after the cursor are "far":
// only their trigger times are kept, as a multiset of milliseconds (FarTimes: about four bytes
// per message whatever the spread of trigger times, exact to the millisecond). The owner moves the
// cursor forward and loads far messages in time order as they come near (LoadFar), so that nothing
// due is ever far.
//
// Counts are kept "as of" processed(): a message counts as ready when its visible_at <=
// processed(), else as waiting (pending, in the bucket of visible_at - processed()) or consuming
// (delivered). AdvanceTo(now) moves processed() forward, touching only the messages (and
// histogram slots) whose class changes, and finalizes near messages whose time ran out. Every
// mutation requires processed() == now, so callers advance first. Nothing scans all messages.
//
// Records held here carry no topic name (Copy() adds it). A payload of at most kHeldPayloadBytes
// given with a record is kept with it (a burst's pull then reads no payload from the store); a
// larger one, or none, is dropped and read from the store when needed. An empty held payload
// means "read it": a record is only ever given with its current payload or none. The owner
// persists first (or queues the write), then applies the change here.
//
// Concurrency: none; the engine's shard lock guards a Topic.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/split_hash_map.h"
#include "core/message.h"
#include "core/topic_info.h"
#include "engine/btree_index.h"
#include "engine/far_times.h"

namespace chronoq::engine {

// A message that ended by itself: its record before (as held) and after (ended, with topic).
struct EndedByTime {
  core::MessageRecord before;
  core::MessageRecord after;
};

// The largest payload a held record keeps (the Topic's comment; docs/benchmarks.md, "Fourth
// session: bursts").
inline constexpr size_t kHeldPayloadBytes = 256;

inline constexpr int kPriorityLevels = 10;           // priorities 0..9
inline constexpr int kLevels = 2 * kPriorityLevels;  // the pull lane's 0..9, the push lane's 10..19

// Which levels a walk in pull order covers: the pull lane's, the push lane's, or both (the push
// lane first: 19..0).
enum class Lane { kPull, kPush, kBoth };

// A position in pull order: level descending, then (visible_at, seq) ascending. The level of a
// record is its priority in the pull lane, its priority + 10 in the push lane.
struct PullPosition {
  int32_t level = kLevels - 1;
  IndexKey key{kTimeMin, 0};
};

// What AdvanceTo observed, for persistence, monitor statistics and long-poll wake-ups.
struct AdvanceResult {
  std::vector<EndedByTime> finalized;  // ended by ttl or used-up deliveries; persist these
  int64_t triggered = 0;               // waiting messages whose trigger time came
  int64_t ready_gap_sum_ms = 0;        // over `triggered`: processing time - trigger time
  int64_t ready_gap_max_ms = 0;
  int64_t ack_timeouts = 0;        // deliveries whose ack deadline passed
  bool became_ready = false;       // something of the pull lane became consumable
  bool became_push_ready = false;  // something of the push lane became consumable
};

class Topic {
 public:
  Topic(std::string name, TimePoint now);
  Topic(const Topic&) = delete;
  Topic& operator=(const Topic&) = delete;

  const std::string& name() const { return name_; }
  TimePoint processed() const { return processed_; }

  // Moves processed() to `now` (no-op when now <= processed()).
  void AdvanceTo(TimePoint now, AdvanceResult* out);

  // The near in-life record with this id, or nullptr. Far messages are not held: look them up in
  // the store.
  const core::MessageRecord* FindLive(const std::string& msg_id) const;
  // A copy of a record held here, with its topic filled in.
  core::MessageRecord Copy(const core::MessageRecord& live) const;

  // The load cursor: pending messages with (visible_at, seq) >= cursor are far.
  const IndexKey& cursor() const { return cursor_; }
  void set_cursor(IndexKey k) { cursor_ = k; }
  // Whether a new pending message with this visibility belongs to the far tier.
  bool IsFar(TimePoint visible_at, uint64_t seq) const {
    return !(IndexKey{visible_at, seq} < cursor_);
  }

  // REQUIRES: processed() == now for all mutations below.
  // Adds a near in-life record (topic dropped; payload dropped unless it is at most
  // kHeldPayloadBytes). REQUIRES: no live record with its id.
  void Insert(core::MessageRecord rec, TimePoint now);
  // Replaces the near record with the same id by `rec`: re-indexed when still in life, dropped
  // when ended.
  void Update(core::MessageRecord rec, TimePoint now);
  // Update of the record `held` (FindLive or PeekReady gave it, and nothing changed this Topic
  // since) without looking its id up again. REQUIRES: rec.msg_id == held->msg_id.
  void Replace(const core::MessageRecord* held, core::MessageRecord rec, TimePoint now);
  // Drops the near record with this id (it ended or was released).
  void Forget(const std::string& msg_id, TimePoint now);
  // Counts `n` far waiting messages triggering at t (n < 0 removes them).
  void AddFar(TimePoint t, int64_t n, TimePoint now);
  // Moves a far message near (loading): no change to the counts. A message the far counts did
  // not know is held and counted all the same; returns false then (the store disagreed).
  bool LoadFar(core::MessageRecord rec, TimePoint now);
  // Uncounts the far messages triggering before t: the store had none there (after a complete
  // load up to t). Returns how many.
  int64_t DropFarBefore(TimePoint t, TimePoint now);

  // Up to `max` near records of `lane` consumable at `now` (visible_at <= now) in pull order,
  // strictly after `after` (from the first when nullopt; a level above the lane's is before its
  // first, one below its lowest after its last): a peek at what pulls (or TakePush) would deliver
  // next. Held records (see FindLive). Call AdvanceTo(now) first so that nothing ended is among
  // them.
  std::vector<const core::MessageRecord*> PeekReady(TimePoint now,
                                                    const std::optional<PullPosition>& after,
                                                    size_t max, Lane lane) const;
  // Up to `max` held deliveries waiting out their retry interval at `now` (ack deadline passed,
  // visible_at still ahead: status 1) with (visible_at, seq) >= from, in that order: what
  // listMsg status 1 lists beside the pending messages. Costs one step per delivery whose ack
  // deadline passed and that was not delivered again since (waiting or ready).
  std::vector<const core::MessageRecord*> RetryWaiting(TimePoint now, IndexKey from,
                                                       size_t max) const;
  // The first `max` of PeekReady: what a pull (kPull) or a TakePush (kPush) delivers.
  std::vector<const core::MessageRecord*> DueHead(TimePoint now, size_t max, Lane lane) const {
    return PeekReady(now, std::nullopt, max, lane);
  }
  // The pull-order position of a held record.
  static PullPosition PositionOf(const core::MessageRecord& r) {
    return PullPosition{Level(r), IndexKey{r.visible_at, r.seq}};
  }
  // The level of a record: its priority (out-of-range ones clamped), + 10 in the push lane.
  static int Level(const core::MessageRecord& r) {
    const int p =
        r.priority < 0 ? 0 : (r.priority >= kPriorityLevels ? kPriorityLevels - 1 : r.priority);
    return r.push ? p + kPriorityLevels : p;
  }

  // Counts as of processed(). Call AdvanceTo(now) first for counts true at `now`.
  core::TopicInfo Info() const;

  size_t live_count() const { return live_.size(); }     // near in-life messages
  size_t push_live_count() const { return push_live_; }  // those of them in the push lane
  // Every in-life message, near and far (what a topic's capacity counts).
  int64_t in_life() const { return waiting_ + ready_ + consuming_; }
  bool empty() const { return live_.empty() && far_.empty(); }
  int64_t far_count() const { return far_.size(); }
  // The earliest trigger time in the far tier, or kTimeMax.
  TimePoint FirstFar() const { return far_.First(); }
  // The far tier's trigger times (memory accounting, tests).
  const FarTimes& far_times() const { return far_; }
  TimePoint last_active() const { return last_active_; }
  void Touch(TimePoint now) {
    if (now > last_active_) last_active_ = now;
  }

  // The earliest future time at which AdvanceTo has work for near messages, or when an empty
  // topic turns inactive; kTimeMax when nothing is pending. (Loading is the owner's business.)
  TimePoint NextDue(Millis inactive_after) const;

 private:
  // A visibility-index entry: the record, plus what time passing needs to know about it, so
  // that walking due entries never touches the records themselves.
  struct VisEntry {
    core::MessageRecord* rec = nullptr;
    bool pending = false;   // phase kPending (else kDelivered)
    bool last_try = false;  // deliveries used up: it ends when visible_at passes
    // Delivered with a retry interval: from its ack deadline (in deadlines_) to visible_at it
    // waits (status 1), then it is ready.
    bool waits = false;
  };
  using VisIndex = BTreeIndex<VisEntry>;
  static VisEntry EntryOf(core::MessageRecord* r);
  VisIndex& VisFor(int level);  // created on first use

  // Adds (sign = +1) or removes (-1) `n` entries' contribution to the counts, as of `at`, for
  // entries visible at `t`; a delivered one is consuming until its ack `deadline`.
  void Count(TimePoint t, bool pending, TimePoint deadline, TimePoint at, int64_t n);
  void Count(TimePoint t, bool pending, TimePoint at, int64_t n) { Count(t, pending, t, at, n); }
  void Count(const core::MessageRecord& r, TimePoint at, int64_t n) {
    Count(r.visible_at, r.phase == core::Phase::kPending, r.ack_deadline(), at, n);
  }
  void Index(core::MessageRecord* r);    // into vis_ and exp_
  void Unindex(core::MessageRecord* r);  // out of vis_ and exp_
  core::MessageRecord* Hold(core::MessageRecord rec);
  void Erase(core::MessageRecord* r);  // from live_ and both indexes; counts untouched
  void Finalize(core::MessageRecord* r, AdvanceResult* out);
  void ShiftBuckets(TimePoint from, TimePoint to);

  std::string name_;
  TimePoint processed_;
  TimePoint last_active_;
  IndexKey cursor_{kTimeMax, UINT64_MAX};  // everything near until the owner says otherwise
  // msgId -> near in-life record; split so that growing it never rehashes everything at once.
  base::SplitHashMap<std::unique_ptr<core::MessageRecord>, 64> live_;
  size_t push_live_ = 0;  // records of live_ in the push lane
  // Per level: (visible_at, seq) of every near record of that level; null until used.
  std::array<std::unique_ptr<VisIndex>, kLevels> vis_;
  BTreeIndex<core::MessageRecord*> exp_;  // (NaturalEndTime, seq) of every near record
  // (ack deadline, seq) of every delivered record with a retry interval (VisEntry::waits).
  BTreeIndex<core::MessageRecord*> deadlines_;
  FarTimes far_;  // the trigger times of the far waiting messages

  // Invariant: counts equal the classification of every in-life message, near and far, as of
  // processed_.
  int64_t waiting_ = 0;
  int64_t ready_ = 0;
  int64_t consuming_ = 0;
  std::array<int64_t, core::kBucketCount> buckets_{};
};

}  // namespace chronoq::engine
