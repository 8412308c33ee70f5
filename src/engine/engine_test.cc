#include "engine/engine.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/scheduler.h"
#include "storage/memory/mem_kv.h"
#include "storage/message_store.h"
#include "tests/testutil/recording_sink.h"
#include "tests/testutil/sync_backend.h"

namespace chronoq::engine {
namespace {

using core::MsgStatus;

const TimePoint kT0 = FromEpochMs(1'700'000'040'000);
constexpr int64_t kMin = 60'000;
constexpr Millis kRetention(5 * kMin);
constexpr Millis kInactive(30 * kMin);

class RecordingListener final : public ReadyListener {
 public:
  void OnReady(std::string_view topic) override {
    std::lock_guard l(mu_);
    calls_.emplace_back(topic);
  }
  std::vector<std::string> Take() {
    std::lock_guard l(mu_);
    return std::exchange(calls_, {});
  }

 private:
  std::mutex mu_;
  std::vector<std::string> calls_;
};

class EngineTest : public ::testing::Test {
 protected:
  EngineTest()
      : clock_(kT0),
        sched_(&clock_),
        store_(&kv_, "ns"),
        engine_(std::make_unique<Engine>(Options(), &store_, &clock_, &sched_)),
        b_(engine_.get()) {
    EXPECT_TRUE(engine_->Recover().ok());
    sched_.RunDue();  // the first retention purge, scheduled by Recover
    engine_->SetReadyListener(&listener_);
    engine_->SetEventSink(&events_);
  }
  static EngineOptions Options() {
    EngineOptions o;
    o.retention = kRetention;
    o.topic_inactive = kInactive;
    o.shards = 4;
    return o;
  }
  ~EngineTest() override {
    if (engine_) engine_->SetReadyListener(nullptr);
    if (engine_) engine_->SetEventSink(nullptr);
  }

  TimePoint Now() const { return clock_.Now(); }
  void Advance(int64_t ms) { sched_.Advance(Millis(ms)); }
  core::Message MustSend(const std::string& topic, const std::string& id, int64_t delay_ms,
                         int64_t ttl_ms = 3'600'000, int32_t max_retry = 10,
                         const std::string& payload = "payload") {
    Result<core::Message> r =
        b_.Send(topic, id, payload, Millis(delay_ms), Millis(ttl_ms), max_retry);
    EXPECT_TRUE(r.has_value()) << r.error().ToString();
    return r.has_value() ? *r : core::Message{};
  }
  std::vector<core::Message> MustPull(const std::string& topic, int32_t batch = 1,
                                      int64_t ack_ms = 30'000) {
    Result<std::vector<core::Message>> r = b_.Pull(topic, batch, Millis(ack_ms));
    EXPECT_TRUE(r.has_value()) << r.error().ToString();
    return r.has_value() ? *r : std::vector<core::Message>{};
  }
  MsgStatus StatusOf(const std::string& topic, const std::string& id) {
    Result<core::Message> r = b_.Get(topic, id);
    EXPECT_TRUE(r.has_value()) << r.error().ToString();
    return r.has_value() ? r->status : MsgStatus::kWaiting;
  }
  std::vector<std::string> ListedTopics() {
    std::vector<std::string> names;
    Result<std::vector<core::TopicInfo>> list = b_.List();
    EXPECT_TRUE(list.has_value());
    if (!list.has_value()) return names;
    for (const core::TopicInfo& i : *list) names.push_back(i.topic);
    return names;
  }
  // Keys of one column family in the store (every namespace).
  size_t Stored(storage::Cf cf) {
    size_t n = 0;
    for (auto it = kv_.Scan(cf, "", ""); it->Valid(); it->Next()) ++n;
    return n;
  }
  // Messages stored: a message's key is in `sent` (since its send), `records` (since its first
  // change) or both.
  size_t StoredRecords() {
    std::set<std::string> keys;
    for (storage::Cf cf : {storage::Cf::kRecords, storage::Cf::kSent}) {
      for (auto it = kv_.Scan(cf, "", ""); it->Valid(); it->Next()) keys.emplace(it->key());
    }
    return keys.size();
  }
  base::ManualClock clock_;
  base::ManualScheduler sched_;
  storage::MemKv kv_;
  storage::MessageStore store_;
  testutil::RecordingSink events_;
  RecordingListener listener_;
  std::unique_ptr<Engine> engine_;
  testutil::SyncBackend b_;
};

// ---- Ready listener ----

TEST_F(EngineTest, ListenerCalledOnSendReadyNow) {
  MustSend("t", "a", 0);
  EXPECT_EQ(listener_.Take(), std::vector<std::string>{"t"});
  MustSend("t", "b", -100);
  EXPECT_EQ(listener_.Take(), std::vector<std::string>{"t"});
  MustSend("t", "c", 1);  // waiting: no call
  EXPECT_TRUE(listener_.Take().empty());
}

TEST_F(EngineTest, ListenerCalledAtTriggerTimeNotBefore) {
  MustSend("t", "a", 1'000);
  EXPECT_TRUE(listener_.Take().empty());
  Advance(999);
  EXPECT_TRUE(listener_.Take().empty());
  Advance(1);
  EXPECT_EQ(listener_.Take(), std::vector<std::string>{"t"});
  EXPECT_EQ(Now(), kT0 + Millis(1'000));
}

TEST_F(EngineTest, ListenerCalledByTheTimerWhenTheSchedulerIsAdvancedPastTrigger) {
  MustSend("t", "a", 1'000);
  clock_.Advance(Millis(5'000));  // the clock alone wakes nobody
  EXPECT_TRUE(listener_.Take().empty());
  sched_.RunDue();
  EXPECT_EQ(listener_.Take(), std::vector<std::string>{"t"});
}

TEST_F(EngineTest, ListenerCalledOnNack) {
  MustSend("t", "a", 0);
  listener_.Take();
  ASSERT_EQ(MustPull("t").size(), 1u);
  EXPECT_TRUE(listener_.Take().empty());
  ASSERT_TRUE(b_.Ack("t", "a", false).ok());
  EXPECT_EQ(listener_.Take(), std::vector<std::string>{"t"});
}

TEST_F(EngineTest, ListenerCalledOnAckTimeout) {
  MustSend("t", "a", 0);
  listener_.Take();
  MustPull("t", 1, 5'000);
  Advance(4'999);
  EXPECT_TRUE(listener_.Take().empty());
  Advance(1);
  EXPECT_EQ(listener_.Take(), std::vector<std::string>{"t"});
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kReady);
}

TEST_F(EngineTest, ListenerNotCalledWhenLastDeliveryTimesOut) {
  MustSend("t", "a", 0, 3'600'000, /*max_retry=*/0);
  listener_.Take();
  MustPull("t", 1, 5'000);
  Advance(10'000);
  EXPECT_TRUE(listener_.Take().empty());
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kRetryExhaust);
}

TEST_F(EngineTest, ListenerNotCalledForNackOfLastDeliveryAckOrDelete) {
  MustSend("t", "a", 0, 3'600'000, 0);
  MustSend("t", "b", 0);
  MustSend("t", "c", 10);
  listener_.Take();
  MustPull("t", 2);
  ASSERT_TRUE(b_.Ack("t", "a", false).ok());  // last delivery: ends as 6
  ASSERT_TRUE(b_.Ack("t", "b", true).ok());
  ASSERT_TRUE(b_.Delete("t", "c").ok());
  EXPECT_TRUE(listener_.Take().empty());
  Advance(100);  // "c" would have triggered at 10
  EXPECT_TRUE(listener_.Take().empty());
}

TEST_F(EngineTest, ListenerClearedIsNotCalled) {
  engine_->SetReadyListener(nullptr);
  MustSend("t", "a", 0);
  EXPECT_TRUE(listener_.Take().empty());
}

// ---- Timers ----

TEST_F(EngineTest, OneTimerPerTopic) {
  for (int i = 0; i < 50; ++i) MustSend("t", "m" + std::to_string(i), 1'000 + i * 10);
  EXPECT_EQ(sched_.pending(), 1u);
  MustSend("u", "x", 5'000);
  EXPECT_EQ(sched_.pending(), 2u);
}

TEST_F(EngineTest, DestroyingTheEngineCancelsItsTimers) {
  MustSend("t", "a", 1'000);
  MustSend("u", "a", 1'000);
  ASSERT_GT(sched_.pending(), 0u);
  engine_->SetReadyListener(nullptr);
  engine_.reset();
  EXPECT_EQ(sched_.pending(), 0u);
  Advance(10'000'000);  // nothing runs against the destroyed engine
}

TEST_F(EngineTest, StatusTrueEvenBeforeTimersRun) {
  MustSend("t", "a", 1'000, 2'000);
  clock_.Advance(Millis(1'500));  // no timer has run
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kReady);
  EXPECT_EQ(b_.Info("t")->ready, 1);
  EXPECT_EQ(b_.Info("t")->waiting, 0);
  clock_.Advance(Millis(1'500));  // past expiry, still no timer
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kExpire);
  EXPECT_EQ(b_.Info("t")->ready, 0);
}

// ---- Topics ----

TEST_F(EngineTest, IdleEmptyTopicIsHiddenThenForgotten) {
  MustSend("t", "a", 0);
  MustPull("t");
  ASSERT_TRUE(b_.Ack("t", "a").ok());                                    // last activity at kT0
  MustSend("keep", "w", 40LL * 24 * 3'600'000, 100LL * 24 * 3'600'000);  // waiting for 40 days
  EXPECT_EQ(ListedTopics(), (std::vector<std::string>{"keep", "t"}));
  Advance(kInactive.count() - 1);
  EXPECT_EQ(ListedTopics(), (std::vector<std::string>{"keep", "t"}));
  Advance(1);
  EXPECT_EQ(ListedTopics(), std::vector<std::string>{"keep"});  // a topic with messages stays
  // Forgotten: its ended message went with its retention, the store holds only "keep"'s record.
  EXPECT_EQ(b_.Get("t", "a").error().code(), Errc::kNotFound);
  EXPECT_EQ(StoredRecords(), 1u);
  EXPECT_EQ(Stored(storage::Cf::kRetention), 0u);
  EXPECT_EQ(sched_.pending(), 1u);  // only "keep"'s timer
  // Unknown again: counts are zero, pulls are empty, and a send brings it back.
  EXPECT_EQ(b_.Info("t")->ready, 0);
  EXPECT_TRUE(MustPull("t").empty());
  EXPECT_EQ(ListedTopics(), std::vector<std::string>{"keep"});
  MustSend("t", "b", 0);
  EXPECT_EQ(ListedTopics(), (std::vector<std::string>{"keep", "t"}));
}

TEST_F(EngineTest, ActivityKeepsATopicListed) {
  MustSend("t", "a", 0);
  MustPull("t");
  ASSERT_TRUE(b_.Ack("t", "a").ok());
  Advance(kInactive.count() - 10);
  MustPull("t");  // an empty pull is activity too
  Advance(20);
  EXPECT_EQ(ListedTopics(), std::vector<std::string>{"t"});
  Advance(kInactive.count());
  EXPECT_TRUE(ListedTopics().empty());
}

TEST_F(EngineTest, MessageExpiringLongAfterIdleTopicDoesNotSpinAndIsPurged) {
  // Expires after the topic turned inactive: the topic keeps the ended record for its retention,
  // then is forgotten. (This used to re-fire the topic timer forever.)
  MustSend("t", "a", 0, 3'600'000);
  Advance(3'600'000);
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kExpire);
  EXPECT_TRUE(ListedTopics().empty());
  EXPECT_EQ(sched_.pending(), 1u);
  Advance(kRetention.count());
  EXPECT_EQ(b_.Get("t", "a").error().code(), Errc::kNotFound);
  EXPECT_EQ(StoredRecords(), 0u);
  EXPECT_EQ(Stored(storage::Cf::kPayloads), 0u);
  EXPECT_EQ(Stored(storage::Cf::kSent), 0u);
  EXPECT_EQ(Stored(storage::Cf::kRetention), 0u);
  EXPECT_EQ(sched_.pending(), 0u);
}

// ---- Retention ----

TEST_F(EngineTest, EndedMessageReadableUntilRetentionEnds) {
  MustSend("t", "a", 0);
  MustPull("t");
  Advance(1'000);
  ASSERT_TRUE(b_.Ack("t", "a").ok());
  TimePoint ended = Now();
  sched_.AdvanceTo(ended + kRetention - Millis(1));
  Result<core::Message> got = b_.Get("t", "a");
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->status, MsgStatus::kConsumeOk);
  EXPECT_EQ(got->record.payload, "payload");
  Advance(1);
  EXPECT_EQ(b_.Get("t", "a").error().code(), Errc::kNotFound);
  EXPECT_EQ(StoredRecords(), 0u);
  EXPECT_EQ(Stored(storage::Cf::kRetention), 0u);
}

TEST_F(EngineTest, ExpiredMessageRetainedFromItsExpireTime) {
  MustSend("t", "a", 1'000, 2'000);  // expires at 3,000
  Advance(3'000 + kRetention.count() - 1);
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kExpire);
  Advance(1);
  EXPECT_EQ(b_.Get("t", "a").error().code(), Errc::kNotFound);
}

TEST_F(EngineTest, DeleteWithReleaseForgetsAtOnce) {
  MustSend("t", "a", 1'000);
  ASSERT_TRUE(b_.Delete("t", "a", /*release=*/true).ok());
  EXPECT_EQ(b_.Get("t", "a").error().code(), Errc::kNotFound);
  EXPECT_EQ(StoredRecords(), 0u);
  EXPECT_EQ(Stored(storage::Cf::kPayloads), 0u);
  EXPECT_EQ(Stored(storage::Cf::kSent), 0u);
  EXPECT_EQ(Stored(storage::Cf::kVis), 0u);
  EXPECT_EQ(Stored(storage::Cf::kHist), 0u);
  EXPECT_EQ(Stored(storage::Cf::kRetention), 0u);
  EXPECT_EQ(b_.Delete("t", "a", true).code(), Errc::kNotFound);
  EXPECT_EQ(b_.Info("t")->waiting, 0);
}

TEST_F(EngineTest, DeleteWithoutReleaseKeepsForRetention) {
  MustSend("t", "a", 1'000);
  ASSERT_TRUE(b_.Delete("t", "a").ok());
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kDelete);
  Advance(kRetention.count());
  EXPECT_EQ(b_.Get("t", "a").error().code(), Errc::kNotFound);
}

// ---- Send ----

TEST_F(EngineTest, IdempotentSendReturnsExistingUnchanged) {
  core::Message first = MustSend("t", "a", 10'000, 60'000, 3, "first");
  Advance(500);
  core::Message again = MustSend("t", "a", 0, 1'000, 7, "second");
  EXPECT_EQ(again.record, first.record);
  EXPECT_EQ(again.record.payload, "first");
  EXPECT_EQ(again.status, MsgStatus::kWaiting);
  EXPECT_EQ(StoredRecords(), 1u);
  Advance(9'500);
  MustPull("t");
  core::Message while_consuming = MustSend("t", "a", 0, 1'000, 7, "third");
  EXPECT_EQ(while_consuming.status, MsgStatus::kConsuming);
  EXPECT_EQ(while_consuming.record.retry, 1);
  EXPECT_EQ(while_consuming.record.payload, "first");
}

TEST_F(EngineTest, SendReplacesEndedMessageAndItsRetention) {
  MustSend("t", "a", 0, 60'000, 3, "old");
  MustPull("t");
  ASSERT_TRUE(b_.Ack("t", "a").ok());
  Advance(1'000);
  core::Message fresh = MustSend("t", "a", 10 * kMin, 3'600'000, 3, "new");
  EXPECT_EQ(fresh.status, MsgStatus::kWaiting);
  EXPECT_EQ(fresh.record.retry, 0);
  EXPECT_EQ(fresh.record.produce_time, Now());
  EXPECT_EQ(fresh.record.payload, "new");
  // The old record's purge time passes: the replacement must not be purged with it.
  Advance(kRetention.count());
  Result<core::Message> got = b_.Get("t", "a");
  ASSERT_TRUE(got.has_value()) << got.error().ToString();
  EXPECT_EQ(got->record.payload, "new");
  EXPECT_EQ(got->status, MsgStatus::kWaiting);
}

TEST_F(EngineTest, EmptyMsgIdIsGenerated) {
  core::Message a = MustSend("t", "", 0);
  core::Message b = MustSend("t", "", 0);
  EXPECT_EQ(a.record.msg_id.size(), 32u);
  EXPECT_NE(a.record.msg_id, b.record.msg_id);
  EXPECT_EQ(b_.Info("t")->ready, 2);
}

TEST_F(EngineTest, IndexesFollowEveryStateChange) {
  using storage::VisKind;
  auto vis = [&](VisKind kind) {
    std::vector<std::string> ids;
    EXPECT_TRUE(store_
                    .ScanVis("t", kind, kTimeMin, 0, kTimeMax,
                             [&](core::MessageRecord&& r) {
                               ids.push_back(r.msg_id);
                               return true;
                             })
                    .ok());
    return ids;
  };
  auto hist = [&] {
    std::vector<std::pair<int64_t, int64_t>> out;
    EXPECT_TRUE(
        store_
            .ScanHist("t", [&](TimePoint t, int64_t n) { out.emplace_back((t - kT0).count(), n); })
            .ok());
    return out;
  };
  using Hist = std::vector<std::pair<int64_t, int64_t>>;
  MustSend("t", "a", 0);
  MustSend("t", "b", 5'000);
  MustSend("t", "c", 5'000);
  EXPECT_EQ(vis(VisKind::kPending), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(hist(), (Hist{{0, 1}, {5'000, 2}}));  // pending messages, by visibility time
  MustPull("t", 1, 1'000);                        // "a" delivered: out of the histogram
  EXPECT_EQ(vis(VisKind::kPending), (std::vector<std::string>{"b", "c"}));
  EXPECT_EQ(vis(VisKind::kDelivered), std::vector<std::string>{"a"});
  EXPECT_EQ(hist(), (Hist{{5'000, 2}}));
  clock_.Advance(Millis(200));
  ASSERT_TRUE(b_.Ack("t", "a", false).ok());  // nacked: pending again, visible from now
  EXPECT_EQ(vis(VisKind::kPending), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_TRUE(vis(VisKind::kDelivered).empty());
  EXPECT_EQ(hist(), (Hist{{200, 1}, {5'000, 2}}));
  ASSERT_TRUE(b_.Delete("t", "b").ok());
  ASSERT_TRUE(b_.Delete("t", "c", /*release=*/true).ok());
  EXPECT_EQ(vis(VisKind::kPending), std::vector<std::string>{"a"});
  EXPECT_EQ(hist(), (Hist{{200, 1}}));
  EXPECT_EQ(Stored(storage::Cf::kRetention), 1u);  // "b", retained; "c" released
  MustPull("t");
  ASSERT_TRUE(b_.Ack("t", "a").ok());
  EXPECT_TRUE(vis(VisKind::kPending).empty());
  EXPECT_TRUE(vis(VisKind::kDelivered).empty());
  EXPECT_EQ(Stored(storage::Cf::kRetention), 2u);
}

TEST_F(EngineTest, MessagesBeyondTheHorizonStayOnDisk) {
  // Default horizon: one minute. A topic created by a send holds only what is due within it.
  MustSend("t", "near", 30'000);
  MustSend("t", "far1", 10 * kMin);
  MustSend("t", "far2", 10 * kMin, 3'600'000, 10, "body2");
  EXPECT_EQ(engine_->TEST_Tiers("t").near, 1u);
  EXPECT_EQ(engine_->TEST_Tiers("t").far, 2);
  core::TopicInfo info = *b_.Info("t");
  EXPECT_EQ(info.waiting, 3);
  EXPECT_EQ(info.buckets[0], 1);
  EXPECT_EQ(info.buckets[2], 2);  // [10 min, 30 min)
  EXPECT_EQ(StatusOf("t", "far1"), MsgStatus::kWaiting);
  EXPECT_EQ(MustSend("t", "far2", 0, 1'000, 0, "other").record.payload, "body2");  // idempotent
  // Loaded half a horizon before they are due, by the topic's timer.
  sched_.AdvanceTo(kT0 + Millis(10 * kMin) - Millis(30'001));
  EXPECT_EQ(engine_->TEST_Tiers("t").far, 2);
  Advance(1);
  EXPECT_EQ(engine_->TEST_Tiers("t").far, 0);
  EXPECT_EQ(engine_->TEST_Tiers("t").near, 3u);  // "near" (ready since 30 s), far1, far2
  Advance(30'000);
  EXPECT_EQ(MustPull("t", 10).size(), 3u);
}

// ---- Events (what time does, for the service's recorders) ----

TEST_F(EngineTest, ReportsEachTriggerOnce) {
  MustSend("t", "a", 1'000);
  MustSend("t", "b", 1'000);
  MustSend("t", "c", 2'000);
  MustSend("t", "now", 0);  // ready at once: not a trigger
  Advance(2'500);
  backend::TopicEvents e = events_.For("t");
  EXPECT_EQ(e.triggered, 3);
  EXPECT_EQ(e.ready_gap_max_ms, 0);  // the timers ran exactly on time
  EXPECT_EQ(e.expired + e.retries_exhausted, 0);
  EXPECT_EQ(e.ack_timeouts, 0);
  Advance(60'000);
  EXPECT_EQ(events_.For("t").triggered, 3);  // not again
}

TEST_F(EngineTest, ReportsTimeoutsAndEndsOfLife) {
  MustSend("t", "expire", 0, 10'000);
  MustSend("t", "timeout", 0, 3'600'000, 1);
  MustSend("t", "nacklast", 0, 3'600'000, 0);
  ASSERT_EQ(MustPull("t", 1, 2'000).size(), 1u);  // "expire" is oldest: delivered, then...
  ASSERT_EQ(MustPull("t", 2, 2'000).size(), 2u);
  ASSERT_TRUE(b_.Ack("t", "nacklast", false).ok());  // ends at once: retries exhausted
  EXPECT_EQ(events_.For("t").retries_exhausted, 1);
  Advance(2'000);  // "expire" and "timeout" time out: 2 timeouts, both ready again
  MustPull("t", 2, 2'000);
  Advance(2'000);   // both time out again (2 more); "timeout" was on its last delivery: it ends
  Advance(10'000);  // "expire", ready since 4,000, reaches its ttl: it ends (delivered before)
  backend::TopicEvents e = events_.For("t");
  EXPECT_EQ(e.ack_timeouts, 4);
  EXPECT_EQ(e.retries_exhausted, 3);
  EXPECT_EQ(e.expired, 0);
  EXPECT_EQ(e.triggered, 0);
  EXPECT_EQ(StatusOf("t", "expire"), MsgStatus::kRetryExhaust);
  EXPECT_EQ(StatusOf("t", "timeout"), MsgStatus::kRetryExhaust);
}

TEST_F(EngineTest, ReportsExpirationsOfMessagesNeverDelivered) {
  MustSend("t", "x", 0, 1'000);
  MustSend("t", "y", 5'000, 1'000);
  Advance(10'000);
  backend::TopicEvents e = events_.For("t");
  EXPECT_EQ(e.expired, 2);
  EXPECT_EQ(e.retries_exhausted, 0);
  EXPECT_EQ(StatusOf("t", "x"), MsgStatus::kExpire);
}

// ---- Persistence: the store holds every state change (what a durable store recovers from) ----

// Near messages hold a payload of at most kHeldPayloadBytes, so that a pull reads none from the
// store (docs/benchmarks.md, "Fourth session: bursts"); larger and empty ones are read. Whatever
// is held, a pull delivers each message's current payload.
TEST_F(EngineTest, PullDeliversHeldAndStoredPayloadsAlike) {
  const std::string large(engine::kHeldPayloadBytes + 1, 'L');
  const std::string limit(engine::kHeldPayloadBytes, 'M');
  MustSend("t", "small", 0, 3'600'000, 10, "small body");
  MustSend("t", "large", 0, 3'600'000, 10, large);
  MustSend("t", "limit", 0, 3'600'000, 10, limit);
  MustSend("t", "empty", 0, 3'600'000, 10, "");
  std::map<std::string, std::string> got;
  for (const core::Message& m : MustPull("t", 10)) got[m.record.msg_id] = m.record.payload;
  EXPECT_EQ(got, (std::map<std::string, std::string>{
                     {"small", "small body"}, {"large", large}, {"limit", limit}, {"empty", ""}}));
  // Redelivered after a nack (the delivery dropped the held payload): read from the store.
  for (const char* id : {"large", "limit", "empty"}) ASSERT_TRUE(b_.Ack("t", id).ok());
  ASSERT_TRUE(b_.Ack("t", "small", /*ack=*/false).ok());
  Advance(60'000);
  std::vector<core::Message> again = MustPull("t", 10);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].record.payload, "small body");
}

TEST_F(EngineTest, PullDeliversAnUpdatedPayloadNotTheOneHeldAtTheSend) {
  MustSend("t", "a", 60'000, 3'600'000, 10, "old");
  MustSend("t", "b", 60'000, 3'600'000, 10, "kept");
  core::MessageUpdate new_payload;
  new_payload.payload = "new";
  ASSERT_TRUE(b_.Update("t", "a", new_payload).has_value());
  core::MessageUpdate earlier;  // a change that leaves the payload as it is
  earlier.trigger_time = Now() + Millis(30'000);
  ASSERT_TRUE(b_.Update("t", "b", earlier).has_value());
  Advance(60'000);
  std::map<std::string, std::string> got;
  for (const core::Message& m : MustPull("t", 10)) got[m.record.msg_id] = m.record.payload;
  EXPECT_EQ(got, (std::map<std::string, std::string>{{"a", "new"}, {"b", "kept"}}));
}

TEST_F(EngineTest, EveryStateChangeIsPersisted) {
  // What recovery reads: a delivered message's metadata is its kind-1 vis entry (a delivery
  // writes no `records` entry, docs/storage-format.md); any other state is its record.
  auto stored = [&](const std::string& id) {
    Result<std::optional<core::MessageRecord>> r = store_.GetRecord("t", id, /*with_payload=*/true);
    EXPECT_TRUE(r.has_value() && r->has_value()) << id;
    if (!r.has_value() || !r->has_value()) return core::MessageRecord{};
    core::MessageRecord out = std::move(**r);
    EXPECT_TRUE(store_
                    .ScanVis("t", storage::VisKind::kDelivered, kTimeMin, 0, kTimeMax,
                             [&](core::MessageRecord&& v) {
                               if (v.msg_id != id || v.seq != out.seq) return true;
                               v.payload = std::move(out.payload);
                               out = std::move(v);
                               return false;
                             })
                    .ok());
    return out;
  };
  core::Message sent = MustSend("t", "a", 0, 10'000, 3, "body");
  EXPECT_EQ(stored("a"), sent.record);
  core::Message pulled = MustPull("t", 1, 2'000).at(0);
  EXPECT_EQ(stored("a"), pulled.record);
  EXPECT_EQ(stored("a").phase, core::Phase::kDelivered);
  ASSERT_TRUE(b_.Ack("t", "a", false).ok());
  EXPECT_EQ(stored("a").phase, core::Phase::kPending);
  EXPECT_EQ(stored("a").visible_at, Now());
  MustPull("t", 1, 2'000);
  ASSERT_TRUE(b_.Ack("t", "a").ok());
  EXPECT_EQ(stored("a").phase, core::Phase::kEnded);
  EXPECT_EQ(stored("a").end_status, MsgStatus::kConsumeOk);
  EXPECT_EQ(stored("a").payload, "body");

  MustSend("t", "b", 0, 10'000);
  MustSend("t", "c", 0, 10'000, 0);
  MustPull("t", 2, 2'000);
  Advance(2'000);  // "c"'s only delivery times out
  EXPECT_EQ(stored("c").phase, core::Phase::kEnded);
  EXPECT_EQ(stored("c").end_status, MsgStatus::kRetryExhaust);
  EXPECT_EQ(stored("b").phase, core::Phase::kDelivered);  // timed out, but not ended
  Advance(8'000);                                         // "b" reaches its ttl
  EXPECT_EQ(stored("b").phase, core::Phase::kEnded);
  EXPECT_EQ(stored("b").end_status, MsgStatus::kRetryExhaust);
  EXPECT_EQ(stored("b").ended_at, kT0 + Millis(10'000));

  MustSend("t", "d", 1'000);
  ASSERT_TRUE(b_.Delete("t", "d").ok());
  EXPECT_EQ(stored("d").end_status, MsgStatus::kDelete);
}

// ---- Update and Count of far messages (on disk only, beyond the memory horizon) ----

class EngineFarTest : public EngineTest {
 protected:
  // An engine recovered from the same store agrees with this one: same records, same counts.
  void ExpectSameAfterRecovery(const std::vector<std::string>& ids) {
    storage::MessageStore store(&kv_, "ns");
    base::ManualScheduler sched(&clock_);  // never advanced
    Engine fresh(Options(), &store, &clock_, &sched);
    ASSERT_TRUE(fresh.Recover().ok());
    testutil::SyncBackend b(&fresh);
    for (const std::string& id : ids) {
      Result<core::Message> mine = b_.Get("t", id);
      Result<core::Message> theirs = b.Get("t", id);
      ASSERT_TRUE(mine.has_value() && theirs.has_value()) << id;
      EXPECT_EQ(mine->record, theirs->record) << id;
      EXPECT_EQ(mine->status, theirs->status) << id;
    }
    EXPECT_EQ(*b_.Info("t"), *b.Info("t"));
    EXPECT_EQ(engine_->TEST_Tiers("t").far, fresh.TEST_Tiers("t").far);
  }
  core::MessageUpdate TriggerIn(int64_t ms) {
    core::MessageUpdate u;
    u.trigger_time = Now() + Millis(ms);
    return u;
  }
};

TEST_F(EngineFarTest, UpdateOfAFarMessageStaysFarOrComesNear) {
  MustSend("t", "far", 10 * kMin, 3'600'000, 10, "body");
  MustSend("t", "other", 10 * kMin);
  ASSERT_EQ(engine_->TEST_Tiers("t").far, 2);
  // Later, still beyond the horizon: counted at its new time, nothing held.
  Result<core::Message> r = b_.Update("t", "far", TriggerIn(40 * kMin));
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_EQ(r->status, MsgStatus::kWaiting);
  EXPECT_EQ(r->record.payload, "body");
  EXPECT_EQ(engine_->TEST_Tiers("t").far, 2);
  EXPECT_EQ(engine_->TEST_Tiers("t").near, 0u);
  core::TopicInfo info = *b_.Info("t");
  EXPECT_EQ(info.waiting, 2);
  EXPECT_EQ(info.buckets[2], 1);  // [10 min, 30 min)
  EXPECT_EQ(info.buckets[3], 1);  // [30 min, 1 h)
  ExpectSameAfterRecovery({"far", "other"});
  // Trigger now: loaded, ready, consumable at once, and the listener hears of it.
  listener_.Take();
  core::MessageUpdate now;
  now.trigger_time = Now();
  now.priority = 3;
  r = b_.Update("t", "far", now);
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_EQ(r->status, MsgStatus::kReady);
  EXPECT_EQ(listener_.Take(), std::vector<std::string>{"t"});
  EXPECT_EQ(engine_->TEST_Tiers("t").far, 1);
  EXPECT_EQ(engine_->TEST_Tiers("t").near, 1u);
  ExpectSameAfterRecovery({"far", "other"});
  std::vector<core::Message> got = MustPull("t", 10);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].record.msg_id, "far");
  EXPECT_EQ(got[0].record.priority, 3);
  EXPECT_EQ(got[0].record.payload, "body");
}

TEST_F(EngineFarTest, UpdateBeyondTheHorizonSendsANearMessageToDisk) {
  MustSend("t", "a", 30'000);
  ASSERT_EQ(engine_->TEST_Tiers("t").near, 1u);
  core::MessageUpdate u = TriggerIn(20 * kMin);
  u.payload = "new body";
  Result<core::Message> r = b_.Update("t", "a", u);
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_EQ(engine_->TEST_Tiers("t").near, 0u);
  EXPECT_EQ(engine_->TEST_Tiers("t").far, 1);
  ExpectSameAfterRecovery({"a"});
  Advance(20 * kMin - 10'000);  // loaded as it comes near (half a horizon before)
  EXPECT_EQ(engine_->TEST_Tiers("t").far, 0);
  EXPECT_TRUE(MustPull("t").empty());
  Advance(10'000);
  std::vector<core::Message> got = MustPull("t");
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].record.payload, "new body");
}

TEST_F(EngineFarTest, CountOfAFarMessage) {
  core::NewMessage m{"t", "c", "body", Millis(10 * kMin), Millis(3'600'000), 3};
  m.count_trigger = 5;
  ASSERT_TRUE(b_.Send(std::move(m)).has_value());
  ASSERT_EQ(engine_->TEST_Tiers("t").far, 1);
  Result<core::Message> r = b_.Count("t", "c", 2);  // not reached: stays on disk, counted
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_EQ(r->record.count, 2);
  EXPECT_EQ(r->status, MsgStatus::kWaiting);
  EXPECT_EQ(engine_->TEST_Tiers("t").far, 1);
  EXPECT_EQ(b_.Get("t", "c")->record.count, 2);
  ExpectSameAfterRecovery({"c"});
  listener_.Take();
  r = b_.Count("t", "c", 3);  // reached: consumable now
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_EQ(r->status, MsgStatus::kReady);
  EXPECT_EQ(r->record.payload, "body");
  EXPECT_EQ(listener_.Take(), std::vector<std::string>{"t"});
  EXPECT_EQ(engine_->TEST_Tiers("t").far, 0);
  EXPECT_EQ(b_.Info("t")->ready, 1);
  ExpectSameAfterRecovery({"c"});
  ASSERT_EQ(MustPull("t").size(), 1u);
  EXPECT_EQ(b_.Count("t", "c", 1).error().code(), Errc::kInvalidState);
}

}  // namespace
}  // namespace chronoq::engine
