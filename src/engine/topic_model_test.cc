// Randomized model check of Topic: random sends, pulls, acks, nacks, deletes and clock jumps
// (small, exact boundary hits, and jumps over many bucket boundaries), comparing after every
// step the incrementally maintained counts, buckets, finalizations and purges with a
// brute-force recomputation from the records through core::StatusAt.
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
constexpr Millis kRetention(5 * kMin);

class TopicModel {
 public:
  explicit TopicModel(uint32_t seed) : rng_(seed), topic_("t", kT0, kRetention), now_(kT0) {}

  void Step() {
    int op = Pick(100);
    if (op < 30) {
      Send();
    } else if (op < 45) {
      Pull();
    } else if (op < 55) {
      AckOrNack(true);
    } else if (op < 63) {
      AckOrNack(false);
    } else if (op < 68) {
      Remove();
    } else {
      AdvanceClock();
    }
    Sync();
  }

  int64_t finalized_total() const { return finalized_total_; }
  int64_t purged_total() const { return purged_total_; }
  int64_t delivered_total() const { return delivered_total_; }
  int64_t max_waiting_seen() const { return max_waiting_seen_; }

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

  bool ModelLive(const std::string& id) const {
    auto it = recs_.find(id);
    return it != recs_.end() && it->second.phase != Phase::kEnded;
  }

  void Send() {
    std::string id = RandomId();
    if (topic_.FindLive(id) != nullptr) {
      ASSERT_TRUE(ModelLive(id));
      return;  // idempotent: the engine answers the existing message
    }
    auto old = recs_.find(id);
    if (old != recs_.end()) {
      ASSERT_EQ(old->second.phase, Phase::kEnded) << id;
      topic_.RemoveRetention(old->second);  // what the engine does on replacement
      retained_.erase(id);
    }
    MessageRecord r = core::CreateRecord(
        core::NewMessage{"t", id, "payload-" + id, RandomDelay(), RandomTtl(), RandomMaxRetry()},
        now_, next_seq_++);
    topic_.Insert(r, now_);
    r.payload.clear();
    recs_[id] = r;
  }

  void Pull() {
    size_t batch = static_cast<size_t>(OneOf<int64_t>({1, 1, 2, 5, 100}));
    // Brute force: every READY record, by (visible_at, seq).
    std::vector<const MessageRecord*> ready;
    for (const auto& [id, r] : recs_) {
      if (r.phase != Phase::kEnded && core::StatusAt(r, now_) == MsgStatus::kReady) {
        ready.push_back(&r);
      }
    }
    std::sort(ready.begin(), ready.end(), [](const MessageRecord* a, const MessageRecord* b) {
      return std::tie(a->visible_at, a->seq) < std::tie(b->visible_at, b->seq);
    });
    if (ready.size() > batch) ready.resize(batch);
    std::vector<const MessageRecord*> head = topic_.DueHead(now_, batch);
    ASSERT_EQ(head.size(), ready.size());
    Millis ack = RandomAckTimeout();
    std::vector<MessageRecord> delivered;
    for (size_t i = 0; i < head.size(); ++i) {
      ASSERT_EQ(head[i]->msg_id, ready[i]->msg_id) << "pull order, position " << i;
      Result<MessageRecord> next =
          core::Apply(topic_.Copy(*head[i]), core::Event{EventKind::kDeliver, ack}, now_);
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
    ASSERT_EQ(live != nullptr, ModelLive(id)) << id;
    if (live == nullptr) return;
    Result<MessageRecord> next = core::Apply(
        topic_.Copy(*live), core::Event{ack ? EventKind::kAck : EventKind::kNack}, now_);
    if (!next.has_value()) {
      ASSERT_EQ(next.error().code(), Errc::kInvalidState);
      return;
    }
    Apply(*next);
  }

  void Remove() {
    std::string id = PickLiveOrAny();
    const MessageRecord* live = topic_.FindLive(id);
    ASSERT_EQ(live != nullptr, ModelLive(id)) << id;
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
    if (next.phase == Phase::kEnded) retained_[next.msg_id] = next.ended_at + kRetention;
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
        for (const auto& [id, t] : retained_) points.push_back(t);
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
    const TimePoint from = topic_.processed();
    // Expected observations of AdvanceTo, from the records as they were.
    int64_t want_triggered = 0;
    int64_t want_timeouts = 0;
    for (const auto& [id, r] : recs_) {
      if (r.phase == Phase::kEnded || r.visible_at <= from || r.visible_at > now_) continue;
      (r.phase == Phase::kPending ? want_triggered : want_timeouts) += 1;
    }
    AdvanceResult res;
    topic_.AdvanceTo(now_, &res);
    ASSERT_EQ(topic_.processed(), now_);
    EXPECT_EQ(res.triggered, want_triggered);
    EXPECT_EQ(res.ack_timeouts, want_timeouts);
    if (res.triggered > 0 || res.ack_timeouts > static_cast<int64_t>(res.finalized.size())) {
      EXPECT_TRUE(res.became_ready);
    }

    // Every record the topic finalized must be one the model says has ended by itself, exactly.
    for (const MessageRecord& f : res.finalized) {
      ASSERT_TRUE(ModelLive(f.msg_id)) << f.msg_id;
      Result<MessageRecord> want =
          core::Apply(recs_[f.msg_id], core::Event{EventKind::kFinalize}, now_);
      ASSERT_TRUE(want.has_value()) << want.error().ToString();
      EXPECT_EQ(f, *want);
      recs_[f.msg_id] = f;
      retained_[f.msg_id] = f.ended_at + kRetention;
      ++finalized_total_;
    }

    // Live records: exactly the model's in-life ones, field for field.
    core::TopicInfo want;
    want.topic = "t";
    size_t live = 0;
    TimePoint want_next = kTimeMax;
    for (const auto& [id, r] : recs_) {
      const MessageRecord* got = topic_.FindLive(id);
      MsgStatus s = core::StatusAt(r, now_);
      if (!core::InLife(s)) {
        EXPECT_EQ(got, nullptr) << id << " ended (" << core::StatusName(s) << ") but still live";
        continue;
      }
      ++live;
      ASSERT_NE(got, nullptr) << id << " in life but not in the topic";
      EXPECT_EQ(topic_.Copy(*got), r);
      if (r.visible_at > now_) want_next = std::min(want_next, r.visible_at);
      want_next = std::min(want_next, r.expire_time);
      switch (s) {
        case MsgStatus::kWaiting:
          ++want.waiting;
          ++want.buckets[core::BucketOf(r.trigger_time - now_)];
          break;
        case MsgStatus::kReady:
          ++want.ready;
          break;
        case MsgStatus::kConsuming:
          ++want.consuming;
          break;
        default:
          break;
      }
    }
    EXPECT_EQ(topic_.live_count(), live);
    core::TopicInfo got = topic_.Info();
    ASSERT_EQ(got, want) << "at +" << (now_ - kT0).count() << " ms: waiting " << got.waiting << "/"
                         << want.waiting << " ready " << got.ready << "/" << want.ready
                         << " consuming " << got.consuming << "/" << want.consuming;
    max_waiting_seen_ = std::max(max_waiting_seen_, want.waiting);

    // Retention: exactly the ended records whose purge time came are purged.
    std::set<std::string> want_purged;
    for (const auto& [id, t] : retained_) {
      if (t <= now_) want_purged.insert(id);
    }
    std::set<std::string> purged;
    for (const Topic::Purge& p : topic_.PopPurgeable(now_)) {
      EXPECT_TRUE(purged.insert(p.msg_id).second) << "purged twice: " << p.msg_id;
      EXPECT_EQ(p.seq, recs_[p.msg_id].seq);
    }
    EXPECT_EQ(purged, want_purged);
    for (const std::string& id : purged) {
      retained_.erase(id);
      recs_.erase(id);
      ++purged_total_;
    }
    EXPECT_EQ(topic_.retained_count(), retained_.size());
    for (const auto& [id, t] : retained_) want_next = std::min(want_next, t);
    EXPECT_EQ(topic_.NextDue(Millis::max()), want_next);
  }

  std::mt19937 rng_;
  Topic topic_;
  TimePoint now_;
  uint64_t next_seq_ = 1;
  std::map<std::string, MessageRecord> recs_;  // every record the topic should know, no payload
  std::map<std::string, TimePoint> retained_;  // ended records -> purge time
  int64_t finalized_total_ = 0;
  int64_t purged_total_ = 0;
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
  EXPECT_GT(model.purged_total(), 0);
  EXPECT_GT(model.delivered_total(), 0);
  EXPECT_GT(model.max_waiting_seen(), 3);
}

INSTANTIATE_TEST_SUITE_P(Seeds, TopicModelTest, ::testing::Range<uint32_t>(1, 25));

}  // namespace
}  // namespace chronoq::engine
