// The engine's push lane (docs/push.md) where the contract suite cannot look: the far tier keeps a
// message's lane when it loads it, recovery keeps it and tells the listener which topics have push
// work (without any OnReady for it), and a listener set later hears it too.
#include <gtest/gtest.h>

#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/scheduler.h"
#include "engine/engine.h"
#include "storage/memory/mem_kv.h"
#include "storage/message_store.h"
#include "tests/testutil/sync_backend.h"

namespace chronoq::engine {
namespace {

using core::MsgStatus;
using Ids = std::vector<std::string>;

const TimePoint kT0 = FromEpochMs(1'700'000'040'000);
constexpr int64_t kMin = 60'000;
constexpr Millis kHorizon(kMin);

class PushListener final : public ReadyListener {
 public:
  void OnReady(std::string_view topic) override {
    std::lock_guard l(mu_);
    ready_.emplace_back(topic);
  }
  void OnPushReady(std::string_view topic) override {
    std::lock_guard l(mu_);
    push_.emplace_back(topic);
  }
  Ids TakeReady() {
    std::lock_guard l(mu_);
    return std::exchange(ready_, {});
  }
  Ids TakePush() {
    std::lock_guard l(mu_);
    return std::exchange(push_, {});
  }

 private:
  std::mutex mu_;
  Ids ready_;
  Ids push_;
};

core::Callback Hook(int64_t timeout_ms) {
  core::Callback cb;
  cb.url = "http://127.0.0.1:9/hook";
  cb.timeout = Millis(timeout_ms);
  return cb;
}

// An engine over a MemKv that outlives it, so that a "restart" recovers a new engine from it.
class EnginePushTest : public ::testing::Test {
 protected:
  EnginePushTest() : clock_(kT0), sched_(&clock_) { Open(); }
  ~EnginePushTest() override { Close(); }

  void Open(ReadyListener* listener_before_recover = nullptr) {
    store_ = std::make_unique<storage::MessageStore>(&kv_, "ns");
    EngineOptions o;
    o.memory_horizon = kHorizon;
    o.load_chunk = 2;
    o.shards = 3;
    engine_ = std::make_unique<Engine>(o, store_.get(), &clock_, &sched_);
    if (listener_before_recover != nullptr) engine_->SetReadyListener(listener_before_recover);
    EXPECT_TRUE(engine_->Recover().ok());
    sched_.RunDue();
    b_ = std::make_unique<testutil::SyncBackend>(engine_.get());
  }
  void Close() {
    if (engine_) engine_->SetReadyListener(nullptr);
    b_.reset();
    engine_.reset();
    store_.reset();
  }

  core::Message SendPush(const std::string& topic, const std::string& id, int64_t delay_ms) {
    core::NewMessage m{topic, id, "body-" + id, Millis(delay_ms), Millis(3'600'000), 10};
    m.callback = Hook(100);
    Result<core::Message> r = b_->Send(std::move(m));
    EXPECT_TRUE(r.has_value()) << r.error().ToString();
    return r.has_value() ? *r : core::Message{};
  }
  Ids Take(const std::string& topic, int32_t max = 10) {
    Result<backend::PushTake> r = b_->TakePush(topic, max, Millis(1'000));
    EXPECT_TRUE(r.has_value()) << r.error().ToString();
    Ids ids;
    if (r.has_value()) {
      for (const core::Message& m : r->messages) ids.push_back(m.record.msg_id);
    }
    return ids;
  }
  Ids Pull(const std::string& topic) {
    Result<std::vector<core::Message>> r = b_->Pull(topic, 10, Millis(30'000));
    EXPECT_TRUE(r.has_value()) << r.error().ToString();
    Ids ids;
    if (r.has_value()) {
      for (const core::Message& m : *r) ids.push_back(m.record.msg_id);
    }
    return ids;
  }

  base::ManualClock clock_;
  base::ManualScheduler sched_;
  storage::MemKv kv_;
  std::unique_ptr<storage::MessageStore> store_;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<testutil::SyncBackend> b_;
  PushListener listener_;
};

TEST_F(EnginePushTest, AFarPushMessageLoadsBackIntoThePushLane) {
  engine_->SetReadyListener(&listener_);
  for (int i = 0; i < 5; ++i) SendPush("t", "far" + std::to_string(i), 10 * kMin + i);
  Result<core::Message> plain = b_->Send("t", "plain", "p", Millis(10 * kMin + 2));
  ASSERT_TRUE(plain.has_value());
  ASSERT_EQ(engine_->TEST_Tiers("t").far, 6);  // only counted
  EXPECT_EQ(engine_->TEST_Tiers("t").near, 0u);
  listener_.TakeReady();
  listener_.TakePush();
  sched_.AdvanceTo(kT0 + Millis(10 * kMin + 4));  // loaded in chunks of two, then due
  EXPECT_EQ(engine_->TEST_Tiers("t").far, 0);
  EXPECT_FALSE(listener_.TakePush().empty());
  EXPECT_FALSE(listener_.TakeReady().empty());  // "plain"
  EXPECT_EQ(Pull("t"), Ids{"plain"});
  EXPECT_EQ(Take("t"), (Ids{"far0", "far1", "far2", "far3", "far4"}));
}

TEST_F(EnginePushTest, RecoveryKeepsTheLaneAndTellsWhichTopicsHavePushWork) {
  SendPush("push", "taken", 0);
  SendPush("push", "ready", 0);
  SendPush("push", "far", 10 * kMin);
  ASSERT_TRUE(b_->Send("pull", "plain", "p", Millis(0)).has_value());
  SendPush("onlyfar", "later", 10 * kMin);
  ASSERT_EQ(Take("push", 1), Ids{"taken"});
  Close();
  clock_.Advance(Millis(5'000));  // the lease of "taken" (1'100 ms) ran out while down
  Open(&listener_);               // a listener set before Recover hears it at start
  // Only topics whose push lane holds messages in memory; far ones are told when they come due.
  EXPECT_EQ(listener_.TakePush(), Ids{"push"});
  EXPECT_TRUE(listener_.TakeReady().empty());
  EXPECT_TRUE(Pull("push").empty());
  EXPECT_EQ(Take("push"), (Ids{"ready", "taken"}));
  Result<core::Message> taken = b_->Get("push", "taken");
  ASSERT_TRUE(taken.has_value());
  EXPECT_EQ(taken->record.retry, 2);
  EXPECT_TRUE(taken->record.push);
  EXPECT_EQ(taken->record.callback, Hook(100));
  // A listener set after recovery hears it when set.
  engine_->SetReadyListener(nullptr);
  engine_->SetReadyListener(&listener_);
  EXPECT_EQ(listener_.TakePush(), Ids{"push"});
  ASSERT_TRUE(b_->Ack("push", "taken").ok());
  ASSERT_TRUE(b_->Ack("push", "ready").ok());
  engine_->SetReadyListener(&listener_);
  EXPECT_TRUE(listener_.TakePush().empty());  // nothing in memory: "far" is told when due
  sched_.AdvanceTo(kT0 + Millis(10 * kMin));
  const Ids due = listener_.TakePush();
  EXPECT_EQ(std::set<std::string>(due.begin(), due.end()),
            (std::set<std::string>{"onlyfar", "push"}));
  EXPECT_TRUE(listener_.TakeReady().empty());
  EXPECT_EQ(Take("onlyfar"), Ids{"later"});
  EXPECT_EQ(Take("push"), Ids{"far"});
  EXPECT_EQ(Pull("pull"), Ids{"plain"});
}

TEST_F(EnginePushTest, ARedrivenDeadLetterIsAnnouncedInItsLane) {
  engine_->SetReadyListener(&listener_);
  core::TopicConfig c;
  c.dead_letter_topic = "dlq";
  c.max_retry = 0;
  ASSERT_TRUE(b_->SetTopicConfig("t", c).has_value());
  core::NewMessage m{"t", "m", "body", Millis(0), Millis(3'600'000), std::nullopt};
  m.callback = Hook(100);
  ASSERT_TRUE(b_->Send(std::move(m)).has_value());
  ASSERT_EQ(Take("t"), Ids{"m"});
  Result<std::vector<Status>> nacked =
      b_->AckBatch("t", {backend::AckItem{"m", false, "HTTP 500", false, 1}});
  ASSERT_TRUE(nacked.has_value());
  ASSERT_TRUE((*nacked)[0].ok()) << (*nacked)[0].ToString();
  // The dead letter is pull work of the dead-letter topic.
  EXPECT_EQ(listener_.TakeReady(), Ids{"dlq"});
  listener_.TakePush();
  Result<int64_t> moved = b_->Redrive(backend::RedriveRequest{"dlq", std::string("m"), 1});
  ASSERT_TRUE(moved.has_value()) << moved.error().ToString();
  EXPECT_EQ(listener_.TakePush(), Ids{"t"});
  EXPECT_TRUE(listener_.TakeReady().empty());
  EXPECT_EQ(Take("t"), Ids{"m"});
}

}  // namespace
}  // namespace chronoq::engine
