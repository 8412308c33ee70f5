#include "engine/topic.h"

#include <algorithm>

#include "base/check.h"
#include "core/state_machine.h"

namespace chronoq::engine {

using core::MessageRecord;
using core::Phase;

Topic::Topic(std::string name, TimePoint now, Millis retention)
    : name_(std::move(name)), processed_(now), last_active_(now), retention_(retention) {}

Topic::VisEntry Topic::EntryOf(MessageRecord* r) {
  return VisEntry{r, r->phase == Phase::kPending, r->retry >= r->max_deliveries()};
}

void Topic::Count(TimePoint t, bool pending, TimePoint at, int sign) {
  if (t <= at) {
    ready_ += sign;
  } else if (pending) {
    waiting_ += sign;
    buckets_[core::BucketOf(t - at)] += sign;
  } else {
    consuming_ += sign;
  }
}

void Topic::Index(MessageRecord* r) {
  vis_.Insert(IndexKey{r->visible_at, r->seq}, EntryOf(r));
  exp_.Insert(IndexKey{r->expire_time, r->seq}, r);
}

void Topic::Unindex(MessageRecord* r) {
  vis_.Erase(IndexKey{r->visible_at, r->seq});
  exp_.Erase(IndexKey{r->expire_time, r->seq});
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

void Topic::Insert(MessageRecord rec, TimePoint now) {
  CQ_DCHECK(now == processed_, "Insert at {} but processed {}", ToEpochMs(now),
            ToEpochMs(processed_));
  CQ_DCHECK(rec.phase != Phase::kEnded, "Insert of an ended record");
  rec.payload = std::string();
  rec.topic = std::string();  // the Topic knows its name
  auto owned = std::make_unique<MessageRecord>(std::move(rec));
  MessageRecord* r = owned.get();
  bool inserted = live_.Emplace(r->msg_id, std::move(owned)).second;
  CQ_CHECK(inserted, "Insert of a live msgId '{}'", r->msg_id);
  Index(r);
  Count(*r, processed_, +1);
}

void Topic::Erase(MessageRecord* r) {
  Unindex(r);
  std::string id = r->msg_id;  // the key outlives the record it names
  live_.Erase(id);             // destroys *r
}

void Topic::Update(MessageRecord rec, TimePoint now) {
  CQ_DCHECK(now == processed_, "Update at {} but processed {}", ToEpochMs(now),
            ToEpochMs(processed_));
  auto* found = live_.Find(rec.msg_id);
  CQ_CHECK(found != nullptr, "Update of a msgId '{}' that is not live", rec.msg_id);
  MessageRecord* r = found->get();
  Count(*r, processed_, -1);
  if (rec.phase == Phase::kEnded) {
    AddRetention(rec);
    Erase(r);
    return;
  }
  Unindex(r);
  rec.payload = std::string();
  rec.topic = std::string();
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
  AddRetention(*ended);
  Erase(r);
  ended->topic = name_;
  out->finalized.push_back(std::move(ended).value());
}

void Topic::ShiftBuckets(TimePoint from, TimePoint to) {
  // A waiting message changes bucket when t - processed crosses a lower bound B_k (k >= 1), i.e.
  // when t lies in [from + B_k, to + B_k). Walk the union of those ranges once, above `to`.
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
  for (int i = 0; i < n; ++i) {
    const auto& [lo, hi] = ranges[i];
    for (auto it = vis_.LowerBound(IndexKey{lo, 0}); it != vis_.end() && it.key().t < hi; ++it) {
      if (!it.value().pending) continue;
      int before = core::BucketOf(it.key().t - from);
      int after = core::BucketOf(it.key().t - to);
      if (before != after) {
        --buckets_[before];
        ++buckets_[after];
      }
    }
  }
}

void Topic::AdvanceTo(TimePoint now, AdvanceResult* out) {
  if (now <= processed_) return;
  const TimePoint from = processed_;

  // 1. Messages whose visible_at passed: waiting -> ready (trigger) or consuming -> ready (ack
  //    timeout). Nothing moves in the index; only counts change, read from the index entries.
  std::vector<MessageRecord*> exhausted;
  for (auto it = vis_.UpperBound(IndexKey{from, UINT64_MAX}); it != vis_.end() && it.key().t <= now;
       ++it) {
    const TimePoint t = it.key().t;
    const VisEntry& e = it.value();
    Count(t, e.pending, from, -1);
    Count(t, e.pending, now, +1);
    if (e.pending) {
      ++out->triggered;
      int64_t gap = (now - t).count();
      out->ready_gap_sum_ms += gap;
      out->ready_gap_max_ms = std::max(out->ready_gap_max_ms, gap);
      out->became_ready = true;
    } else {
      ++out->ack_timeouts;
      if (e.last_try) {
        exhausted.push_back(e.rec);
      } else {
        out->became_ready = true;
      }
    }
  }

  // 2. Waiting messages that moved to a nearer bucket.
  ShiftBuckets(from, now);
  processed_ = now;

  // 3. Messages whose deliveries are used up or whose ttl passed end now.
  for (MessageRecord* r : exhausted) Finalize(r, out);
  while (!exp_.empty() && exp_.begin().key().t <= now) Finalize(exp_.begin().value(), out);
}

std::vector<const MessageRecord*> Topic::DueHead(TimePoint now, size_t max) const {
  std::vector<const MessageRecord*> out;
  for (auto it = vis_.begin(); it != vis_.end() && it.key().t <= now && out.size() < max; ++it) {
    out.push_back(it.value().rec);
  }
  return out;
}

TimePoint Topic::PurgeTime(const MessageRecord& ended) const {
  return SaturatingAdd(core::NaturalEndTime(ended), retention_);
}

void Topic::AddRetention(const MessageRecord& ended) {
  IndexKey k{PurgeTime(ended), ended.seq};
  if (std::string* existing = retained_.Find(k)) {
    *existing = ended.msg_id;
  } else {
    retained_.Insert(k, ended.msg_id);
  }
}

void Topic::RemoveRetention(const MessageRecord& ended) {
  retained_.Erase(IndexKey{PurgeTime(ended), ended.seq});
}

std::vector<Topic::Purge> Topic::PopPurgeable(TimePoint now) {
  std::vector<Purge> out;
  while (!retained_.empty() && retained_.begin().key().t <= now) {
    auto it = retained_.begin();
    out.push_back(Purge{std::move(it.value()), it.key().seq});
    retained_.Erase(it.key());
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
  auto it = vis_.UpperBound(IndexKey{processed_, UINT64_MAX});
  if (it != vis_.end()) next = std::min(next, it.key().t);
  if (!exp_.empty()) next = std::min(next, exp_.begin().key().t);
  if (!retained_.empty()) next = std::min(next, retained_.begin().key().t);
  if (live_.empty()) {
    // Once past, the inactivity time only matters for a topic with nothing retained (the engine
    // forgets it then); one still retaining ended records waits for their purge instead of being
    // woken again and again at a time already past.
    TimePoint inactive_at = SaturatingAdd(last_active_, inactive_after);
    if (inactive_at > processed_ || retained_.empty()) next = std::min(next, inactive_at);
  }
  return next;
}

}  // namespace chronoq::engine
