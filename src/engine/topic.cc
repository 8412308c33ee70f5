#include "engine/topic.h"

#include <algorithm>

#include "base/check.h"
#include "core/state_machine.h"

namespace chronoq::engine {

using core::MessageRecord;
using core::Phase;

Topic::Topic(std::string name, TimePoint now)
    : name_(std::move(name)), processed_(now), last_active_(now) {}

Topic::VisEntry Topic::EntryOf(MessageRecord* r) {
  const bool delivered = r->phase == Phase::kDelivered;
  return VisEntry{r, !delivered, r->retry >= r->max_deliveries(),
                  delivered && r->retry_interval > Millis(0)};
}

void Topic::Count(TimePoint t, bool pending, TimePoint deadline, TimePoint at, int64_t n) {
  if (!pending && deadline > at) {
    consuming_ += n;
  } else if (t <= at) {
    ready_ += n;
  } else {
    // Pending before its time, or a delivery past its deadline in its retry interval.
    waiting_ += n;
    buckets_[core::BucketOf(t - at)] += n;
  }
}

// exp_ is keyed by the natural end (the ttl, or the last ack deadline when deliveries are used
// up), so that a record held with its end already behind processed() (loaded at recovery after
// its last ack deadline passed) is finalized by the next AdvanceTo all the same.
Topic::VisIndex& Topic::VisFor(int level) {
  std::unique_ptr<VisIndex>& vis = vis_[level];
  if (vis == nullptr) vis = std::make_unique<VisIndex>();
  return *vis;
}

void Topic::Index(MessageRecord* r) {
  const VisEntry e = EntryOf(r);
  VisFor(Level(*r)).Insert(IndexKey{r->visible_at, r->seq}, e);
  exp_.Insert(IndexKey{core::NaturalEndTime(*r), r->seq}, r);
  if (e.waits) deadlines_.Insert(IndexKey{r->ack_deadline(), r->seq}, r);
}

void Topic::Unindex(MessageRecord* r) {
  vis_[Level(*r)]->Erase(IndexKey{r->visible_at, r->seq});
  exp_.Erase(IndexKey{core::NaturalEndTime(*r), r->seq});
  if (EntryOf(r).waits) deadlines_.Erase(IndexKey{r->ack_deadline(), r->seq});
}

MessageRecord Topic::Copy(const MessageRecord& live) const {
  MessageRecord out = live;
  out.topic = name_;
  return out;
}

const MessageRecord* Topic::FindLive(const std::string& msg_id) const {
  const auto* found = live_.Find(msg_id);
  return found == nullptr ? nullptr : found->get();
}

MessageRecord* Topic::Hold(MessageRecord rec) {
  CQ_DCHECK(rec.phase != Phase::kEnded, "holding an ended record");
  if (rec.payload.size() > kHeldPayloadBytes) rec.payload = std::string();
  rec.topic = std::string();  // the Topic knows its name
  auto owned = std::make_unique<MessageRecord>(std::move(rec));
  MessageRecord* r = owned.get();
  bool inserted = live_.Emplace(r->msg_id, std::move(owned)).second;
  CQ_CHECK(inserted, "msgId '{}' is already held", r->msg_id);
  if (r->push) ++push_live_;
  Index(r);
  return r;
}

void Topic::Insert(MessageRecord rec, TimePoint now) {
  CQ_DCHECK(now == processed_, "Insert at {} but processed {}", ToEpochMs(now),
            ToEpochMs(processed_));
  MessageRecord* r = Hold(std::move(rec));
  Count(*r, processed_, +1);
}

bool Topic::LoadFar(MessageRecord rec, TimePoint now) {
  CQ_DCHECK(now == processed_, "LoadFar at {} but processed {}", ToEpochMs(now),
            ToEpochMs(processed_));
  if (!far_.Remove(rec.visible_at, 1)) {
    Insert(std::move(rec), now);  // not counted as far: count it now
    return false;
  }
  Hold(std::move(rec));  // counted already, as a far waiting message
  return true;
}

int64_t Topic::DropFarBefore(TimePoint t, TimePoint now) {
  std::vector<std::pair<TimePoint, int64_t>> before;
  far_.ForEach(kTimeMin, t, [&](TimePoint at, int64_t n) { before.emplace_back(at, n); });
  int64_t dropped = 0;
  for (const auto& [at, n] : before) {
    AddFar(at, -n, now);
    dropped += n;
  }
  return dropped;
}

void Topic::AddFar(TimePoint t, int64_t n, TimePoint now) {
  CQ_DCHECK(now == processed_, "AddFar at {} but processed {}", ToEpochMs(now),
            ToEpochMs(processed_));
  if (n == 0) return;
  if (n > 0) {
    far_.Add(t, n);
  } else {
    CQ_CHECK(far_.Remove(t, -n), "removing {} far messages at {} that are not there", -n,
             ToEpochMs(t));
  }
  Count(t, /*pending=*/true, processed_, n);
}

void Topic::Erase(MessageRecord* r) {
  Unindex(r);
  if (r->push) --push_live_;
  const std::string id = std::move(r->msg_id);  // the key outlives the record it names
  live_.Erase(id);                              // destroys *r
}

void Topic::Update(MessageRecord rec, TimePoint now) {
  CQ_DCHECK(now == processed_, "Update at {} but processed {}", ToEpochMs(now),
            ToEpochMs(processed_));
  auto* found = live_.Find(rec.msg_id);
  CQ_CHECK(found != nullptr, "Update of a msgId '{}' that is not held", rec.msg_id);
  Replace(found->get(), std::move(rec), now);
}

void Topic::Replace(const MessageRecord* held, MessageRecord rec, TimePoint now) {
  CQ_DCHECK(now == processed_, "Replace at {} but processed {}", ToEpochMs(now),
            ToEpochMs(processed_));
  CQ_DCHECK(held->msg_id == rec.msg_id, "Replace of '{}' by '{}'", held->msg_id, rec.msg_id);
  // Held records are owned by live_; the pointer is const only to its users.
  auto* r = const_cast<MessageRecord*>(held);
  Count(*r, processed_, -1);
  if (rec.phase == Phase::kEnded) {
    Erase(r);
    return;
  }
  Unindex(r);
  if (rec.payload.size() > kHeldPayloadBytes) rec.payload = std::string();
  rec.topic = std::string();
  if (r->push != rec.push) {  // never: the lane is kept for life
    if (r->push) --push_live_;
    if (rec.push) ++push_live_;
  }
  *r = std::move(rec);
  Index(r);
  Count(*r, processed_, +1);
}

void Topic::Forget(const std::string& msg_id, TimePoint now) {
  CQ_DCHECK(now == processed_, "Forget at {} but processed {}", ToEpochMs(now),
            ToEpochMs(processed_));
  auto* found = live_.Find(msg_id);
  if (found == nullptr) return;
  Count(**found, processed_, -1);
  Erase(found->get());
}

void Topic::Finalize(MessageRecord* r, AdvanceResult* out) {
  Result<MessageRecord> ended =
      core::Apply(*r, core::Event{core::EventKind::kFinalize}, processed_);
  CQ_CHECK(ended.has_value(), "finalize of '{}' failed: {}", r->msg_id, ended.error().ToString());
  Count(*r, processed_, -1);
  EndedByTime e{Copy(*r), std::move(ended).value()};
  e.after.topic = name_;
  Erase(r);
  out->finalized.push_back(std::move(e));
}

void Topic::ShiftBuckets(TimePoint from, TimePoint to) {
  // A waiting message changes bucket when t - processed crosses a lower bound B_k (k >= 1), i.e.
  // when t lies in [from + B_k, to + B_k). Walk the union of those ranges once, above `to`, in
  // both tiers.
  std::pair<TimePoint, TimePoint> ranges[core::kBucketCount];
  int n = 0;
  for (int k = 1; k < core::kBucketCount; ++k) {
    TimePoint lo = std::max(SaturatingAdd(from, core::kBucketLowerBounds[k]), to + Millis(1));
    TimePoint hi = SaturatingAdd(to, core::kBucketLowerBounds[k]);
    if (lo >= hi) continue;
    if (n > 0 && lo <= ranges[n - 1].second) {
      ranges[n - 1].second = std::max(ranges[n - 1].second, hi);
    } else {
      ranges[n++] = {lo, hi};
    }
  }
  auto shift = [&](TimePoint t, int64_t count) {
    int before = core::BucketOf(t - from);
    int after = core::BucketOf(t - to);
    if (before != after) {
      buckets_[before] -= count;
      buckets_[after] += count;
    }
  };
  // The index tiers with entries, each walked over every range (a tier is looked at once, not
  // once per range).
  for (const auto& vis : vis_) {
    if (vis == nullptr || vis->empty()) continue;
    for (int i = 0; i < n; ++i) {
      const auto& [lo, hi] = ranges[i];
      for (auto it = vis->LowerBound(IndexKey{lo, 0}); it != vis->end() && it.key().t < hi; ++it) {
        // Waiting at `from` and at `to`: pending, or in a retry interval that began by `from`
        // (one that began after `from` was counted anew as of `to` by AdvanceTo).
        const VisEntry& e = it.value();
        if (e.pending || (e.waits && e.rec->ack_deadline() <= from)) shift(it.key().t, 1);
      }
    }
  }
  const TimePoint far_first = far_.First();  // kTimeMax when there are none
  const TimePoint far_last = far_.Last();    // kTimeMin when there are none
  for (int i = 0; i < n; ++i) {
    const auto& [lo, hi] = ranges[i];
    // The far tier by pieces between the points where a bucket changes (at `from` or at `to`),
    // each counted at once: the cost grows with the bucket bounds crossed, not with messages.
    // A range outside the far times holds none: not cut into pieces (a send's tick crosses
    // eight bounds, most of them away from where its topic's far messages are).
    if (hi <= far_first || lo > far_last) continue;
    std::array<TimePoint, 2 * core::kBucketCount + 2> cuts{};
    size_t m = 0;
    cuts[m++] = lo;
    cuts[m++] = hi;
    for (int k = 1; k < core::kBucketCount; ++k) {
      for (TimePoint at : {SaturatingAdd(from, core::kBucketLowerBounds[k]),
                           SaturatingAdd(to, core::kBucketLowerBounds[k])}) {
        if (at > lo && at < hi) cuts[m++] = at;
      }
    }
    std::sort(cuts.begin(), cuts.begin() + static_cast<std::ptrdiff_t>(m));
    for (size_t j = 0; j + 1 < m; ++j) {
      if (cuts[j] == cuts[j + 1]) continue;
      if (int64_t c = far_.CountIn(cuts[j], cuts[j + 1])) shift(cuts[j], c);
    }
  }
}

void Topic::AdvanceTo(TimePoint now, AdvanceResult* out) {
  if (now <= processed_) return;
  const TimePoint from = processed_;

  // 1. Messages whose visible_at passed: waiting -> ready (trigger) or consuming -> ready (ack
  //    timeout). Nothing moves in the index; only counts change, read from the index entries.
  //    (Far messages are normally loaded before they are due; count them all the same.)
  std::vector<MessageRecord*> exhausted;
  auto became_ready = [&](bool push) {
    (push ? out->became_push_ready : out->became_ready) = true;
  };
  auto triggered = [&](TimePoint t, int64_t n, bool push) {
    out->triggered += n;
    int64_t gap = (now - t).count();
    out->ready_gap_sum_ms += gap * n;
    out->ready_gap_max_ms = std::max(out->ready_gap_max_ms, gap);
    became_ready(push);
  };
  for (int level = 0; level < kLevels; ++level) {
    const VisIndex* vis = vis_[level].get();
    if (vis == nullptr) continue;
    const bool push = level >= kPriorityLevels;
    for (auto it = vis->UpperBound(IndexKey{from, UINT64_MAX});
         it != vis->end() && it.key().t <= now; ++it) {
      const TimePoint t = it.key().t;
      const VisEntry& e = it.value();
      if (e.waits) {
        // Its ack deadline passed before `from` (else the deadline walk below counts it): its
        // retry interval ended, waiting -> ready, timed like a trigger.
        const TimePoint deadline = e.rec->ack_deadline();
        if (deadline > from) continue;
        Count(t, false, deadline, from, -1);
        Count(t, false, deadline, now, +1);
        triggered(t, 1, push);
        continue;
      }
      Count(t, e.pending, from, -1);
      Count(t, e.pending, now, +1);
      if (e.pending) {
        triggered(t, 1, push);
      } else {
        ++out->ack_timeouts;
        if (e.last_try) {
          exhausted.push_back(e.rec);
        } else {
          became_ready(push);
        }
      }
    }
  }
  // Deliveries with a retry interval whose ack deadline passed: consuming -> waiting (or ready
  // when the interval passed too).
  for (auto it = deadlines_.UpperBound(IndexKey{from, UINT64_MAX});
       it != deadlines_.end() && it.key().t <= now; ++it) {
    MessageRecord* r = it.value();
    Count(r->visible_at, false, it.key().t, from, -1);
    Count(r->visible_at, false, it.key().t, now, +1);
    ++out->ack_timeouts;
    if (r->retry >= r->max_deliveries()) {
      exhausted.push_back(r);
    } else if (r->visible_at <= now) {
      triggered(r->visible_at, 1, r->push);
    }
  }
  far_.ForEach(from + Millis(1), SaturatingAdd(now, Millis(1)), [&](TimePoint t, int64_t n) {
    // Far messages are loaded before they are due; should some not be (a failed load), their
    // lane is not known here: both are told.
    Count(t, true, from, -n);
    Count(t, true, now, n);
    triggered(t, n, false);
    became_ready(true);
  });

  // 2. Waiting messages that moved to a nearer bucket.
  ShiftBuckets(from, now);
  processed_ = now;

  // 3. Messages whose deliveries are used up or whose ttl passed end now.
  for (MessageRecord* r : exhausted) Finalize(r, out);
  while (!exp_.empty() && exp_.begin().key().t <= now) Finalize(exp_.begin().value(), out);
}

std::vector<const MessageRecord*> Topic::PeekReady(TimePoint now,
                                                   const std::optional<PullPosition>& after,
                                                   size_t max, Lane lane) const {
  std::vector<const MessageRecord*> out;
  const int top = lane == Lane::kPull ? kPriorityLevels - 1 : kLevels - 1;
  const int bottom = lane == Lane::kPush ? kPriorityLevels : 0;
  // A position above the lane's highest level is before everything; one below its lowest, after
  // everything.
  const bool resume = after && after->level <= top;
  const int first = resume ? after->level : top;
  for (int level = first; level >= bottom && out.size() < max; --level) {
    const VisIndex* vis = vis_[level].get();
    if (vis == nullptr) continue;
    // Within the level of `after`, the walk resumes past its key; lower levels start at their head.
    auto it = resume && level == first ? vis->UpperBound(after->key) : vis->begin();
    for (; it != vis->end() && it.key().t <= now && out.size() < max; ++it) {
      out.push_back(it.value().rec);
    }
  }
  return out;
}

std::vector<const MessageRecord*> Topic::RetryWaiting(TimePoint now, IndexKey from,
                                                      size_t max) const {
  std::vector<const MessageRecord*> out;
  for (auto it = deadlines_.begin(); it != deadlines_.end() && it.key().t <= now; ++it) {
    const MessageRecord* r = it.value();
    if (r->visible_at > now && !(IndexKey{r->visible_at, r->seq} < from)) out.push_back(r);
  }
  auto by_key = [](const MessageRecord* a, const MessageRecord* b) {
    return IndexKey{a->visible_at, a->seq} < IndexKey{b->visible_at, b->seq};
  };
  if (out.size() > max) {
    std::partial_sort(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(max), out.end(),
                      by_key);
    out.resize(max);
  } else {
    std::sort(out.begin(), out.end(), by_key);
  }
  return out;
}

core::TopicInfo Topic::Info() const {
  core::TopicInfo info;
  info.topic = name_;
  info.waiting = waiting_;
  info.ready = ready_;
  info.consuming = consuming_;
  info.buckets = buckets_;
  return info;
}

TimePoint Topic::NextDue(Millis inactive_after) const {
  TimePoint next = kTimeMax;
  for (const auto& vis : vis_) {
    if (vis == nullptr) continue;
    auto it = vis->UpperBound(IndexKey{processed_, UINT64_MAX});
    if (it != vis->end()) next = std::min(next, it.key().t);
  }
  if (!exp_.empty()) next = std::min(next, exp_.begin().key().t);
  auto deadline = deadlines_.UpperBound(IndexKey{processed_, UINT64_MAX});
  if (deadline != deadlines_.end()) next = std::min(next, deadline.key().t);
  next = std::min(next, far_.FirstAfter(processed_));
  if (empty()) next = std::min(next, SaturatingAdd(last_active_, inactive_after));
  return next;
}

}  // namespace chronoq::engine
