// The push lane on the Redis backend (issue 16, docs/push.md): several nodes (RedisBackend
// instances of one namespace, each with its own connection, subscriber and scheduler, on one
// clock) on a real standalone server and on a real 3-master Cluster. What one node makes due,
// every node hears; a message is leased by one node at a time; a lease a dead node left runs
// out and another node takes the message again; the push set outlives the nodes; and the lane
// itself: leases and retry intervals as core computes them, release, attempts, the callback of
// the topic set, set to none and unset.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include "base/clock.h"
#include "base/scheduler.h"
#include "core/limits.h"
#include "core/state_machine.h"
#include "redis/cluster.h"
#include "redis/command_sink.h"
#include "redis/connection.h"
#include "redis/event_loop.h"
#include "redis/redis_backend.h"
#include "redis/subscriber.h"
#include "tests/testutil/eventually.h"
#include "tests/testutil/redis_servers.h"
#include "tests/testutil/redis_test_options.h"
#include "tests/testutil/sync_backend.h"

namespace chronoq::redis {
namespace {

using core::MsgStatus;

constexpr int64_t kNow = 1'700'000'040'000;
constexpr Millis kMargin{500};

enum class Kind { kStandalone, kCluster };

std::vector<uint16_t> Ports(Kind kind) {
  if (kind == Kind::kCluster) return testutil::SharedDeployment<testutil::RedisCluster>()->ports();
  return {testutil::SharedDeployment<testutil::RedisStandalone>()->port()};
}

// What a node's listener heard.
class Heard final : public backend::ReadyListener {
 public:
  void OnReady(std::string_view topic) override {
    std::lock_guard<std::mutex> lock(mu_);
    ready_.insert(std::string(topic));
  }
  void OnPushReady(std::string_view topic) override {
    std::lock_guard<std::mutex> lock(mu_);
    push_.insert(std::string(topic));
    cv_.notify_all();
  }
  // Waits (in real time: publications and scripts are I/O, not the clock) for OnPushReady.
  bool WaitPush(const std::string& topic) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(10), [&] { return push_.contains(topic); });
  }
  bool Push(const std::string& topic) {
    std::lock_guard<std::mutex> lock(mu_);
    return push_.contains(topic);
  }
  bool Ready(const std::string& topic) {
    std::lock_guard<std::mutex> lock(mu_);
    return ready_.contains(topic);
  }
  void Clear() {
    std::lock_guard<std::mutex> lock(mu_);
    push_.clear();
    ready_.clear();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::set<std::string> push_, ready_;
};

// One node: its connection (or cluster client), subscriber, scheduler and backend.
struct Node {
  Node(Kind kind, const std::string& ns, base::ManualClock* clock) : scheduler(clock) {
    const std::vector<uint16_t> ports = Ports(kind);
    ConnectionOptions co = testutil::TestConnectionOptions(ports.front());
    if (kind == Kind::kCluster) {
      std::vector<RedisEndpoint> seeds;
      for (uint16_t p : ports) seeds.push_back({"127.0.0.1", p});
      Result<std::unique_ptr<RedisClusterClient>> c = RedisClusterClient::Connect(&loop, co, seeds);
      EXPECT_TRUE(c.has_value());
      if (c.has_value()) sink = std::move(*c);
    } else {
      conn = std::make_unique<RedisConnection>(&loop, co);
      sink = std::make_unique<SingleServer>(conn.get());
    }
    RedisBackendOptions o;
    o.ns = ns;
    o.publish = true;
    backend = std::make_unique<RedisBackend>(o, sink.get(), clock, &scheduler);
    core::Defaults server;
    server.ttl = Millis(3'600'000);
    server.max_retry = 3;
    server.ack_timeout = Millis(30'000);
    defaults = core::TopicDefaults(server, {});
    backend->SetTopicDefaults(&defaults);
    sync = std::make_unique<testutil::SyncBackend>(backend.get());
    std::promise<void> subscribed;
    auto once = std::make_shared<std::once_flag>();
    subscriber = std::make_unique<RedisSubscriber>(
        &loop, co, backend->ReadyChannel(),
        [b = backend.get()](std::string_view payload) { b->OnPublished(payload); },
        [b = backend.get(), &subscribed, once] {
          b->OnResubscribed();
          std::call_once(*once, [&subscribed] { subscribed.set_value(); });
        });
    subscribed.get_future().wait();
    backend->SetReadyListener(&heard);
    // Its first reading of the push set answered: what other nodes do after this is news.
    std::promise<void> read;
    backend->Flush([&read] { read.set_value(); });
    read.get_future().wait();
  }
  ~Node() {
    subscriber.reset();
    backend->SetReadyListener(nullptr);
    sync.reset();
    backend.reset();
    sink.reset();
    conn.reset();
  }
  Result<backend::PushTake> Take(const std::string& topic, int32_t max = 10) {
    return sync->TakePush(topic, max, kMargin);
  }
  std::vector<std::string> TakeIds(const std::string& topic, int32_t max = 10) {
    Result<backend::PushTake> t = Take(topic, max);
    EXPECT_TRUE(t.has_value()) << t.error().ToString();
    std::vector<std::string> ids;
    if (t.has_value()) {
      for (const core::Message& m : t->messages) ids.push_back(m.record.msg_id);
    }
    return ids;
  }

  base::ManualScheduler scheduler;
  core::TopicDefaults defaults;
  Heard heard;
  EventLoop loop;
  std::unique_ptr<RedisConnection> conn;
  std::unique_ptr<CommandSink> sink;
  std::unique_ptr<RedisBackend> backend;
  std::unique_ptr<testutil::SyncBackend> sync;
  std::unique_ptr<RedisSubscriber> subscriber;
};

core::Callback Http(Millis timeout, std::optional<Millis> retry = std::nullopt) {
  core::Callback cb;
  cb.url = "http://127.0.0.1:9/hook";
  cb.timeout = timeout;
  cb.retry_interval = retry;
  return cb;
}

class RedisPushTest : public ::testing::TestWithParam<Kind> {
 protected:
  void SetUp() override {
    static std::atomic<int> next{0};
    ns_ = fmt::format("push{}", next.fetch_add(1));
    a_ = std::make_unique<Node>(GetParam(), ns_, &clock_);
    b_ = std::make_unique<Node>(GetParam(), ns_, &clock_);
  }
  void TearDown() override {
    a_.reset();
    b_.reset();
  }
  core::NewMessage Msg(const std::string& topic, const std::string& id,
                       std::optional<core::Callback> cb, Millis delay = Millis(0)) {
    core::NewMessage m;
    m.topic = topic;
    m.msg_id = id;
    m.payload = "body " + id;
    m.delay = delay;
    m.callback = std::move(cb);
    return m;
  }
  std::string Prefix(const std::string& topic) const {
    return fmt::format("cq:{{{}:{}}}:", ns_, topic);
  }
  // Every key of the namespace, over every master.
  std::vector<std::string> Keys() {
    std::vector<std::string> out;
    for (uint16_t p : Ports(GetParam())) {
      Result<testutil::RedisReply> r = testutil::RedisCommandOnce(p, {"KEYS", "cq:*"});
      EXPECT_TRUE(r.has_value());
      if (!r.has_value()) continue;
      for (const auto& k : r->elements) {
        if (k.str.find("{" + ns_) != std::string::npos) out.push_back(k.str);
      }
    }
    return out;
  }
  std::set<std::string> PushSet() {
    const std::string key = fmt::format("cq:{{{}}}:push", ns_);
    std::set<std::string> out;
    for (uint16_t p : Ports(GetParam())) {
      Result<testutil::RedisReply> r = testutil::RedisCommandOnce(p, {"ZRANGE", key, "0", "-1"});
      if (!r.has_value() || r->is_error()) continue;  // MOVED: another master holds it
      for (const auto& t : r->elements) out.insert(t.str);
    }
    return out;
  }

  std::string ns_;
  base::ManualClock clock_{FromEpochMs(kNow)};
  std::unique_ptr<Node> a_;
  std::unique_ptr<Node> b_;
};

TEST_P(RedisPushTest, APushSentThroughOneNodeIsAnnouncedOnTheOtherAndNeverPulled) {
  ASSERT_TRUE(a_->sync->Send(Msg("t", "m1", Http(Millis(1000), Millis(5)))).has_value());
  ASSERT_TRUE(b_->heard.WaitPush("t"));
  // Not for pullers: no long poll wakes, no pull hands it out, on either node.
  EXPECT_FALSE(a_->heard.Ready("t"));
  EXPECT_FALSE(b_->heard.Ready("t"));
  Result<std::vector<core::Message>> pulled = b_->sync->Pull("t", 10);
  ASSERT_TRUE(pulled.has_value());
  EXPECT_TRUE(pulled->empty());
  Result<backend::PushTake> t = b_->Take("t");
  ASSERT_TRUE(t.has_value()) << t.error().ToString();
  ASSERT_EQ(t->messages.size(), 1u);
  EXPECT_FALSE(t->topic_callback.has_value());
  const core::MessageRecord& r = t->messages[0].record;
  EXPECT_EQ(r.payload, "body m1");
  EXPECT_TRUE(r.push);
  EXPECT_EQ(r.callback, Http(Millis(1000), Millis(5)));
  EXPECT_EQ(r.retry, 1);
  // Leased for the callback's timeout plus the margin, then its own retry interval.
  EXPECT_EQ(r.ack_deadline(), clock_.Now() + Millis(1000) + kMargin);
  EXPECT_EQ(r.retry_interval, Millis(5));
  EXPECT_TRUE(a_->Take("t")->messages.empty());
}

TEST_P(RedisPushTest, LeasesAndRetryIntervalsOfEveryVarintLengthAreReadAsCoreWritesThem) {
  // The scripts read the timeout and the retry interval from the stored bytes (one to six
  // bytes each as varints): the largest values the checks allow come out exact.
  core::NewMessage m = Msg("t", "big", Http(core::kMaxCallbackTimeout, core::kTenYears));
  m.ttl = Millis(20 * core::kTenYears.count());
  ASSERT_TRUE(a_->sync->Send(m).has_value());
  Result<backend::PushTake> t = a_->Take("t");
  ASSERT_TRUE(t.has_value());
  ASSERT_EQ(t->messages.size(), 1u);
  EXPECT_EQ(t->messages[0].record.ack_deadline(),
            clock_.Now() + core::kMaxCallbackTimeout + kMargin);
  EXPECT_EQ(t->messages[0].record.retry_interval, core::kTenYears);
  ASSERT_TRUE(a_->sync->AckBatch("t", {backend::AckItem{"big", false, "x", false, 1}}).has_value());
  EXPECT_EQ(a_->sync->Get("t", "big")->record.visible_at, clock_.Now() + core::kTenYears);
}

TEST_P(RedisPushTest, ADelayedPushIsAnnouncedAtItsTimeByANodeThatOnlyHeardOfIt) {
  ASSERT_TRUE(a_->sync->Send(Msg("later", "d", Http(Millis(1000)), Millis(5000))).has_value());
  // Only B's timers run: B armed one at the trigger time from A's publication (or, when the
  // publication comes after the clock moved, looks at once).
  b_->scheduler.Advance(Millis(4999));
  EXPECT_FALSE(b_->heard.Push("later"));
  b_->scheduler.Advance(Millis(1));
  ASSERT_TRUE(b_->heard.WaitPush("later"));
  EXPECT_EQ(b_->TakeIds("later"), std::vector<std::string>{"d"});
}

TEST_P(RedisPushTest, TakesFromTwoNodesAtOnceNeverLeaseAMessageTwice) {
  constexpr int kMessages = 300;
  std::vector<core::NewMessage> batch;
  for (int i = 0; i < kMessages; ++i) {
    batch.push_back(Msg("race", fmt::format("m{}", i), Http(Millis(60'000))));
  }
  ASSERT_TRUE(a_->sync->SendBatch(std::move(batch)).has_value());
  std::vector<std::string> got[2];
  std::thread ta([&] {
    for (auto ids = a_->TakeIds("race", 7); !ids.empty(); ids = a_->TakeIds("race", 7)) {
      got[0].insert(got[0].end(), ids.begin(), ids.end());
    }
  });
  std::thread tb([&] {
    for (auto ids = b_->TakeIds("race", 7); !ids.empty(); ids = b_->TakeIds("race", 7)) {
      got[1].insert(got[1].end(), ids.begin(), ids.end());
    }
  });
  ta.join();
  tb.join();
  std::map<std::string, int> times;
  for (const auto& g : got) {
    for (const std::string& id : g) ++times[id];
  }
  EXPECT_EQ(times.size(), static_cast<size_t>(kMessages));
  for (const auto& [id, n] : times) EXPECT_EQ(n, 1) << id;
}

TEST_P(RedisPushTest, ALeaseADeadNodeLeftIsTakenAgainByAnotherNodeWhenItEnds) {
  ASSERT_TRUE(a_->sync->Send(Msg("t", "m", Http(Millis(1000)))).has_value());
  ASSERT_TRUE(b_->heard.WaitPush("t"));
  ASSERT_EQ(a_->TakeIds("t"), std::vector<std::string>{"m"});
  a_.reset();  // dies mid-push: the outcome is never written
  b_->heard.Clear();
  // The lease's end, which B knows only from A's publication of it.
  b_->scheduler.Advance(Millis(1000) + kMargin);
  ASSERT_TRUE(b_->heard.WaitPush("t"));
  Result<backend::PushTake> t = b_->Take("t");
  ASSERT_TRUE(t.has_value());
  ASSERT_EQ(t->messages.size(), 1u);
  EXPECT_EQ(t->messages[0].record.retry, 2);  // the second attempt
}

TEST_P(RedisPushTest, ThePushSetOutlivesTheNodesAndANewNodeIsToldOfEveryTopicWithPushWork) {
  ASSERT_TRUE(a_->sync->Send(Msg("now", "n", Http(Millis(1000)))).has_value());
  ASSERT_TRUE(a_->sync->Send(Msg("later", "l", Http(Millis(1000)), Millis(60'000))).has_value());
  ASSERT_TRUE(a_->sync->Send(Msg("pull", "p", std::nullopt)).has_value());
  a_.reset();
  b_.reset();
  EXPECT_EQ(PushSet(), (std::set<std::string>{"now", "later"}));
  Node c(GetParam(), ns_, &clock_);  // its listener is set: it reads the set
  EXPECT_TRUE(c.heard.WaitPush("now"));
  EXPECT_TRUE(c.heard.WaitPush("later"));
  EXPECT_FALSE(c.heard.Push("pull"));
  EXPECT_EQ(c.TakeIds("now"), std::vector<std::string>{"n"});
}

TEST_P(RedisPushTest, ATopicLeavesThePushSetOnceItsLaneIsEmptyAndNoNodeListedItForTenMinutes) {
  ASSERT_TRUE(a_->sync->Send(Msg("t", "m", Http(Millis(1000)))).has_value());
  ASSERT_EQ(b_->TakeIds("t"), std::vector<std::string>{"m"});
  ASSERT_TRUE(b_->sync->Ack("t", "m").ok());
  a_.reset();
  b_.reset();
  clock_.Advance(Millis(9 * 60'000));
  { Node c(GetParam(), ns_, &clock_); }  // checks the topic: too recent to go
  EXPECT_EQ(PushSet(), std::set<std::string>{"t"});
  clock_.Advance(Millis(2 * 60'000));
  {
    Node c(GetParam(), ns_, &clock_);
    testutil::Eventually([&] { return PushSet().empty(); });  // its check is asynchronous I/O
  }
  EXPECT_TRUE(PushSet().empty());
}

TEST_P(RedisPushTest, TheTopicsCallbackDecidesTheLaneAtTheSendAndTheTargetAtEachTake) {
  core::TopicConfig cfg;
  cfg.callback = std::optional<core::Callback>(Http(Millis(2000)));
  cfg.retry_interval = Millis(700);
  Result<core::TopicConfig> stored = a_->sync->SetTopicConfig("t", cfg);
  ASSERT_TRUE(stored.has_value()) << stored.error().ToString();
  EXPECT_EQ(stored->callback, cfg.callback);
  EXPECT_EQ(PushSet(), std::set<std::string>{"t"});  // listed before any send can see it
  ASSERT_TRUE(b_->sync->Send(Msg("t", "by-topic", std::nullopt)).has_value());
  Result<backend::PushTake> t = a_->Take("t");
  ASSERT_TRUE(t.has_value());
  ASSERT_EQ(t->messages.size(), 1u);
  EXPECT_EQ(t->topic_callback, Http(Millis(2000)));
  EXPECT_FALSE(t->messages[0].record.callback.has_value());
  EXPECT_EQ(t->messages[0].record.ack_deadline(), clock_.Now() + Millis(2000) + kMargin);
  EXPECT_EQ(t->messages[0].record.retry_interval, Millis(700));
  // A nack waits the topic's interval; the lane stays.
  ASSERT_TRUE(a_->sync->Ack("t", "by-topic", false).ok());
  // Set to none: the message stays in the push lane, its target gone (the default lease).
  cfg = core::TopicConfig{};
  cfg.callback = std::optional<core::Callback>();
  stored = b_->sync->SetTopicConfig("t", cfg);
  ASSERT_TRUE(stored.has_value());
  ASSERT_TRUE(stored->callback.has_value());
  EXPECT_FALSE(stored->callback->has_value());
  b_->scheduler.Advance(Millis(700));
  t = b_->Take("t");
  ASSERT_TRUE(t.has_value());
  ASSERT_EQ(t->messages.size(), 1u);
  EXPECT_FALSE(t->topic_callback.has_value());
  EXPECT_EQ(t->messages[0].record.ack_deadline(),
            clock_.Now() + core::kDefaultCallbackTimeout + kMargin);
  // A send now stays in the pull lane.
  ASSERT_TRUE(b_->sync->Send(Msg("t", "plain", std::nullopt)).has_value());
  Result<std::vector<core::Message>> pulled = a_->sync->Pull("t", 10);
  ASSERT_TRUE(pulled.has_value());
  ASSERT_EQ(pulled->size(), 1u);
  EXPECT_EQ((*pulled)[0].record.msg_id, "plain");
  EXPECT_FALSE((*pulled)[0].record.push);
  // Unset (the stored layer removed): no callback field at all.
  ASSERT_TRUE(a_->sync->DeleteTopicConfig("t").ok());
  EXPECT_FALSE(a_->sync->GetTopicConfig("t")->callback.has_value());
}

TEST_P(RedisPushTest, ReleaseAttemptsNackExhaustionAndDeadLetters) {
  core::TopicConfig cfg;
  cfg.dead_letter_topic = "dlt";
  ASSERT_TRUE(a_->sync->SetTopicConfig("t", cfg).has_value());
  core::NewMessage m = Msg("t", "m", Http(Millis(1000), Millis(300)));
  m.max_retry = 1;
  ASSERT_TRUE(a_->sync->Send(m).has_value());
  ASSERT_TRUE(b_->heard.WaitPush("t"));
  b_->heard.Clear();
  ASSERT_EQ(a_->TakeIds("t"), std::vector<std::string>{"m"});
  // Released: pending again after the back-off, the attempt not counted.
  backend::AckItem release{"m", false, "", true, 1};
  Result<std::vector<Status>> r = a_->sync->AckBatch("t", {release});
  ASSERT_TRUE(r.has_value());
  ASSERT_TRUE((*r)[0].ok()) << (*r)[0].ToString();
  Result<core::Message> got = b_->sync->Get("t", "m");
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->status, MsgStatus::kWaiting);
  EXPECT_EQ(got->record.retry, 0);
  EXPECT_EQ(got->record.visible_at, clock_.Now() + core::kReleaseBackoff);
  b_->scheduler.Advance(core::kReleaseBackoff);
  ASSERT_TRUE(b_->heard.WaitPush("t"));
  ASSERT_EQ(b_->TakeIds("t"), std::vector<std::string>{"m"});
  // The outcome of another attempt changes nothing.
  r = a_->sync->AckBatch("t", {backend::AckItem{"m", true, "", false, 2}});
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ((*r)[0].code(), Errc::kInvalidState);
  EXPECT_EQ((*r)[0].message(),
            "push attempt 2 of message 'm' is over: the message is at attempt 1");
  // A failed attempt waits the callback's own interval.
  r = a_->sync->AckBatch("t", {backend::AckItem{"m", false, "HTTP 500", false, 1}});
  ASSERT_TRUE(r.has_value());
  ASSERT_TRUE((*r)[0].ok()) << (*r)[0].ToString();
  got = b_->sync->Get("t", "m");
  EXPECT_EQ(got->record.visible_at, clock_.Now() + Millis(300));
  EXPECT_EQ(got->record.last_error, "HTTP 500");
  b_->scheduler.Advance(Millis(300));
  ASSERT_EQ(b_->TakeIds("t"), std::vector<std::string>{"m"});
  // Its last attempt fails: RETRY_EXHAUST, and a dead letter in the pull lane of "dlt".
  r = b_->sync->AckBatch("t", {backend::AckItem{"m", false, "HTTP 503", false, 2}});
  ASSERT_TRUE(r.has_value());
  ASSERT_TRUE((*r)[0].ok());
  EXPECT_EQ(a_->sync->Get("t", "m")->status, MsgStatus::kRetryExhaust);
  Result<std::vector<core::Message>> dead = a_->sync->Pull("dlt", 10);
  ASSERT_TRUE(dead.has_value());
  ASSERT_EQ(dead->size(), 1u);
  EXPECT_EQ((*dead)[0].record.last_error, "HTTP 503");
  EXPECT_FALSE((*dead)[0].record.push);
}

TEST_P(RedisPushTest, CountsListsPurgeAndDeleteSeeThePushLane) {
  ASSERT_TRUE(a_->sync->Send(Msg("t", "now", Http(Millis(1000)))).has_value());
  ASSERT_TRUE(a_->sync->Send(Msg("t", "later", Http(Millis(1000)), Millis(10'000))).has_value());
  ASSERT_TRUE(a_->sync->Send(Msg("t", "taken", Http(Millis(1000)), Millis(0))).has_value());
  ASSERT_TRUE(a_->sync->Send(Msg("t", "pull", std::nullopt)).has_value());
  // Pull order within the lane: "now" was sent first.
  ASSERT_EQ(b_->TakeIds("t", 1), std::vector<std::string>{"now"});
  Result<core::TopicInfo> info = b_->sync->Info("t");
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->waiting, 1);
  EXPECT_EQ(info->ready, 2);
  EXPECT_EQ(info->consuming, 1);
  backend::ListRequest lr;
  lr.topic = "t";
  lr.limit = 10;
  Result<backend::ListPage> page = b_->sync->ListMsg(lr);
  ASSERT_TRUE(page.has_value());
  EXPECT_EQ(page->messages.size(), 4u);
  lr.status = MsgStatus::kReady;
  lr.limit = 1;
  page = b_->sync->ListMsg(lr);  // a cursor at a push-lane level, read back
  ASSERT_TRUE(page.has_value());
  ASSERT_FALSE(page->next_cursor.empty());
  lr.cursor = page->next_cursor;
  page = b_->sync->ListMsg(lr);
  ASSERT_TRUE(page.has_value()) << page.error().ToString();
  ASSERT_EQ(page->messages.size(), 1u);
  EXPECT_TRUE(b_->sync->Delete("t", "later").ok());
  Result<int64_t> purged = a_->sync->Purge("t");
  ASSERT_TRUE(purged.has_value());
  EXPECT_EQ(*purged, 3);
  EXPECT_TRUE(a_->Take("t")->messages.empty());
}

TEST_P(RedisPushTest, EveryKeyOfAPushTopicIsInTheTopicsSlot) {
  core::TopicConfig cfg;
  cfg.dead_letter_topic = "dlt";
  cfg.callback = std::optional<core::Callback>(Http(Millis(1000)));
  ASSERT_TRUE(a_->sync->SetTopicConfig("t", cfg).has_value());
  core::NewMessage m = Msg("t", "own", Http(Millis(1000), Millis(10)));
  m.max_retry = 0;
  ASSERT_TRUE(a_->sync->Send(m).has_value());
  ASSERT_TRUE(a_->sync->Send(Msg("t", "topic's", std::nullopt, Millis(100))).has_value());
  ASSERT_EQ(b_->TakeIds("t"), std::vector<std::string>{"own"});
  ASSERT_TRUE(b_->sync->AckBatch("t", {backend::AckItem{"own", false, "boom", false, 1}})
                  .has_value());  // exhausted: a dead letter
  b_->scheduler.Advance(Millis(100));
  ASSERT_EQ(a_->TakeIds("t"), std::vector<std::string>{"topic's"});
  ASSERT_TRUE(
      a_->sync->AckBatch("t", {backend::AckItem{"topic's", false, "", true, 1}}).has_value());
  ASSERT_TRUE(a_->sync->Info("t").has_value());
  for (const std::string& k : Keys()) {
    const bool own = k.rfind(Prefix("t"), 0) == 0 || k.rfind(Prefix("dlt"), 0) == 0;
    const bool shared =
        k == fmt::format("cq:{{{}}}:topics", ns_) || k == fmt::format("cq:{{{}}}:push", ns_);
    EXPECT_TRUE(own || shared) << k;
  }
}

INSTANTIATE_TEST_SUITE_P(Redis, RedisPushTest, ::testing::Values(Kind::kStandalone, Kind::kCluster),
                         [](const auto& info) {
                           return info.param == Kind::kCluster ? "Cluster" : "Standalone";
                         });

}  // namespace
}  // namespace chronoq::redis
