// Randomized model check of Topic: random sends, pulls, acks, nacks, deletes and clock jumps
// (small, exact boundary hits, and jumps over many bucket boundaries), plus the far tier: sends
// beyond the load cursor are only counted (AddFar), the cursor moves forward at random (also into
// the middle of a millisecond) and what it passes is loaded (LoadFar), as the engine does, and far
// messages are deleted (AddFar -1). After every step the incrementally maintained counts, buckets,
// finalizations, far counts and next due time are compared with a brute-force recomputation from
// the records through core::StatusAt.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "core/state_machine.h"
#include "core/topic_info.h"
#include "engine/topic.h"
#include "tests/testutil/topic_tally.h"

namespace chronoq::engine {
namespace {

using core::EventKind;
using core::MessageRecord;
using core::MsgStatus;
using core::Phase;

const TimePoint kT0 = FromEpochMs(1'700'000'000'000);
constexpr int64_t kSec = 1'000;
constexpr int64_t kMin = 60 * kSec;
constexpr int64_t kHour = 60 * kMin;
constexpr int64_t kDay = 24 * kHour;

class TopicModel {
 public:
  explicit TopicModel(uint32_t seed) : rng_(seed), topic_("t", kT0), now_(kT0) {
    // Most runs start with a horizon, as the engine sets it; some with everything near (a
    // Topic's own initial cursor, which only moves forward).
    tiered_ = Pick(8) != 0;
    if (tiered_) {
      cursor_ = IndexKey{kT0 + Millis(OneOf<int64_t>({0, kSec, kHour})), 0};
      topic_.set_cursor(cursor_);
    }
  }

  void Step() {
    int op = Pick(100);
    if (op < 30) {
      Send();
    } else if (op < 42) {
      Pull();
    } else if (op < 52) {
      AckOrNack(true);
    } else if (op < 60) {
      AckOrNack(false);
    } else if (op < 66) {
      Remove();
    } else if (op < 74) {
      MoveCursor();
    } else {
      AdvanceClock();
    }
    Sync();
  }

  int64_t finalized_total() const { return finalized_total_; }
  int64_t far_sent() const { return far_sent_; }
  int64_t far_loaded() const { return far_loaded_; }
  int64_t far_removed() const { return far_removed_; }
  bool tiered() const { return tiered_; }
  int64_t delivered_total() const { return delivered_total_; }
  int64_t max_waiting_seen() const { return max_waiting_seen_; }
  int64_t max_far_seen() const { return max_far_seen_; }

 private:
  int64_t Pick(int64_t n) { return std::uniform_int_distribution<int64_t>(0, n - 1)(rng_); }
  template <typename T>
  T OneOf(std::initializer_list<T> xs) {
    return *(xs.begin() + Pick(static_cast<int64_t>(xs.size())));
  }
  std::string RandomId() { return "m" + std::to_string(Pick(60)); }

  Millis RandomDelay() {
    switch (Pick(6)) {
      case 0:
        return Millis(OneOf<int64_t>({0, -1, -5000, std::numeric_limits<int64_t>::min()}));
      case 1:
        return Millis(Pick(2 * kSec));
      case 2: {  // right at a bucket bound
        int64_t b = core::kBucketLowerBounds[Pick(core::kBucketCount)].count();
        return Millis(b + OneOf<int64_t>({-1, 0, 1}));
      }
      case 3:
        return Millis(Pick(2 * kHour));
      case 4:
        return Millis(Pick(45 * kDay));
      default:
        return Millis(OneOf<int64_t>({10 * 365 * kDay, std::numeric_limits<int64_t>::max()}));
    }
  }
  Millis RandomTtl() {
    switch (Pick(4)) {
      case 0:
        return Millis(1 + Pick(10 * kSec));
      case 1:
        return Millis(1 + Pick(3 * kHour));
      case 2:
        return Millis(1 + Pick(60 * kDay));
      default:
        return Millis::max();
    }
  }
  int32_t RandomMaxRetry() {
    return OneOf<int32_t>({0, 0, 1, 2, 3, std::numeric_limits<int32_t>::max()});
  }
  Millis RandomAckTimeout() {
    return Millis(OneOf<int64_t>({1, 100, 5 * kSec, 30 * kSec, 2 * kHour}));
  }
  // A topic's retry interval (issue 15): none half the time.
  Millis RandomRetryInterval() {
    return Millis(OneOf<int64_t>({0, 0, 0, 1, 100, 5 * kSec, 2 * kHour}));
  }

  bool ModelLive(const std::string& id) const {
    auto it = recs_.find(id);
    return it != recs_.end() && it->second.phase != Phase::kEnded;
  }
  bool IsFar(const std::string& id) const { return far_.count(id) > 0; }
  // In life and held by the topic (not far).
  bool ModelHeld(const std::string& id) const { return ModelLive(id) && !IsFar(id); }
  static IndexKey KeyOf(const MessageRecord& r) { return IndexKey{r.visible_at, r.seq}; }

  // Moves the cursor to `to` (forward only), first loading every far message it passes, in
  // order, as the engine does.
  void SetCursor(IndexKey to) {
    if (!(cursor_ < to)) return;
    std::vector<const MessageRecord*> load;
    for (const std::string& id : far_) {
      if (KeyOf(recs_[id]) < to) load.push_back(&recs_[id]);
    }
    std::sort(load.begin(), load.end(),
              [](const MessageRecord* a, const MessageRecord* b) { return KeyOf(*a) < KeyOf(*b); });
    for (const MessageRecord* r : load) {
      topic_.LoadFar(*r, topic_.processed());  // before the topic advances to now_
      far_.erase(r->msg_id);
      ++far_loaded_;
    }
    topic_.set_cursor(to);
    cursor_ = to;
  }

  void MoveCursor() {
    std::vector<IndexKey> choices;
    for (int64_t ahead : {int64_t{0}, int64_t{1}, kSec, kMin, kHour, 3 * kDay}) {
      choices.push_back(IndexKey{SaturatingAdd(now_, Millis(ahead)), 0});
    }
    for (const std::string& id : far_) {  // onto, or into the millisecond of, a far message
      const MessageRecord& r = recs_[id];
      choices.push_back(IndexKey{r.visible_at, r.seq});
      choices.push_back(IndexKey{r.visible_at, r.seq + 1});
    }
    SetCursor(choices[Pick(static_cast<int64_t>(choices.size()))]);
  }

  void Send() {
    std::string id = RandomId();
    ASSERT_EQ(topic_.FindLive(id) != nullptr, ModelHeld(id)) << id;
    if (ModelLive(id)) return;  // idempotent: the engine answers the existing message
    MessageRecord r = core::CreateRecord(
        core::NewMessage{"t", id, "payload-" + id, RandomDelay(), RandomTtl(), RandomMaxRetry()},
        now_, next_seq_++);
    r.payload.clear();
    const bool far = !(KeyOf(r) < cursor_);
    ASSERT_EQ(topic_.IsFar(r.visible_at, r.seq), far);
    if (far) {
      topic_.AddFar(r.trigger_time, 1, now_);
      far_.insert(id);
      ++far_sent_;
    } else {
      topic_.Insert(r, now_);
    }
    recs_[id] = r;  // replaces an ended record with this id
  }

  void Pull() {
    size_t batch = static_cast<size_t>(OneOf<int64_t>({1, 1, 2, 5, 100}));
    // Brute force: every READY record, by (visible_at, seq).
    std::vector<const MessageRecord*> ready;
    for (const auto& [id, r] : recs_) {
      if (ModelHeld(id) && core::StatusAt(r, now_) == MsgStatus::kReady) ready.push_back(&r);
    }
    std::sort(ready.begin(), ready.end(), [](const MessageRecord* a, const MessageRecord* b) {
      return std::tie(a->visible_at, a->seq) < std::tie(b->visible_at, b->seq);
    });
    if (ready.size() > batch) ready.resize(batch);
    std::vector<const MessageRecord*> head = topic_.DueHead(now_, batch, Lane::kPull);
    ASSERT_EQ(head.size(), ready.size());
    core::Event deliver{EventKind::kDeliver, RandomAckTimeout()};
    deliver.retry_interval = RandomRetryInterval();
    std::vector<MessageRecord> delivered;
    for (size_t i = 0; i < head.size(); ++i) {
      ASSERT_EQ(head[i]->msg_id, ready[i]->msg_id) << "pull order, position " << i;
      Result<MessageRecord> next = core::Apply(topic_.Copy(*head[i]), deliver, now_);
      ASSERT_TRUE(next.has_value()) << next.error().ToString();
      delivered.push_back(*next);
    }
    for (MessageRecord& r : delivered) {
      topic_.Update(r, now_);
      recs_[r.msg_id] = r;
      ++delivered_total_;
    }
  }

  void AckOrNack(bool ack) {
    std::string id = PickLiveOrAny();
    const MessageRecord* live = topic_.FindLive(id);
    ASSERT_EQ(live != nullptr, ModelHeld(id)) << id;
    if (IsFar(id)) {  // never delivered: neither applies
      Result<MessageRecord> next =
          core::Apply(recs_[id], core::Event{ack ? EventKind::kAck : EventKind::kNack}, now_);
      ASSERT_FALSE(next.has_value());
      EXPECT_EQ(next.error().code(), Errc::kInvalidState);
      return;
    }
    if (live == nullptr) return;
    core::Event event{ack ? EventKind::kAck : EventKind::kNack};
    event.retry_interval = RandomRetryInterval();
    Result<MessageRecord> next = core::Apply(topic_.Copy(*live), event, now_);
    if (!next.has_value()) {
      ASSERT_EQ(next.error().code(), Errc::kInvalidState);
      return;
    }
    Apply(*next);
  }

  void Remove() {
    std::string id = PickLiveOrAny();
    const MessageRecord* live = topic_.FindLive(id);
    ASSERT_EQ(live != nullptr, ModelHeld(id)) << id;
    if (IsFar(id)) {  // deleted from the store; the topic only uncounts it
      Result<MessageRecord> next = core::Apply(recs_[id], core::Event{EventKind::kDelete}, now_);
      ASSERT_TRUE(next.has_value()) << next.error().ToString();
      topic_.AddFar(recs_[id].trigger_time, -1, now_);
      far_.erase(id);
      ++far_removed_;
      if (Pick(3) == 0) {
        recs_.erase(id);
      } else {
        recs_[id] = *next;
      }
      return;
    }
    if (live == nullptr) return;
    Result<MessageRecord> next =
        core::Apply(topic_.Copy(*live), core::Event{EventKind::kDelete}, now_);
    ASSERT_TRUE(next.has_value()) << next.error().ToString();
    if (Pick(3) == 0) {  // release: forgotten at once
      topic_.Forget(id, now_);
      recs_.erase(id);
      return;
    }
    Apply(*next);
  }

  void Apply(const MessageRecord& next) {
    topic_.Update(next, now_);
    recs_[next.msg_id] = next;
  }

  // Mostly a live id, so that acks and nacks find something.
  std::string PickLiveOrAny() {
    std::vector<std::string> live;
    for (const auto& [id, r] : recs_) {
      if (r.phase != Phase::kEnded) live.push_back(id);
    }
    if (live.empty() || Pick(5) == 0) return RandomId();
    return live[Pick(static_cast<int64_t>(live.size()))];
  }

  void AdvanceClock() {
    switch (Pick(6)) {
      case 0:
        now_ += Millis(Pick(3));
        break;
      case 1:
        now_ += Millis(Pick(2 * kSec));
        break;
      case 2:
        now_ += Millis(OneOf<int64_t>(
            {kMin - 1, kMin, 2 * kMin, 10 * kMin, 2 * kHour, 7 * kHour, 3 * kDay, 40 * kDay}));
        break;
      case 3: {  // exactly onto a time where something happens to some record
        std::vector<TimePoint> points;
        for (const auto& [id, r] : recs_) {
          if (r.phase == Phase::kEnded) continue;
          points.push_back(r.visible_at);
          points.push_back(r.expire_time);
          for (Millis b : core::kBucketLowerBounds) points.push_back(r.trigger_time - b);
        }
        std::erase_if(points,
                      [&](TimePoint t) { return t <= now_ || t > now_ + Millis(60 * kDay); });
        if (!points.empty()) now_ = points[Pick(static_cast<int64_t>(points.size()))];
        break;
      }
      case 4: {  // one ms before such a point
        TimePoint next = topic_.NextDue(Millis::max());
        if (next != kTimeMax && next - Millis(1) > now_) now_ = next - Millis(1);
        break;
      }
      default: {
        TimePoint next = topic_.NextDue(Millis::max());
        if (next != kTimeMax && next <= now_ + Millis(60 * kDay)) now_ = next;
        break;
      }
    }
  }

  // Advances the topic to now and checks everything against the brute-force view.
  void Sync() {
    // The engine loads far messages before they are due; here they may also come due unloaded
    // (the topic counts them all the same), but must be loaded before they could end.
    IndexKey load_to = cursor_;
    for (const std::string& id : far_) {
      const MessageRecord& r = recs_[id];
      if (r.expire_time <= now_ && load_to < IndexKey{r.visible_at, r.seq + 1}) {
        load_to = IndexKey{r.visible_at, r.seq + 1};
      }
    }
    SetCursor(load_to);
    ASSERT_EQ(topic_.cursor(), cursor_);
    const TimePoint from = topic_.processed();
    // Expected observations of AdvanceTo, from the records as they were.
    int64_t want_triggered = 0;
    int64_t want_timeouts = 0;
    int64_t want_timeouts_ready = 0;  // consumable again at once (no retry interval)
    auto within = [&](TimePoint t) { return from < t && t <= now_; };
    for (const auto& [id, r] : recs_) {
      if (r.phase == Phase::kEnded) continue;
      if (r.phase == Phase::kPending) {
        want_triggered += within(r.visible_at) ? 1 : 0;
        continue;
      }
      // A delivery times out at its ack deadline; with a retry interval (and a delivery left),
      // the end of the interval is timed like a trigger.
      const bool last_try = r.retry >= r.max_deliveries();
      want_timeouts += within(r.ack_deadline()) ? 1 : 0;
      if (!last_try && within(r.visible_at)) {
        (r.retry_interval > Millis(0) ? want_triggered : want_timeouts_ready) += 1;
      }
    }
    AdvanceResult res;
    topic_.AdvanceTo(now_, &res);
    ASSERT_EQ(topic_.processed(), now_);
    EXPECT_EQ(res.triggered, want_triggered);
    EXPECT_EQ(res.ack_timeouts, want_timeouts);
    if (res.triggered > 0 || want_timeouts_ready > 0) {
      EXPECT_TRUE(res.became_ready);
    }

    // Every record the topic finalized must be one the model says has ended by itself, exactly.
    for (const EndedByTime& f : res.finalized) {
      const std::string& id = f.after.msg_id;
      ASSERT_TRUE(ModelHeld(id)) << id;
      EXPECT_EQ(f.before, recs_[id]);  // as held, with its topic: what the store indexes
      Result<MessageRecord> want = core::Apply(recs_[id], core::Event{EventKind::kFinalize}, now_);
      ASSERT_TRUE(want.has_value()) << want.error().ToString();
      EXPECT_EQ(f.after, *want);
      recs_[id] = f.after;
      ++finalized_total_;
    }

    // Live records: exactly the model's in-life ones, field for field.
    core::TopicInfo want;
    want.topic = "t";
    size_t live = 0;
    int64_t far = 0;
    TimePoint want_next = kTimeMax;
    TimePoint want_first_far = kTimeMax;
    for (const auto& [id, r] : recs_) {
      const MessageRecord* got = topic_.FindLive(id);
      MsgStatus s = core::StatusAt(r, now_);
      if (!core::InLife(s)) {
        EXPECT_EQ(got, nullptr) << id << " ended (" << core::StatusName(s) << ") but still live";
        EXPECT_FALSE(IsFar(id)) << id;
        continue;
      }
      if (IsFar(id)) {
        ++far;
        EXPECT_EQ(got, nullptr) << id << " far but held";
        EXPECT_EQ(r.phase, Phase::kPending);
        want_first_far = std::min(want_first_far, r.trigger_time);
        if (r.visible_at > now_) want_next = std::min(want_next, r.visible_at);
      } else {
        ++live;
        ASSERT_NE(got, nullptr) << id << " in life but not in the topic";
        EXPECT_EQ(topic_.Copy(*got), r);
        if (r.visible_at > now_) want_next = std::min(want_next, r.visible_at);
        // A delivery with a retry interval changes at its ack deadline too (consuming -> waiting).
        if (r.phase == Phase::kDelivered && r.ack_deadline() > now_) {
          want_next = std::min(want_next, r.ack_deadline());
        }
        want_next = std::min(want_next, r.expire_time);
      }
      testutil::Tally(want, s, r.visible_at - now_);  // waiting: until consumable
    }
    EXPECT_EQ(topic_.live_count(), live);
    EXPECT_EQ(topic_.far_count(), far);
    EXPECT_EQ(topic_.FirstFar(), want_first_far);
    EXPECT_EQ(topic_.empty(), live == 0 && far == 0);
    max_far_seen_ = std::max(max_far_seen_, far);
    core::TopicInfo got = topic_.Info();
    ASSERT_EQ(got, want) << "at +" << (now_ - kT0).count() << " ms: waiting " << got.waiting << "/"
                         << want.waiting << " ready " << got.ready << "/" << want.ready
                         << " consuming " << got.consuming << "/" << want.consuming;
    max_waiting_seen_ = std::max(max_waiting_seen_, want.waiting);

    EXPECT_EQ(topic_.NextDue(Millis::max()), want_next);
  }

  std::mt19937 rng_;
  Topic topic_;
  TimePoint now_;
  uint64_t next_seq_ = 1;
  std::map<std::string, MessageRecord> recs_;  // every record sent (ended ones too), no payload
  std::set<std::string> far_;                  // ids of the far ones (counted, not held)
  IndexKey cursor_{kTimeMax, UINT64_MAX};
  int64_t finalized_total_ = 0;
  int64_t far_sent_ = 0;
  int64_t far_loaded_ = 0;
  int64_t far_removed_ = 0;
  bool tiered_ = false;
  int64_t max_far_seen_ = 0;
  int64_t delivered_total_ = 0;
  int64_t max_waiting_seen_ = 0;
};

class TopicModelTest : public ::testing::TestWithParam<uint32_t> {};

TEST_P(TopicModelTest, CountsMatchBruteForceAfterEveryStep) {
  TopicModel model(GetParam());
  for (int i = 0; i < 4000; ++i) {
    model.Step();
    if (::testing::Test::HasFatalFailure() || ::testing::Test::HasNonfatalFailure()) {
      FAIL() << "seed " << GetParam() << " diverged at step " << i;
    }
  }
  // The run exercised what it should.
  EXPECT_GT(model.finalized_total(), 0);
  EXPECT_GT(model.delivered_total(), 0);
  EXPECT_GT(model.max_waiting_seen(), 3);
  if (model.tiered()) {  // unless the run kept everything near
    EXPECT_GT(model.far_sent(), 5);
    EXPECT_GT(model.far_loaded(), 0);
    EXPECT_GT(model.far_removed(), 0);
    EXPECT_GT(model.max_far_seen(), 1);
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, TopicModelTest, ::testing::Range<uint32_t>(1, 25));

}  // namespace
}  // namespace chronoq::engine
