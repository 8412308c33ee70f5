// Restarts of the engine over RocksKv (with and without sync_writes): everything answered before
// a restart is there after it, with exact times, statuses, counts and buckets; time that passed
// while the server was down takes effect; far messages (beyond the memory horizon) stay on disk
// until time brings them near, and load in order, in chunks.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/scheduler.h"
#include "engine/engine.h"
#include "storage/message_store.h"
#include "storage/rocksdb/rocks_kv.h"
#include "tests/testutil/sync_backend.h"
#include "tests/testutil/temp_dir.h"
#include "tests/testutil/topic_tally.h"

namespace chronoq::engine {
namespace {

using core::MsgStatus;

const TimePoint kT0 = FromEpochMs(1'700'000'040'000);
constexpr int64_t kSec = 1'000;
constexpr int64_t kMin = 60 * kSec;
constexpr int64_t kHour = 60 * kMin;
constexpr int64_t kDay = 24 * kHour;
constexpr Millis kRetention(5 * kMin);
constexpr Millis kHorizon(kMin);

class EngineRecoveryTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override { Open(); }
  void TearDown() override { Close(); }

  void Open() {
    storage::RocksOptions o;
    o.dir = tmp_.path();
    o.sync_writes = GetParam();
    o.memtable_bytes = size_t{8} << 20;
    Result<std::unique_ptr<storage::RocksKv>> kv = storage::RocksKv::Open(o);
    ASSERT_TRUE(kv.has_value()) << kv.error().ToString();
    kv_ = std::move(*kv);
    store_ = std::make_unique<storage::MessageStore>(kv_.get(), "ns");
    EngineOptions e;
    e.retention = kRetention;
    e.memory_horizon = kHorizon;
    e.load_chunk = load_chunk_;
    e.shards = 3;
    engine_ = std::make_unique<Engine>(e, store_.get(), &clock_, &sched_);
    ASSERT_TRUE(engine_->Recover().ok());
    sched_.RunDue();  // the first retention purge
    b_ = std::make_unique<testutil::SyncBackend>(engine_.get());
  }
  void Close() {
    b_.reset();
    engine_.reset();  // cancels its timers
    store_.reset();
    kv_.reset();  // writes what is queued, closes the database
  }
  // Stops the server, lets `down_ms` pass, starts it again.
  void Restart(int64_t down_ms = 0) {
    Close();
    clock_.Advance(Millis(down_ms));
    Open();
  }

  core::Message MustSend(const std::string& topic, const std::string& id, int64_t delay_ms,
                         int64_t ttl_ms = 3'600'000, int32_t max_retry = 10) {
    Result<core::Message> r =
        b_->Send(topic, id, "body of " + id, Millis(delay_ms), Millis(ttl_ms), max_retry);
    EXPECT_TRUE(r.has_value()) << r.error().ToString();
    known_.insert({topic, id});
    return r.has_value() ? *r : core::Message{};
  }
  std::vector<std::string> PullIds(const std::string& topic, int32_t batch = 1,
                                   int64_t ack_ms = 30'000) {
    Result<std::vector<core::Message>> r = b_->Pull(topic, batch, Millis(ack_ms));
    EXPECT_TRUE(r.has_value()) << r.error().ToString();
    std::vector<std::string> ids;
    if (r.has_value()) {
      for (const core::Message& m : *r) ids.push_back(m.record.msg_id);
    }
    return ids;
  }
  MsgStatus StatusOf(const std::string& topic, const std::string& id) {
    Result<core::Message> r = b_->Get(topic, id);
    EXPECT_TRUE(r.has_value()) << topic << "/" << id << ": " << r.error().ToString();
    return r.has_value() ? r->status : MsgStatus::kWaiting;
  }
  core::TopicInfo Info(const std::string& topic) { return *b_->Info(topic); }

  // Every known message as getMsg answers it (absent ones as kNotFound), and every topic's info.
  struct View {
    std::map<std::pair<std::string, std::string>, std::optional<core::Message>> msgs;
    std::map<std::string, core::TopicInfo> topics;
  };
  View Snapshot() {
    View v;
    for (const auto& key : known_) {
      Result<core::Message> r = b_->Get(key.first, key.second);
      if (r.has_value()) {
        v.msgs[key] = *r;
      } else {
        EXPECT_EQ(r.error().code(), Errc::kNotFound);
        v.msgs[key] = std::nullopt;
      }
      v.topics[key.first] = Info(key.first);
    }
    return v;
  }
  void ExpectSameView(const View& a, const View& b) {
    for (const auto& [key, m] : a.msgs) {
      const auto& other = b.msgs.at(key);
      ASSERT_EQ(m.has_value(), other.has_value()) << key.first << "/" << key.second;
      if (!m) continue;
      EXPECT_EQ(m->record, other->record) << key.first << "/" << key.second;
      EXPECT_EQ(m->status, other->status) << key.first << "/" << key.second;
    }
    EXPECT_EQ(a.topics, b.topics);
  }
  // The counts brute-forced from getMsg of every known message.
  core::TopicInfo CountedInfo(const std::string& topic) {
    core::TopicInfo want;
    want.topic = topic;
    const TimePoint now = clock_.Now();
    for (const auto& [t, id] : known_) {
      if (t != topic) continue;
      Result<core::Message> r = b_->Get(t, id);
      if (!r.has_value()) continue;
      testutil::Tally(want, r->status, r->record.trigger_time - now);
    }
    return want;
  }

  testutil::TempDir tmp_;
  base::ManualClock clock_{kT0};
  base::ManualScheduler sched_{&clock_};
  size_t load_chunk_ = 4096;
  std::unique_ptr<storage::RocksKv> kv_;
  std::unique_ptr<storage::MessageStore> store_;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<testutil::SyncBackend> b_;
  std::set<std::pair<std::string, std::string>> known_;
};

TEST_P(EngineRecoveryTest, EveryMessageSurvivesWithExactTimesAndStatus) {
  MustSend("t", "ready", 0);
  MustSend("t", "waiting", 30 * kSec);
  MustSend("t", "far", 2 * kHour, 4 * kHour);
  MustSend("t", "farther", 10 * kDay, 20 * kDay, 0);
  MustSend("t", "consuming", 0);
  MustSend("t", "acked", 0);
  MustSend("t", "deleted", 0);
  MustSend("t", "released", 5 * kSec);
  MustSend("t", "nacked", 0);
  MustSend("t", "far-deleted", 3 * kHour);
  MustSend("u", "other-topic", 45 * kMin);
  MustSend("u", "other-ready", -5);
  sched_.Advance(Millis(1'000));
  ASSERT_EQ(PullIds("t", 4, 10 * kMin),
            (std::vector<std::string>{"ready", "consuming", "acked", "deleted"}));
  ASSERT_TRUE(b_->Ack("t", "ready", false).ok());  // back to ready, retry 1
  ASSERT_TRUE(b_->Ack("t", "acked").ok());
  ASSERT_TRUE(b_->Delete("t", "deleted").ok());
  ASSERT_TRUE(b_->Delete("t", "released", /*release=*/true).ok());
  ASSERT_TRUE(b_->Delete("t", "far-deleted").ok());
  ASSERT_EQ(PullIds("t", 1, 10 * kMin), std::vector<std::string>{"nacked"});
  ASSERT_TRUE(b_->Ack("t", "nacked", false).ok());
  EXPECT_EQ(engine_->TEST_Tiers("t").far, 2);  // far, farther
  EXPECT_EQ(engine_->TEST_Tiers("u").far, 1);

  const View before = Snapshot();
  EXPECT_EQ(before.msgs.at({"t", "released"}), std::nullopt);
  Restart();
  ExpectSameView(before, Snapshot());
  EXPECT_EQ(engine_->TEST_Tiers("t").far, 2);  // still on disk only
  EXPECT_EQ(engine_->TEST_Tiers("u").far, 1);
  EXPECT_EQ(Info("t"), CountedInfo("t"));
  EXPECT_EQ(Info("u"), CountedInfo("u"));
  Result<std::vector<core::TopicInfo>> list = b_->List();
  ASSERT_TRUE(list.has_value());
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0], before.topics.at("t"));
  EXPECT_EQ((*list)[1], before.topics.at("u"));

  // Pulls go on in the same order: nacked messages are visible from their nack time.
  EXPECT_EQ(PullIds("t", 10), (std::vector<std::string>{"ready", "nacked"}));
  ASSERT_TRUE(b_->Ack("t", "ready").ok());
  ASSERT_TRUE(b_->Ack("t", "nacked").ok());
  // Over the next days every message in life is delivered once more; acked, deleted and released
  // ones never are.
  std::multiset<std::string> delivered;
  for (int i = 0; i < 12 * 24 * 4; ++i) {
    sched_.Advance(Millis(15 * kMin));
    for (const std::string& id : PullIds("t", 100, kDay)) delivered.insert(id);
  }
  EXPECT_EQ(delivered, (std::multiset<std::string>{"waiting", "consuming", "far", "farther"}));
}

TEST_P(EngineRecoveryTest, TimeThatPassedWhileDownTakesEffect) {
  MustSend("t", "waiting", 30 * kSec);
  MustSend("t", "consuming", 0);
  MustSend("t", "last-try", 0, 3'600'000, /*max_retry=*/0);
  MustSend("t", "expiring", 0, 20 * kSec);
  MustSend("t", "still-consuming", 0);
  ASSERT_EQ(PullIds("t", 2, 10 * kSec), (std::vector<std::string>{"consuming", "last-try"}));
  ASSERT_EQ(PullIds("t", 1, 10 * kMin), std::vector<std::string>{"expiring"});
  ASSERT_EQ(PullIds("t", 1, 10 * kMin), std::vector<std::string>{"still-consuming"});
  const core::Message consuming_before = *b_->Get("t", "consuming");

  Restart(kMin);  // down for a minute: deadlines, a trigger time and a ttl passed meanwhile
  EXPECT_EQ(StatusOf("t", "waiting"), MsgStatus::kReady);
  EXPECT_EQ(StatusOf("t", "consuming"), MsgStatus::kReady);
  EXPECT_EQ(StatusOf("t", "last-try"), MsgStatus::kRetryExhaust);
  EXPECT_EQ(StatusOf("t", "expiring"), MsgStatus::kRetryExhaust);  // delivered once, then ttl
  EXPECT_EQ(StatusOf("t", "still-consuming"), MsgStatus::kConsuming);
  const core::Message consuming_after = *b_->Get("t", "consuming");
  EXPECT_EQ(consuming_after.record, consuming_before.record);  // nothing shifted by downtime
  core::TopicInfo info = Info("t");
  EXPECT_EQ(info.ready, 2);
  EXPECT_EQ(info.waiting, 0);
  EXPECT_EQ(info.consuming, 1);
  EXPECT_EQ(info, CountedInfo("t"));
  // The ends are stored at their natural end times.
  Result<std::optional<core::MessageRecord>> last = store_->GetRecord("t", "last-try", false);
  ASSERT_TRUE(last.has_value() && last->has_value());
  EXPECT_EQ((*last)->phase, core::Phase::kEnded);
  EXPECT_EQ((*last)->ended_at, kT0 + Millis(10 * kSec));
  Result<std::optional<core::MessageRecord>> exp = store_->GetRecord("t", "expiring", false);
  ASSERT_TRUE(exp.has_value() && exp->has_value());
  EXPECT_EQ((*exp)->phase, core::Phase::kEnded);
  EXPECT_EQ((*exp)->ended_at, kT0 + Millis(20 * kSec));
  // Ready ones are delivered in visibility order: the ack deadline (10 s) before the trigger
  // time (30 s); the exhausted one never again.
  EXPECT_EQ(PullIds("t", 10), (std::vector<std::string>{"consuming", "waiting"}));
  EXPECT_EQ(b_->Get("t", "consuming")->record.retry, 2);
  EXPECT_TRUE(b_->Ack("t", "still-consuming").ok());
}

TEST_P(EngineRecoveryTest, LateAckAfterADeadlinePassedWhileDown) {
  MustSend("t", "a", 0);
  ASSERT_EQ(PullIds("t", 1, 5 * kSec), std::vector<std::string>{"a"});
  Restart(10 * kSec);
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kReady);
  EXPECT_TRUE(b_->Ack("t", "a").ok());  // a late ack still wins
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kConsumeOk);
  EXPECT_TRUE(PullIds("t").empty());
}

TEST_P(EngineRecoveryTest, CountsAndBucketsAfterRestart) {
  std::mt19937 rng(3);
  const std::vector<int64_t> delays = {0,         -10,       1,         59'999,    60'000,
                                       10 * kMin, 29 * kMin, 45 * kMin, 2 * kHour, 7 * kHour,
                                       2 * kDay,  8 * kDay,  31 * kDay, 400 * kDay};
  for (int i = 0; i < 300; ++i) {
    int64_t d = delays[rng() % delays.size()] + static_cast<int64_t>(rng() % 3);
    MustSend(i % 2 ? "t" : "u", "m" + std::to_string(i), d, 1000 * kDay);
  }
  PullIds("t", 5, kHour);
  const View before = Snapshot();
  for (const char* t : {"t", "u"}) {
    EXPECT_EQ(before.topics.at(t), CountedInfo(t));
    for (int b = 0; b < core::kBucketCount; ++b) EXPECT_GT(before.topics.at(t).buckets[b], 0) << b;
  }
  Restart();
  ExpectSameView(before, Snapshot());
  // And they stay true as time goes on, across bucket boundaries, with far messages loading.
  for (int64_t step : {kMin, 9 * kMin, 20 * kMin, 3 * kHour, kDay, 7 * kDay, 30 * kDay}) {
    sched_.Advance(Millis(step));
    EXPECT_EQ(Info("t"), CountedInfo("t")) << step;
    EXPECT_EQ(Info("u"), CountedInfo("u")) << step;
    Restart(step / 2);  // time passes while down too
    EXPECT_EQ(Info("t"), CountedInfo("t")) << step;
    EXPECT_EQ(Info("u"), CountedInfo("u")) << step;
  }
}

TEST_P(EngineRecoveryTest, FarBucketsStayExactToTheMillisecondAcrossEveryBoundary) {
  // Messages a few milliseconds either side of each bucket bound as of kT0 + 10 s, in two
  // topics and at many times per millisecond: stepping the clock one millisecond at a time
  // through kT0 + 10 s moves each across its bound at its own millisecond, restarts included.
  constexpr int64_t kCross = 10 * kSec;
  int i = 0;
  for (int k = 1; k < core::kBucketCount; ++k) {
    for (int64_t d = -3; d <= 3; ++d) {
      for (int copy = 0; copy <= (d == 0 ? 2 : 0); ++copy) {
        const int64_t delay = core::kBucketLowerBounds[k].count() + kCross + d;
        MustSend(i % 2 ? "t" : "u", "b" + std::to_string(i), delay, 1000 * kDay);
        ++i;
      }
    }
  }
  EXPECT_GT(engine_->TEST_Tiers("t").far, 0);
  EXPECT_EQ(Info("t"), CountedInfo("t"));
  sched_.AdvanceTo(kT0 + Millis(kCross - 4));
  for (int64_t at = kCross - 4; at <= kCross + 4; ++at) {
    sched_.AdvanceTo(kT0 + Millis(at));
    EXPECT_EQ(Info("t"), CountedInfo("t")) << "at +" << at;
    EXPECT_EQ(Info("u"), CountedInfo("u")) << "at +" << at;
    if (at == kCross - 1 || at == kCross + 1) {
      Restart(1);  // down for one millisecond: back at the next step's time
      EXPECT_EQ(Info("t"), CountedInfo("t")) << "after the restart at +" << at + 1;
      EXPECT_EQ(Info("u"), CountedInfo("u")) << "after the restart at +" << at + 1;
    }
  }
}

TEST_P(EngineRecoveryTest, FarMessagesLoadAsTimeAdvancesAndPullInOrder) {
  std::mt19937 rng(11);
  std::vector<std::pair<int64_t, std::string>> want;  // (trigger offset, id), send order = seq
  for (int i = 0; i < 200; ++i) {
    int64_t d = 2 * kMin + static_cast<int64_t>(rng() % (8 * kMin));
    if (i % 10 == 0) d = want.empty() ? d : want.back().first;  // some share a millisecond
    std::string id = "m" + std::to_string(i);
    MustSend("t", id, d);
    want.emplace_back(d, id);
  }
  std::stable_sort(want.begin(), want.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  EXPECT_EQ(engine_->TEST_Tiers("t").far, 200);
  EXPECT_EQ(engine_->TEST_Tiers("t").near, 0u);
  Restart();
  EXPECT_EQ(engine_->TEST_Tiers("t").far, 200);  // recovered from the histogram, not loaded
  EXPECT_EQ(engine_->TEST_Tiers("t").near, 0u);
  EXPECT_EQ(Info("t").waiting, 200);

  std::vector<std::string> got;
  int64_t last_far = 200;
  for (int64_t t = 0; t <= 11 * kMin; t += 7 * kSec) {
    sched_.AdvanceTo(kT0 + Millis(t));
    Engine::TierCounts tiers = engine_->TEST_Tiers("t");
    EXPECT_LE(tiers.far, last_far);
    last_far = tiers.far;
    // Nothing due within half a horizon is still far.
    int64_t due_within_half = 0;
    for (const auto& [d, id] : want) due_within_half += d <= t + kHorizon.count() / 2;
    EXPECT_LE(tiers.far, 200 - due_within_half) << "at +" << t;
    for (const std::string& id : PullIds("t", 1000, kDay)) got.push_back(id);
  }
  std::vector<std::string> want_ids;
  for (const auto& [d, id] : want) want_ids.push_back(id);
  EXPECT_EQ(got, want_ids);
  EXPECT_EQ(engine_->TEST_Tiers("t").far, 0);
}

TEST_P(EngineRecoveryTest, ABurstAtOneMillisecondLoadsInChunks) {
  Close();
  load_chunk_ = 16;
  Open();
  constexpr int kBurst = 3000;
  const int64_t due = 5 * kMin;
  for (int i = 0; i < kBurst / 2; ++i) MustSend("t", "a" + std::to_string(i), due);
  Restart();  // half before the restart, half after
  for (int i = 0; i < kBurst / 2; ++i) MustSend("t", "b" + std::to_string(i), due);
  EXPECT_EQ(engine_->TEST_Tiers("t").far, kBurst);

  // Half a horizon before: one operation loads one chunk...
  clock_.Set(kT0 + Millis(due) - kHorizon / 2);
  EXPECT_EQ(Info("t").waiting, kBurst);
  EXPECT_EQ(engine_->TEST_Tiers("t").far, kBurst - 16);
  EXPECT_EQ(Info("t").waiting, kBurst);
  EXPECT_EQ(engine_->TEST_Tiers("t").far, kBurst - 32);
  // ... a send into the same millisecond meanwhile (its own step loads a chunk first) goes
  // behind the cursor, far ...
  MustSend("t", "late", (kHorizon / 2).count());
  EXPECT_EQ(engine_->TEST_Tiers("t").far, kBurst - 48 + 1);
  // ... and the timer loads the rest, chunk after chunk, at once.
  sched_.RunDue();
  EXPECT_EQ(engine_->TEST_Tiers("t").far, 0);
  EXPECT_EQ(engine_->TEST_Tiers("t").near, static_cast<size_t>(kBurst + 1));
  EXPECT_EQ(Info("t").waiting, kBurst + 1);

  sched_.AdvanceTo(kT0 + Millis(due));
  std::vector<std::string> got;
  for (;;) {
    std::vector<std::string> ids = PullIds("t", 1000, kHour);
    if (ids.empty()) break;
    got.insert(got.end(), ids.begin(), ids.end());
  }
  ASSERT_EQ(got.size(), static_cast<size_t>(kBurst + 1));
  for (int i = 0; i < kBurst / 2; ++i) {  // in send order: the sequence continued past restart
    EXPECT_EQ(got[i], "a" + std::to_string(i));
    EXPECT_EQ(got[kBurst / 2 + i], "b" + std::to_string(i));
  }
  EXPECT_EQ(got.back(), "late");
  EXPECT_EQ(Info("t").consuming, kBurst + 1);
}

TEST_P(EngineRecoveryTest, RetentionPurgesAfterRestart) {
  MustSend("t", "a", 0);
  MustSend("t", "b", 0);
  MustSend("t", "keep", kDay);
  ASSERT_EQ(PullIds("t", 2).size(), 2u);
  ASSERT_TRUE(b_->Ack("t", "a").ok());  // retained until kT0 + 5 min
  sched_.Advance(Millis(2 * kMin));
  ASSERT_TRUE(b_->Ack("t", "b").ok());  // until kT0 + 7 min
  Restart();
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kConsumeOk);
  sched_.AdvanceTo(kT0 + kRetention - Millis(1));
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kConsumeOk);
  sched_.Advance(Millis(1));
  EXPECT_EQ(b_->Get("t", "a").error().code(), Errc::kNotFound);
  EXPECT_EQ(*store_->GetRecord("t", "a", true), std::nullopt);  // purged, not just hidden
  EXPECT_EQ(StatusOf("t", "b"), MsgStatus::kConsumeOk);
  // "b"'s purge time passes while down: gone at once, and purged by the first purge.
  Restart(10 * kMin);
  EXPECT_EQ(b_->Get("t", "b").error().code(), Errc::kNotFound);
  EXPECT_EQ(*store_->GetRecord("t", "b", true), std::nullopt);
  EXPECT_EQ(StatusOf("t", "keep"), MsgStatus::kWaiting);
}

TEST_P(EngineRecoveryTest, IdempotentSendAfterRestartAnswersTheExistingMessage) {
  core::Message near = MustSend("t", "near", 10 * kSec);
  core::Message far = MustSend("t", "far", kHour);
  Restart(kSec);
  Result<core::Message> again = b_->Send("t", "near", "other", Millis(0));
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->record, near.record);
  Result<core::Message> again_far = b_->Send("t", "far", "other", Millis(0));
  ASSERT_TRUE(again_far.has_value());
  EXPECT_EQ(again_far->record, far.record);
  EXPECT_EQ(Info("t").waiting, 2);
  // A new message sent after the restart orders after older ones of the same millisecond.
  core::Message fresh = MustSend("t", "fresh", kHour - kSec);
  EXPECT_GT(fresh.record.seq, far.record.seq);
  EXPECT_EQ(fresh.record.trigger_time, far.record.trigger_time);
  sched_.AdvanceTo(far.record.trigger_time);
  EXPECT_EQ(PullIds("t", 10), (std::vector<std::string>{"near", "far", "fresh"}));
}

INSTANTIATE_TEST_SUITE_P(Durability, EngineRecoveryTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& i) {
                           return i.param ? std::string("SyncWrites") : std::string("NoSync");
                         });

}  // namespace
}  // namespace chronoq::engine
