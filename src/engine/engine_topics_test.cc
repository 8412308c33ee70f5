// Topic configuration in the Engine (engine_topics.cc): the stored layer (durable, resolved by
// every operation), capacity, pause, retry intervals, purge, dead letters and redrive.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "base/scheduler.h"
#include "engine/engine.h"
#include "storage/memory/mem_kv.h"
#include "storage/message_store.h"
#include "tests/testutil/await.h"
#include "tests/testutil/recording_sink.h"
#include "tests/testutil/sync_backend.h"

namespace chronoq::engine {
namespace {

using core::MsgStatus;

const TimePoint kStart = FromEpochMs(1'700'000'100'000);

using testutil::Await;

class Wakes final : public ReadyListener {
 public:
  void OnReady(std::string_view topic) override {
    std::lock_guard l(mu_);
    topics_.emplace_back(topic);
  }
  std::vector<std::string> Take() {
    std::lock_guard l(mu_);
    return std::exchange(topics_, {});
  }

 private:
  std::mutex mu_;
  std::vector<std::string> topics_;
};

class EngineTopicsTest : public ::testing::Test {
 protected:
  EngineTopicsTest() : clock_(kStart), sched_(&clock_), store_(&kv_, "ns") { Start(); }
  ~EngineTopicsTest() override { Stop(); }

  // A new engine over the same store: what a restart sees.
  void Start() {
    EngineOptions o;
    o.retention = Millis(300'000);
    o.shards = 4;
    engine_ = std::make_unique<Engine>(o, &store_, &clock_, &sched_);
    engine_->SetTopicDefaults(&defaults_);
    ASSERT_TRUE(engine_->Recover().ok());
    engine_->SetReadyListener(&wakes_);
    engine_->SetEventSink(&events_);
    b_ = std::make_unique<testutil::SyncBackend>(engine_.get());
  }
  void Stop() {
    if (engine_ == nullptr) return;
    engine_->SetReadyListener(nullptr);
    engine_->SetEventSink(nullptr);
    b_.reset();
    engine_.reset();
  }
  void Restart() {
    Stop();
    Start();
  }

  Result<core::TopicConfig> Set(const std::string& topic, core::TopicConfig change) {
    return Await<Result<core::TopicConfig>>(
        [&](auto cb) { engine_->SetTopicConfig(topic, change, std::move(cb)); });
  }
  core::TopicConfig Stored(const std::string& topic) {
    Result<core::TopicConfig> r = Await<Result<core::TopicConfig>>(
        [&](auto cb) { engine_->GetTopicConfig(topic, std::move(cb)); });
    EXPECT_TRUE(r.has_value());
    return r.has_value() ? *r : core::TopicConfig{};
  }
  Status Unset(const std::string& topic) {
    return Await<Status>([&](auto cb) { engine_->DeleteTopicConfig(topic, std::move(cb)); });
  }
  // A send that leaves ttl and maxRetry to the topic.
  Result<backend::Sent> Send(const std::string& topic, const std::string& id) {
    core::NewMessage m;
    m.topic = topic;
    m.msg_id = id;
    m.payload = "p-" + id;
    return b_->SendFull(std::move(m));
  }
  std::vector<core::Message> Pull(const std::string& topic, int32_t n = 1) {
    Result<std::vector<core::Message>> r = Await<Result<std::vector<core::Message>>>([&](auto cb) {
      engine_->Pull(backend::PullRequest{topic, n, std::nullopt}, std::move(cb));
    });
    EXPECT_TRUE(r.has_value()) << r.error().ToString();
    return r.has_value() ? *r : std::vector<core::Message>{};
  }
  MsgStatus StatusOf(const std::string& topic, const std::string& id) {
    Result<core::Message> r = b_->Get(topic, id);
    EXPECT_TRUE(r.has_value()) << r.error().ToString();
    return r.has_value() ? r->status : MsgStatus::kWaiting;
  }
  // A stored dead-letter topic and ttl.
  void SetDeadLetters(const std::string& topic, const std::string& dlq, int64_t ttl_ms) {
    core::TopicConfig c;
    c.dead_letter_topic = dlq;
    c.ttl = Millis(ttl_ms);
    ASSERT_TRUE(Set(topic, c).has_value());
  }
  // A stored retry interval and ack timeout (and maxRetry when given).
  void SetRetry(const std::string& topic, int64_t interval_ms, int64_t ack_timeout_ms,
                std::optional<int32_t> max_retry = std::nullopt) {
    core::TopicConfig c;
    c.retry_interval = Millis(interval_ms);
    c.ack_timeout = Millis(ack_timeout_ms);
    c.max_retry = max_retry;
    ASSERT_TRUE(Set(topic, c).has_value());
  }
  core::TopicInfo Info(const std::string& topic) { return b_->Info(topic).value(); }
  void Advance(int64_t ms) { sched_.Advance(Millis(ms)); }

  core::TopicDefaults defaults_;
  base::ManualClock clock_;
  base::ManualScheduler sched_;
  storage::MemKv kv_;
  storage::MessageStore store_;
  Wakes wakes_;
  testutil::RecordingSink events_;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<testutil::SyncBackend> b_;
};

// ---- The stored layer ----

TEST_F(EngineTopicsTest, StoredConfigIsMergedAndSurvivesARestart) {
  EXPECT_EQ(Stored("orders"), core::TopicConfig{});
  core::TopicConfig a;
  a.capacity = 10;
  a.dead_letter_topic = "orders-dlq";
  ASSERT_TRUE(Set("orders", a).has_value());
  core::TopicConfig b;
  b.retry_interval = Millis(2'000);
  b.capacity = 20;
  Result<core::TopicConfig> after = Set("orders", b);
  ASSERT_TRUE(after.has_value());
  core::TopicConfig want;
  want.capacity = 20;
  want.retry_interval = Millis(2'000);
  want.dead_letter_topic = "orders-dlq";
  EXPECT_EQ(*after, want);
  Restart();
  EXPECT_EQ(Stored("orders"), want);
  EXPECT_EQ(Stored("other"), core::TopicConfig{});
  ASSERT_TRUE(Unset("orders").ok());
  Restart();
  EXPECT_EQ(Stored("orders"), core::TopicConfig{});
}

TEST_F(EngineTopicsTest, SendsTakeTheStoredTtlAndMaxRetryOverTheNodeDefaults) {
  core::TopicConfig c;
  c.ttl = Millis(5'000);
  c.max_retry = 0;
  ASSERT_TRUE(Set("t", c).has_value());
  Result<backend::Sent> sent = Send("t", "a");
  ASSERT_TRUE(sent.has_value());
  EXPECT_EQ(sent->message.record.expire_time - sent->message.record.trigger_time, Millis(5'000));
  EXPECT_EQ(sent->message.record.max_retry, 0);
  // A request's own value wins over the stored layer.
  core::NewMessage m{"t", "b", "p", Millis(0), Millis(9'000), 3};
  Result<backend::Sent> own = b_->SendFull(m);
  ASSERT_TRUE(own.has_value());
  EXPECT_EQ(own->message.record.expire_time - own->message.record.trigger_time, Millis(9'000));
  // Pulls take the stored ack timeout.
  c = core::TopicConfig{};
  c.ack_timeout = Millis(7'000);
  ASSERT_TRUE(Set("t", c).has_value());
  std::vector<core::Message> got = Pull("t");
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].record.ack_deadline(), clock_.Now() + Millis(7'000));
}

// ---- Capacity ----

TEST_F(EngineTopicsTest, CapacityRefusesNewMessagesButAnswersReSends) {
  core::TopicConfig c;
  c.capacity = 2;
  ASSERT_TRUE(Set("t", c).has_value());
  ASSERT_TRUE(Send("t", "a").has_value());
  ASSERT_TRUE(Send("t", "b").has_value());
  Result<backend::Sent> full = Send("t", "c");
  ASSERT_FALSE(full.has_value());
  EXPECT_EQ(full.error().code(), Errc::kResourceExhausted);
  EXPECT_EQ(full.error().message(), "topic 't' is full: 2 messages in life, capacity 2");
  Result<backend::Sent> again = Send("t", "a");  // idempotent: answered
  ASSERT_TRUE(again.has_value());
  EXPECT_TRUE(again->existing);
  // Ack frees room at once.
  ASSERT_EQ(Pull("t").size(), 1u);
  ASSERT_TRUE(b_->Ack("t", "a").ok());
  EXPECT_TRUE(Send("t", "c").has_value());
  EXPECT_EQ(Info("t").ready, 2);
}

TEST_F(EngineTopicsTest, BatchStoresInOrderUntilFullThenRefusesEachItem) {
  core::TopicConfig c;
  c.capacity = 3;
  ASSERT_TRUE(Set("t", c).has_value());
  ASSERT_TRUE(Send("t", "x").has_value());
  std::vector<core::NewMessage> batch;
  for (const char* id : {"a", "x", "b", "c", "d"}) {
    core::NewMessage m;
    m.topic = "t";
    m.msg_id = id;
    m.payload = "p";
    batch.push_back(std::move(m));
  }
  Result<std::vector<Result<backend::Sent>>> r = b_->SendBatchItems(std::move(batch));
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->size(), 5u);
  EXPECT_TRUE((*r)[0].has_value());
  EXPECT_TRUE((*r)[1].has_value() && (*r)[1]->existing);
  EXPECT_TRUE((*r)[2].has_value());
  EXPECT_EQ((*r)[3].error().code(), Errc::kResourceExhausted);
  EXPECT_EQ((*r)[4].error().code(), Errc::kResourceExhausted);
  EXPECT_EQ(Info("t").ready, 3);
  EXPECT_FALSE(b_->Get("t", "c").has_value());
  // Nothing but re-sends on a full topic: all answered or refused, nothing stored.
  std::vector<core::NewMessage> more;
  more.push_back(core::NewMessage{"t", "a", "p"});
  more.push_back(core::NewMessage{"t", "e", "p"});
  Result<std::vector<Result<backend::Sent>>> r2 = b_->SendBatchItems(std::move(more));
  ASSERT_TRUE(r2.has_value());
  EXPECT_TRUE((*r2)[0].has_value() && (*r2)[0]->existing);
  EXPECT_EQ((*r2)[1].error().code(), Errc::kResourceExhausted);
}

TEST_F(EngineTopicsTest, CapacityCountsFarMessagesAndExpiryFreesRoom) {
  core::TopicConfig c;
  c.capacity = 2;
  c.ttl = Millis(1'000);
  ASSERT_TRUE(Set("t", c).has_value());
  core::NewMessage far{"t", "far", "p", Millis(3'600'000)};  // beyond the memory horizon
  far.ttl = Millis(3'600'000);
  ASSERT_TRUE(b_->SendFull(far).has_value());
  EXPECT_EQ(engine_->TEST_Tiers("t").far, 1);
  ASSERT_TRUE(Send("t", "a").has_value());
  EXPECT_EQ(Send("t", "b").error().code(), Errc::kResourceExhausted);
  Advance(1'000);  // "a" expires
  EXPECT_TRUE(Send("t", "b").has_value());
}

TEST_F(EngineTopicsTest, ConcurrentSendersNeverOverfillATopic) {
  core::TopicConfig c;
  c.capacity = 100;
  ASSERT_TRUE(Set("t", c).has_value());
  std::atomic<int> stored{0};
  std::atomic<int> refused{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < 8; ++w) {
    threads.emplace_back([&, w] {
      for (int i = 0; i < 50; ++i) {
        std::vector<core::NewMessage> batch;
        for (int k = 0; k < 2; ++k) {
          batch.push_back(core::NewMessage{
              "t", std::to_string(w) + "-" + std::to_string(i) + "-" + std::to_string(k), "p"});
        }
        auto r = b_->SendBatchItems(std::move(batch));
        ASSERT_TRUE(r.has_value());
        for (auto& item : *r) {
          if (item.has_value()) {
            ++stored;
          } else {
            ASSERT_EQ(item.error().code(), Errc::kResourceExhausted);
            ++refused;
          }
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(stored.load(), 100);
  EXPECT_EQ(refused.load(), 8 * 50 * 2 - 100);
  EXPECT_EQ(Info("t").ready, 100);
}

// ---- Pause ----

TEST_F(EngineTopicsTest, PausedTopicAcceptsSendsPullsNothingAndResumeWakesListeners) {
  core::TopicConfig c;
  c.paused = true;
  ASSERT_TRUE(Set("t", c).has_value());
  ASSERT_TRUE(Send("t", "a").has_value());
  wakes_.Take();
  EXPECT_TRUE(Pull("t").empty());
  EXPECT_TRUE(engine_->KnownIdle("t"));
  Restart();  // durable
  EXPECT_TRUE(Pull("t").empty());
  c.paused = false;
  ASSERT_TRUE(Set("t", c).has_value());
  EXPECT_EQ(wakes_.Take(), std::vector<std::string>{"t"});
  EXPECT_FALSE(engine_->KnownIdle("t"));
  EXPECT_EQ(Pull("t").size(), 1u);
  // Deleting the configuration of a paused topic resumes it too.
  c.paused = true;
  ASSERT_TRUE(Set("t", c).has_value());
  EXPECT_TRUE(wakes_.Take().empty());
  ASSERT_TRUE(Unset("t").ok());
  EXPECT_EQ(wakes_.Take(), std::vector<std::string>{"t"});
}

// ---- Retry interval ----

TEST_F(EngineTopicsTest, NackWaitsTheRetryIntervalBeforeRedelivery) {
  core::TopicConfig c;
  c.retry_interval = Millis(5'000);
  ASSERT_TRUE(Set("t", c).has_value());
  ASSERT_TRUE(Send("t", "a").has_value());
  ASSERT_EQ(Pull("t").size(), 1u);
  ASSERT_TRUE(b_->Ack("t", "a", /*ack=*/false).ok());
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kWaiting);
  EXPECT_EQ(Info("t").waiting, 1);
  EXPECT_TRUE(Pull("t").empty());
  wakes_.Take();
  Advance(4'999);
  EXPECT_TRUE(Pull("t").empty());
  Advance(1);
  EXPECT_EQ(wakes_.Take(), std::vector<std::string>{"t"});
  EXPECT_EQ(Pull("t").size(), 1u);
}

TEST_F(EngineTopicsTest, AckTimeoutWaitsTheRetryIntervalAsWaitingThenIsReady) {
  SetRetry("t", 2'000, 1'000);
  ASSERT_TRUE(Send("t", "a").has_value());
  ASSERT_TRUE(Send("t", "b").has_value());
  ASSERT_EQ(Pull("t", 2).size(), 2u);
  core::TopicInfo i = Info("t");
  EXPECT_EQ(i.consuming, 2);
  Advance(1'000);  // the ack deadline: waiting for the retry interval
  i = Info("t");
  EXPECT_EQ(i.consuming, 0);
  EXPECT_EQ(i.waiting, 2);
  EXPECT_EQ(i.ready, 0);
  EXPECT_EQ(events_.For("t").ack_timeouts, 2);
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kWaiting);
  EXPECT_TRUE(Pull("t").empty());
  ASSERT_TRUE(b_->Ack("t", "b").ok());  // a late ack is still accepted
  EXPECT_EQ(Info("t").waiting, 1);
  Advance(1'999);
  EXPECT_TRUE(Pull("t").empty());
  Advance(1);
  i = Info("t");
  EXPECT_EQ(i.waiting, 0);
  EXPECT_EQ(i.ready, 1);
  EXPECT_EQ(events_.For("t").ack_timeouts, 2);
  std::vector<core::Message> again = Pull("t");
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].record.msg_id, "a");
  EXPECT_EQ(again[0].record.retry, 2);
}

TEST_F(EngineTopicsTest, LastDeliveryTimingOutEndsAtItsDeadlineDespiteTheInterval) {
  SetRetry("t", 2'000, 1'000, /*max_retry=*/0);
  ASSERT_TRUE(Send("t", "a").has_value());
  ASSERT_EQ(Pull("t").size(), 1u);
  Advance(1'000);
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kRetryExhaust);
  core::TopicInfo i = Info("t");
  EXPECT_EQ(i.waiting + i.ready + i.consuming, 0);
  EXPECT_EQ(events_.For("t").retries_exhausted, 1);
}

TEST_F(EngineTopicsTest, RetryIntervalOfADeliverySurvivesARestart) {
  SetRetry("t", 2'000, 1'000);
  ASSERT_TRUE(Send("t", "a").has_value());
  ASSERT_EQ(Pull("t").size(), 1u);
  Restart();
  clock_.Advance(Millis(1'500));
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kWaiting);
  EXPECT_EQ(Info("t").waiting, 1);
  EXPECT_TRUE(Pull("t").empty());
  Advance(1'499);  // the deadline plus the interval: 3 s after the delivery
  EXPECT_TRUE(Pull("t").empty());
  Advance(1);
  EXPECT_EQ(Pull("t").size(), 1u);
}

// ---- Purge ----

TEST_F(EngineTopicsTest, PurgeDeletesEveryInLifeMessageNearAndFarInChunks) {
  std::vector<core::NewMessage> batch;
  for (int i = 0; i < 2'500; ++i) {
    batch.push_back(core::NewMessage{"t", "n" + std::to_string(i), "p"});
  }
  ASSERT_TRUE(b_->SendBatch(std::move(batch)).has_value());
  for (int i = 0; i < 1'200; ++i) {  // beyond the memory horizon: on disk only
    ASSERT_TRUE(b_->SendFull(core::NewMessage{"t", "f" + std::to_string(i), "p", Millis(7'200'000)})
                    .has_value());
  }
  ASSERT_TRUE(Send("other", "o").has_value());
  ASSERT_EQ(Pull("t", 10).size(), 10u);
  EXPECT_EQ(engine_->TEST_Tiers("t").far, 1'200);
  Result<int64_t> n =
      Await<Result<int64_t>>([&](auto cb) { engine_->Purge("t", std::nullopt, std::move(cb)); });
  ASSERT_TRUE(n.has_value()) << n.error().ToString();
  EXPECT_EQ(*n, 3'700);
  core::TopicInfo i = Info("t");
  EXPECT_EQ(i.waiting + i.ready + i.consuming, 0);
  EXPECT_EQ(StatusOf("t", "n0"), MsgStatus::kDelete);
  EXPECT_EQ(StatusOf("t", "f1199"), MsgStatus::kDelete);
  EXPECT_EQ(StatusOf("other", "o"), MsgStatus::kReady);
  Restart();  // durable: nothing comes back
  i = Info("t");
  EXPECT_EQ(i.waiting + i.ready + i.consuming, 0);
}

TEST_F(EngineTopicsTest, PurgeOfOneStatusLeavesTheOthers) {
  for (const char* id : {"a", "b", "c"}) ASSERT_TRUE(Send("t", id).has_value());
  ASSERT_TRUE(b_->SendFull(core::NewMessage{"t", "w", "p", Millis(10'000)}).has_value());
  ASSERT_EQ(Pull("t").size(), 1u);  // "a" consuming
  Result<int64_t> n = Await<Result<int64_t>>(
      [&](auto cb) { engine_->Purge("t", MsgStatus::kReady, std::move(cb)); });
  ASSERT_TRUE(n.has_value());
  EXPECT_EQ(*n, 2);
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kConsuming);
  EXPECT_EQ(StatusOf("t", "b"), MsgStatus::kDelete);
  EXPECT_EQ(StatusOf("t", "w"), MsgStatus::kWaiting);
  n = Await<Result<int64_t>>(
      [&](auto cb) { engine_->Purge("unknown", std::nullopt, std::move(cb)); });
  ASSERT_TRUE(n.has_value());
  EXPECT_EQ(*n, 0);
}

// ---- Dead letters ----

TEST_F(EngineTopicsTest, ExpiredAndExhaustedMessagesBecomeDeadLetters) {
  core::TopicConfig c;
  c.dead_letter_topic = "dlq";
  c.ttl = Millis(10'000);
  c.max_retry = 0;
  c.ack_timeout = Millis(1'000);
  ASSERT_TRUE(Set("t", c).has_value());
  ASSERT_TRUE(Send("t", "nacked").has_value());
  ASSERT_TRUE(Send("t", "timed-out").has_value());
  ASSERT_TRUE(b_->SendFull(core::NewMessage{"t", "expired", "p", Millis(5'000)}).has_value());
  std::vector<core::Message> got = Pull("t", 2);
  ASSERT_EQ(got.size(), 2u);
  wakes_.Take();
  // The nack of the last delivery: RETRY_EXHAUST, and the dead letter at once, with the reason.
  Result<std::vector<Status>> acks = b_->AckBatch("t", {backend::AckItem{"nacked", false, "boom"}});
  ASSERT_TRUE(acks.has_value());
  ASSERT_TRUE((*acks)[0].ok());
  EXPECT_EQ(StatusOf("t", "nacked"), MsgStatus::kRetryExhaust);
  Result<core::Message> dead = b_->Get("dlq", "nacked");
  ASSERT_TRUE(dead.has_value());
  EXPECT_EQ(dead->status, MsgStatus::kReady);
  EXPECT_EQ(dead->record.payload, "p-nacked");
  EXPECT_EQ(dead->record.last_error, "boom");
  ASSERT_TRUE(dead->record.dead_letter.has_value());
  EXPECT_EQ(dead->record.dead_letter->topic, "t");
  EXPECT_EQ(dead->record.dead_letter->status, MsgStatus::kRetryExhaust);
  EXPECT_EQ(dead->record.dead_letter->retry, 1);
  EXPECT_EQ(wakes_.Take(), std::vector<std::string>{"dlq"});
  // By time: the last ack deadline, then the ttl.
  Advance(1'000);
  EXPECT_EQ(StatusOf("dlq", "timed-out"), MsgStatus::kReady);
  Advance(14'000);
  dead = b_->Get("dlq", "expired");
  ASSERT_TRUE(dead.has_value());
  EXPECT_EQ(dead->record.dead_letter->status, MsgStatus::kExpire);
  EXPECT_EQ(dead->record.dead_letter->retry, 0);
  EXPECT_EQ(events_.For("t").dead_lettered, 3);
  EXPECT_EQ(Info("dlq").ready, 3);
  EXPECT_EQ(Pull("dlq", 10).size(), 3u);
  Restart();  // durable, and not doubled by recovery
  EXPECT_EQ(Info("dlq").consuming, 3);
}

TEST_F(EngineTopicsTest, ADeadLetterTopicHoldingTheMsgIdInLifeTakesNoSecond) {
  SetDeadLetters("t", "dlq", 1'000);
  ASSERT_TRUE(Send("dlq", "a").has_value());
  ASSERT_TRUE(Send("t", "a").has_value());
  Advance(1'000);
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kExpire);
  Result<core::Message> there = b_->Get("dlq", "a");
  ASSERT_TRUE(there.has_value());
  EXPECT_FALSE(there->record.dead_letter.has_value());
  EXPECT_EQ(events_.For("t").dead_lettered, 0);
}

TEST_F(EngineTopicsTest, DeadLettersChainAndCapacityOfTheDeadLetterTopicIsIgnored) {
  SetDeadLetters("t", "dlq", 1'000);
  core::TopicConfig d;
  d.dead_letter_topic = "dlq2";
  d.ttl = Millis(500);
  d.capacity = 1;
  ASSERT_TRUE(Set("dlq", d).has_value());
  ASSERT_TRUE(Send("t", "a").has_value());
  ASSERT_TRUE(Send("t", "b").has_value());
  Advance(1'000);
  EXPECT_EQ(Info("dlq").ready, 2);  // over its capacity: dead letters are never lost
  Advance(500);
  Result<core::Message> last = b_->Get("dlq2", "a");
  ASSERT_TRUE(last.has_value());
  EXPECT_EQ(last->record.dead_letter->topic, "dlq");
  EXPECT_EQ(Info("dlq2").ready, 2);
}

TEST_F(EngineTopicsTest, DeadLettersOfWhatEndedWhileDownAreWrittenAtRecovery) {
  SetDeadLetters("t", "dlq", 1'000);
  ASSERT_TRUE(Send("t", "a").has_value());
  Stop();
  clock_.Advance(Millis(5'000));
  Start();
  EXPECT_EQ(StatusOf("t", "a"), MsgStatus::kExpire);
  EXPECT_EQ(StatusOf("dlq", "a"), MsgStatus::kReady);
  EXPECT_EQ(Pull("dlq").size(), 1u);
}

// ---- Redrive ----

TEST_F(EngineTopicsTest, RedriveMovesADeadLetterBackOnce) {
  SetDeadLetters("t", "dlq", 1'000);
  ASSERT_TRUE(Send("t", "a").has_value());
  ASSERT_TRUE(Send("dlq", "plain").has_value());
  Advance(1'000);
  auto redrive = [&](std::optional<std::string> id, int32_t limit = 100) {
    return Await<Result<int64_t>>([&](auto cb) {
      engine_->Redrive(backend::RedriveRequest{"dlq", id, limit, Millis(0)}, std::move(cb));
    });
  };
  EXPECT_EQ(redrive("plain").error().code(), Errc::kInvalidState);
  EXPECT_EQ(redrive("nope").error().code(), Errc::kNotFound);
  Result<int64_t> n = redrive("a");
  ASSERT_TRUE(n.has_value()) << n.error().ToString();
  EXPECT_EQ(*n, 1);
  EXPECT_FALSE(b_->Get("dlq", "a").has_value());  // released
  Result<core::Message> back = b_->Get("t", "a");
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->status, MsgStatus::kReady);
  EXPECT_EQ(back->record.retry, 0);
  EXPECT_EQ(back->record.payload, "p-a");
  EXPECT_EQ(redrive("a").error().code(), Errc::kNotFound);  // once
  EXPECT_EQ(Pull("t").size(), 1u);
}

TEST_F(EngineTopicsTest, RedriveWalkRespectsTheSourceCapacityAndSkipsInLifeIds) {
  SetDeadLetters("t", "dlq", 1'000);
  for (const char* id : {"a", "b", "c", "d"}) ASSERT_TRUE(Send("t", id).has_value());
  Advance(1'000);
  ASSERT_EQ(Info("dlq").ready, 4);
  core::TopicConfig c;
  c.capacity = 2;
  c.ttl = Millis(60'000);
  ASSERT_TRUE(Set("t", c).has_value());
  ASSERT_TRUE(Send("t", "a").has_value());  // "a" in life in the source again: passed over
  Result<int64_t> n = Await<Result<int64_t>>([&](auto cb) {
    engine_->Redrive(backend::RedriveRequest{"dlq", std::nullopt, 100, Millis(0)}, std::move(cb));
  });
  ASSERT_TRUE(n.has_value()) << n.error().ToString();
  EXPECT_EQ(*n, 1);  // "b"; then the source is full
  EXPECT_EQ(Info("t").ready, 2);
  EXPECT_EQ(Info("dlq").ready, 3);
  Result<int64_t> full = Await<Result<int64_t>>([&](auto cb) {
    engine_->Redrive(backend::RedriveRequest{"dlq", "c", 1, Millis(0)}, std::move(cb));
  });
  EXPECT_EQ(full.error().code(), Errc::kResourceExhausted);
}

}  // namespace
}  // namespace chronoq::engine
