// Issue 15 on the Redis backend: two nodes (two RedisBackend instances, one namespace) on a real
// standalone server and on a real 3-master Cluster (where a topic and its dead-letter topic live
// on different slots): the stored topic configuration holds on the other node from its next
// operation on, capacity, pause, retry interval, purge, dead letters through the outbox (also one
// a dead node left behind), redrive.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <thread>

#include "base/clock.h"
#include "base/scheduler.h"
#include "redis/cluster.h"
#include "redis/command_sink.h"
#include "redis/connection.h"
#include "redis/event_loop.h"
#include "redis/redis_backend.h"
#include "tests/testutil/eventually.h"
#include "tests/testutil/redis_servers.h"
#include "tests/testutil/redis_test_options.h"
#include "tests/testutil/sync_backend.h"

namespace chronoq::redis {
namespace {

using core::MsgStatus;

constexpr int64_t kNow = 1'700'000'040'000;

enum class Kind { kStandalone, kCluster };

// One node: its connection (or cluster client) and backend, on the shared clock.
struct Node {
  Node(Kind kind, const std::string& ns, base::ManualClock* clock, base::ManualScheduler* sched,
       const core::TopicDefaults* defaults) {
    if (kind == Kind::kCluster) {
      std::vector<RedisEndpoint> seeds;
      for (uint16_t p : testutil::SharedDeployment<testutil::RedisCluster>()->ports())
        seeds.push_back({"127.0.0.1", p});
      ConnectionOptions co = testutil::TestConnectionOptions(seeds.front().port);
      Result<std::unique_ptr<RedisClusterClient>> c = RedisClusterClient::Connect(&loop, co, seeds);
      EXPECT_TRUE(c.has_value());
      if (c.has_value()) sink = std::move(*c);
    } else {
      conn = std::make_unique<RedisConnection>(
          &loop, testutil::TestConnectionOptions(
                     testutil::SharedDeployment<testutil::RedisStandalone>()->port()));
      sink = std::make_unique<SingleServer>(conn.get());
    }
    RedisBackendOptions o;
    o.ns = ns;
    o.publish = true;
    backend = std::make_unique<RedisBackend>(o, sink.get(), clock, sched);
    backend->SetTopicDefaults(defaults);
    sync = std::make_unique<testutil::SyncBackend>(backend.get());
  }
  ~Node() {
    sync.reset();
    backend.reset();
    sink.reset();
    conn.reset();
  }
  EventLoop loop;
  std::unique_ptr<RedisConnection> conn;
  std::unique_ptr<CommandSink> sink;
  std::unique_ptr<RedisBackend> backend;
  std::unique_ptr<testutil::SyncBackend> sync;
};

class RedisTopicsTest : public ::testing::TestWithParam<Kind> {
 protected:
  void SetUp() override {
    static std::atomic<int> next{0};
    ns_ = fmt::format("topics{}", next.fetch_add(1));
    const std::string& ns = ns_;
    core::Defaults server;
    server.ttl = Millis(3'600'000);
    server.max_retry = 3;
    server.ack_timeout = Millis(30'000);
    defaults_ = core::TopicDefaults(server, {});
    a_ = std::make_unique<Node>(GetParam(), ns, &clock_, &scheduler_, &defaults_);
    b_ = std::make_unique<Node>(GetParam(), ns, &clock_, &scheduler_, &defaults_);
  }
  void TearDown() override {
    a_.reset();
    b_.reset();
  }
  testutil::SyncBackend& A() { return *a_->sync; }
  testutil::SyncBackend& B() { return *b_->sync; }
  static core::NewMessage Msg(const std::string& topic, const std::string& id) {
    core::NewMessage m;
    m.topic = topic;
    m.msg_id = id;
    m.payload = "body " + id;
    return m;
  }
  // Waits (in real time: the moves after a script are asynchronous I/O, not the clock) until
  // `id` is in `topic` with `status`, through node `n`.
  bool WaitFor(testutil::SyncBackend& n, const std::string& topic, const std::string& id,
               MsgStatus status) {
    return testutil::Eventually([&] {
      Result<core::Message> m = n.Get(topic, id);
      return m.has_value() && m->status == status;
    });
  }

  // A command straight to Redis (as a node that died left things); answers an integer reply.
  int64_t Raw(const std::vector<std::string>& args) {
    auto run = [&]() -> Result<testutil::RedisReply> {
      if (GetParam() == Kind::kCluster)
        return testutil::SharedDeployment<testutil::RedisCluster>()->Command(args);
      Result<testutil::RedisConn> c = testutil::RedisConn::Connect(
          testutil::SharedDeployment<testutil::RedisStandalone>()->port());
      if (!c.has_value()) return c.error();
      return c->Command(args);
    };
    Result<testutil::RedisReply> r = run();
    EXPECT_TRUE(r.has_value() && !r->is_error()) << args[0];
    return r.has_value() ? r->integer : -1;
  }

  // The outbox entry a script of "src" writes when m1 (outbox member `member`) ends as `status`
  // with a dead-letter topic "dlq", written now: what a node that dies before moving it on
  // leaves behind.
  void WriteDeadLetterEntry(const std::string& member, const std::string& payload,
                            const std::string& priority, const std::string& last_error,
                            MsgStatus status, int deliveries, int64_t ended_ms) {
    const std::string p = fmt::format("cq:{{{}:src}}:", ns_);
    Raw({"HSET", p + "ob:" + member,
         "k",    "dl",
         "id",   "m1",
         "to",   "dlq",
         "p",    payload,
         "pr",   priority,
         "le",   last_error,
         "ds",   std::to_string(static_cast<int>(status)),
         "dr",   std::to_string(deliveries),
         "de",   std::to_string(ended_ms)});
    Raw({"ZADD", p + "ob", std::to_string(ToEpochMs(clock_.Now())), member});
  }
  // Topic "src" with dead-letter topic "dlq" and one delivery per message.
  void SourceWithDeadLetters() {
    core::TopicConfig c;
    c.dead_letter_topic = "dlq";
    c.max_retry = 0;
    ASSERT_TRUE(A().SetTopicConfig("src", c).has_value());
  }
  // `id` sent through A, its one delivery nacked through B: a dead letter, READY in "dlq".
  void DieIntoDeadLetters(const std::string& id) {
    ASSERT_TRUE(A().Send(Msg("src", id)).has_value());
    ASSERT_EQ(B().Pull("src", 1)->size(), 1u);
    ASSERT_TRUE(B().Ack("src", id, false).ok());
    ASSERT_TRUE(WaitFor(A(), "dlq", id, MsgStatus::kReady));
  }
  // Waits (real time: moves are asynchronous I/O) until `key` is gone; false if it stays.
  bool WaitGone(const std::string& key) {
    return testutil::Eventually([&] { return Raw({"EXISTS", key}) == 0; });
  }
  // Both nodes flushed (RedisBackend::Flush): every command they sent is answered, those whose
  // answer they do not read included (the release of markers, a publication).
  void Settle() {
    for (Node* n : {a_.get(), b_.get()}) {
      std::promise<void> settled;
      n->backend->Flush([&settled] { settled.set_value(); });
      settled.get_future().wait();
    }
  }
  // The moves into `inbox` are finished: once both nodes are flushed, no marker of it is kept for
  // longer than a day (each node shortens its markers with a ZADD XX whose answer it does not
  // read; it counts that as in flight, so the flush waits for it).
  void ExpectMarkersReleased(const std::string& inbox) {
    Settle();
    EXPECT_EQ(
        Raw({"ZCOUNT", inbox, fmt::format("({}", ToEpochMs(clock_.Now()) + 86'400'000), "+inf"}), 0)
        << "the markers of " << inbox << " were not released";
  }

  std::string ns_;
  core::TopicDefaults defaults_;
  base::ManualClock clock_{FromEpochMs(kNow)};
  base::ManualScheduler scheduler_{&clock_};
  std::unique_ptr<Node> a_, b_;
};

TEST_P(RedisTopicsTest, ConfigSetThroughOneNodeHoldsOnTheOtherAtOnce) {
  core::TopicConfig c;
  c.ttl = Millis(5'000);
  c.max_retry = 1;
  c.ack_timeout = Millis(2'000);
  Result<core::TopicConfig> set = A().SetTopicConfig("t", c);
  ASSERT_TRUE(set.has_value()) << set.error().ToString();
  EXPECT_EQ(*set, c);
  Result<core::TopicConfig> got = B().GetTopicConfig("t");
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(*got, c);

  // A send through B without ttl/maxRetry takes the stored ones; a pull through B without an
  // ack timeout takes the stored one.
  Result<core::Message> m = B().Send(Msg("t", "m1"));
  ASSERT_TRUE(m.has_value()) << m.error().ToString();
  EXPECT_EQ(m->record.expire_time, FromEpochMs(kNow + 5'000));
  EXPECT_EQ(m->record.max_retry, 1);
  backend::PullRequest req{"t", 1, std::nullopt};
  std::promise<Result<std::vector<core::Message>>> p;
  b_->backend->Pull(req, [&p](Result<std::vector<core::Message>> r) { p.set_value(std::move(r)); });
  Result<std::vector<core::Message>> pulled = p.get_future().get();
  ASSERT_TRUE(pulled.has_value() && pulled->size() == 1);
  EXPECT_EQ((*pulled)[0].record.ack_deadline(), FromEpochMs(kNow + 2'000));

  // A merge keeps the other fields; delete brings the node-local layers back.
  core::TopicConfig more;
  more.capacity = 10;
  set = B().SetTopicConfig("t", more);
  ASSERT_TRUE(set.has_value());
  EXPECT_EQ(set->capacity, 10);
  EXPECT_EQ(set->ttl, Millis(5'000));
  ASSERT_TRUE(A().DeleteTopicConfig("t").ok());
  EXPECT_TRUE(B().GetTopicConfig("t")->empty());
  m = B().Send(Msg("t", "m2"));
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->record.expire_time, FromEpochMs(kNow + 3'600'000));
  EXPECT_EQ(m->record.max_retry, 3);
}

TEST_P(RedisTopicsTest, CapacityCountsInLifeMessagesAcrossNodes) {
  core::TopicConfig c;
  c.capacity = 3;
  ASSERT_TRUE(A().SetTopicConfig("t", c).has_value());
  std::vector<core::NewMessage> batch;
  for (int i = 0; i < 5; ++i) batch.push_back(Msg("t", fmt::format("m{}", i)));
  Result<std::vector<Result<backend::Sent>>> r = B().SendBatchItems(batch);
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  ASSERT_EQ(r->size(), 5u);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE((*r)[i].has_value()) << i;
  for (int i = 3; i < 5; ++i) {
    ASSERT_FALSE((*r)[i].has_value());
    EXPECT_EQ((*r)[i].error().code(), Errc::kResourceExhausted);
    EXPECT_EQ((*r)[i].error().message(), "topic 't' is full: 3 messages in life, capacity 3");
  }
  // An idempotent re-send is answered, never refused.
  Result<backend::Sent> again = A().SendFull(Msg("t", "m0"));
  ASSERT_TRUE(again.has_value());
  EXPECT_TRUE(again->existing);
  EXPECT_EQ(A().Send(Msg("t", "m9")).error().code(), Errc::kResourceExhausted);
  // Deleting, acking and expiring free room at once.
  ASSERT_TRUE(B().Delete("t", "m0").ok());
  EXPECT_TRUE(A().Send(Msg("t", "m9")).has_value());
  EXPECT_FALSE(A().Send(Msg("t", "m10")).has_value());
  Result<std::vector<core::Message>> got = B().Pull("t", 1);
  ASSERT_TRUE(got.has_value() && got->size() == 1);
  ASSERT_TRUE(A().Ack("t", (*got)[0].record.msg_id).ok());
  EXPECT_TRUE(B().Send(Msg("t", "m10")).has_value());
  scheduler_.Advance(Millis(3'600'000));
  EXPECT_TRUE(A().Send(Msg("t", "m11")).has_value());
}

// 64 senders through two nodes (each its own connection) to a topic of capacity 1,000, while
// consumers pull and ack through both: the in-life count never exceeds the capacity, and exactly
// the capacity's worth is accepted while nothing is consumed.
TEST_P(RedisTopicsTest, CapacityIsExactUnderConcurrentSendsThroughTwoNodes) {
  core::TopicConfig c;
  c.capacity = 1'000;
  ASSERT_TRUE(A().SetTopicConfig("t", c).has_value());
  std::atomic<int> accepted{0}, refused{0}, other{0};
  std::vector<std::thread> senders;
  for (int s = 0; s < 64; ++s) {
    senders.emplace_back([&, s] {
      testutil::SyncBackend& n = s % 2 == 0 ? A() : B();
      for (int i = 0; i < 25; ++i) {
        Result<core::Message> r = n.Send(Msg("t", fmt::format("s{}-{}", s, i)));
        if (r.has_value()) {
          ++accepted;
        } else if (r.error().code() == Errc::kResourceExhausted) {
          ++refused;
        } else {
          ++other;
        }
      }
    });
  }
  for (std::thread& t : senders) t.join();
  EXPECT_EQ(accepted.load(), 1'000);
  EXPECT_EQ(refused.load(), 64 * 25 - 1'000);
  EXPECT_EQ(other.load(), 0);

  // Consumers free room while senders fill it: sampled through both nodes, never over 1,000.
  std::atomic<bool> stop{false};
  std::atomic<int64_t> worst{0};
  std::thread sampler([&] {
    while (!stop) {
      for (testutil::SyncBackend* n : {&A(), &B()}) {
        Result<core::TopicInfo> info = n->Info("t");
        if (!info.has_value()) continue;
        int64_t in_life = info->waiting + info->ready + info->consuming;
        int64_t w = worst.load();
        while (in_life > w && !worst.compare_exchange_weak(w, in_life)) {
        }
      }
    }
  });
  std::vector<std::thread> workers;
  for (int s = 0; s < 64; ++s) {
    workers.emplace_back([&, s] {
      testutil::SyncBackend& n = s % 2 == 0 ? B() : A();
      for (int i = 0; i < 10; ++i) {
        if (s % 4 == 0) {
          Result<std::vector<core::Message>> got = n.Pull("t", 5);
          if (got.has_value()) {
            for (const core::Message& m : *got) (void)n.Ack("t", m.record.msg_id);
          }
        } else {
          (void)n.Send(Msg("t", fmt::format("w{}-{}", s, i)));
        }
      }
    });
  }
  for (std::thread& t : workers) t.join();
  stop = true;
  sampler.join();
  EXPECT_LE(worst.load(), 1'000);
  core::TopicInfo info = *A().Info("t");
  EXPECT_LE(info.waiting + info.ready + info.consuming, 1'000);
}

TEST_P(RedisTopicsTest, PausedTopicDeliversNothingUntilResumedOnAnyNode) {
  ASSERT_TRUE(A().Send(Msg("t", "m1")).has_value());
  core::TopicConfig pause;
  pause.paused = true;
  ASSERT_TRUE(A().SetTopicConfig("t", pause).has_value());
  EXPECT_TRUE(B().Pull("t", 10)->empty());
  ASSERT_TRUE(B().Send(Msg("t", "m2")).has_value());  // sends are accepted
  EXPECT_TRUE(A().Pull("t", 10)->empty());
  core::TopicConfig resume;
  resume.paused = false;
  ASSERT_TRUE(B().SetTopicConfig("t", resume).has_value());
  EXPECT_EQ(A().Pull("t", 10)->size(), 2u);
}

TEST_P(RedisTopicsTest, RetryIntervalDelaysRedeliveryAfterTimeoutAndNack) {
  core::TopicConfig c;
  c.retry_interval = Millis(10'000);
  ASSERT_TRUE(A().SetTopicConfig("t", c).has_value());
  ASSERT_TRUE(A().Send(Msg("t", "m1")).has_value());
  Result<std::vector<core::Message>> got = B().Pull("t", 1, Millis(1'000));
  ASSERT_TRUE(got.has_value() && got->size() == 1);
  EXPECT_EQ((*got)[0].record.retry_interval, Millis(10'000));
  EXPECT_EQ((*got)[0].record.visible_at, FromEpochMs(kNow + 11'000));
  scheduler_.Advance(Millis(1'000));  // deadline passed: WAITING for the interval
  Result<core::Message> m = A().Get("t", "m1");
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->status, MsgStatus::kWaiting);
  EXPECT_EQ(m->status, core::StatusAt(m->record, clock_.Now()));
  EXPECT_TRUE(A().Pull("t", 1)->empty());
  core::TopicInfo info = *B().Info("t");
  EXPECT_EQ(info.waiting, 1);
  EXPECT_EQ(info.buckets[0], 1);  // consumable again in 10 s
  EXPECT_EQ(info.consuming, 0);
  scheduler_.Advance(Millis(9'999));
  EXPECT_TRUE(B().Pull("t", 1)->empty());
  scheduler_.Advance(Millis(1));
  got = B().Pull("t", 1, Millis(1'000));
  ASSERT_TRUE(got.has_value() && got->size() == 1);
  EXPECT_EQ((*got)[0].record.retry, 2);
  // A nack: pending at now + interval.
  ASSERT_TRUE(A().Ack("t", "m1", false).ok());
  m = B().Get("t", "m1");
  EXPECT_EQ(m->status, MsgStatus::kWaiting);
  EXPECT_EQ(m->record.visible_at, clock_.Now() + Millis(10'000));
  scheduler_.Advance(Millis(10'000));
  EXPECT_EQ(A().Pull("t", 1)->size(), 1u);
}

TEST_P(RedisTopicsTest, PurgeDeletesEverythingInBoundedCalls) {
  for (int i = 0; i < 25; ++i) {
    std::vector<core::NewMessage> batch;
    for (int j = 0; j < 100; ++j) batch.push_back(Msg("t", fmt::format("m{}", i * 100 + j)));
    ASSERT_TRUE(A().SendBatch(batch).has_value());
  }
  ASSERT_EQ(B().Pull("t", 10)->size(), 10u);
  Result<int64_t> n = B().Purge("t", MsgStatus::kConsuming);
  ASSERT_TRUE(n.has_value()) << n.error().ToString();
  EXPECT_EQ(*n, 10);
  n = B().Purge("t");
  ASSERT_TRUE(n.has_value());
  EXPECT_EQ(*n, 2'490);
  EXPECT_EQ(A().Get("t", "m7")->status, MsgStatus::kDelete);
  core::TopicInfo info = *A().Info("t");
  EXPECT_EQ(info.waiting + info.ready + info.consuming, 0);
}

TEST_P(RedisTopicsTest, DeadLettersMoveOnceAndRedriveBack) {
  core::TopicConfig c;
  c.dead_letter_topic = "dlq";
  c.max_retry = 0;
  c.ttl = Millis(60'000);
  ASSERT_TRUE(A().SetTopicConfig("src", c).has_value());
  ASSERT_TRUE(A().Send(Msg("src", "nacked")).has_value());
  ASSERT_TRUE(A().Send(Msg("src", "expired")).has_value());
  Result<std::vector<core::Message>> got = B().Pull("src", 1);
  ASSERT_TRUE(got.has_value() && got->size() == 1);
  ASSERT_EQ((*got)[0].record.msg_id, "nacked");
  Result<std::vector<Status>> acks = B().AckBatch("src", {{"nacked", false, "boom"}});
  ASSERT_TRUE(acks.has_value() && (*acks)[0].ok());
  ASSERT_TRUE(WaitFor(A(), "dlq", "nacked", MsgStatus::kReady));
  core::Message d = *A().Get("dlq", "nacked");
  EXPECT_EQ(d.record.payload, "body nacked");
  EXPECT_EQ(d.record.last_error, "boom");
  ASSERT_TRUE(d.record.dead_letter.has_value());
  EXPECT_EQ(d.record.dead_letter->topic, "src");
  EXPECT_EQ(d.record.dead_letter->status, MsgStatus::kRetryExhaust);
  EXPECT_EQ(d.record.dead_letter->retry, 1);
  EXPECT_EQ(B().Get("src", "nacked")->status, MsgStatus::kRetryExhaust);

  // Expiry by time: finalized by a wake-up or any script, then moved.
  scheduler_.Advance(Millis(60'000));
  ASSERT_TRUE(B().Info("src").has_value());
  ASSERT_TRUE(WaitFor(B(), "dlq", "expired", MsgStatus::kReady));
  EXPECT_EQ(B().Get("dlq", "expired")->record.dead_letter->status, MsgStatus::kExpire);

  // Redrive of a named dead letter: back in the source, gone from the dead-letter topic.
  backend::RedriveRequest one{"dlq", std::string("nacked"), 100, Millis(0)};
  Result<int64_t> n = A().Redrive(one);
  ASSERT_TRUE(n.has_value()) << n.error().ToString();
  EXPECT_EQ(*n, 1);
  EXPECT_EQ(B().Get("src", "nacked")->status, MsgStatus::kReady);
  EXPECT_EQ(B().Get("src", "nacked")->record.retry, 0);
  EXPECT_EQ(B().Get("dlq", "nacked").error().code(), Errc::kNotFound);
  EXPECT_EQ(A().Redrive(one).error().code(), Errc::kNotFound);

  // A full source refuses; the dead letter stays.
  core::TopicConfig full;
  full.capacity = 1;
  ASSERT_TRUE(A().SetTopicConfig("src", full).has_value());
  backend::RedriveRequest other{"dlq", std::string("expired"), 100, Millis(0)};
  n = B().Redrive(other);
  ASSERT_FALSE(n.has_value());
  EXPECT_EQ(n.error().code(), Errc::kResourceExhausted);
  Result<core::Message> back = A().Get("dlq", "expired");
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->status, MsgStatus::kReady);
  EXPECT_EQ(back->record.dead_letter->status, MsgStatus::kExpire);
  // Room again: a walk moves it.
  ASSERT_TRUE(A().Delete("src", "nacked").ok());
  n = B().Redrive(backend::RedriveRequest{"dlq", std::nullopt, 100, Millis(0)});
  ASSERT_TRUE(n.has_value());
  EXPECT_EQ(*n, 1);
  EXPECT_EQ(A().Get("src", "expired")->status, MsgStatus::kReady);
}

TEST_P(RedisTopicsTest, AnOutboxEntryLeftByADeadNodeIsFinishedOnce) {
  // What the nack of a last delivery leaves in the source slot when its node dies before the
  // second step: the outbox entry (the ended record itself is irrelevant to the move).
  const std::string p = fmt::format("cq:{{{}:src}}:", ns_);
  const std::string member = "0000000000000042m1";
  auto write_entry = [&] {
    WriteDeadLetterEntry(member, "body m1", "3", "boom", MsgStatus::kRetryExhaust, 1, kNow - 5'000);
  };
  write_entry();
  // Too fresh to be taken for abandoned (the node that wrote it may be moving it on).
  scheduler_.Advance(Millis(1'000));
  ASSERT_TRUE(B().Info("src").has_value());
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(B().Get("dlq", "m1").error().code(), Errc::kNotFound);
  // Later, any script of any node on the source finds it and finishes the move.
  scheduler_.Advance(Millis(2'000));
  ASSERT_TRUE(B().Info("src").has_value());
  ASSERT_TRUE(WaitFor(A(), "dlq", "m1", MsgStatus::kReady));
  core::Message d = *A().Get("dlq", "m1");
  EXPECT_EQ(d.record.priority, 3);
  EXPECT_EQ(d.record.last_error, "boom");
  EXPECT_EQ(d.record.dead_letter,
            (core::DeadLetter{"src", MsgStatus::kRetryExhaust, 1, FromEpochMs(kNow - 5'000)}));
  // A node that stored the dead letter and died before removing the entry: the entry comes
  // back, and the second move finds the same death there and stores nothing.
  ASSERT_TRUE(B().Pull("dlq", 1)->size() == 1);  // in life, CONSUMING: a new send would be kept
  write_entry();
  scheduler_.Advance(Millis(3'000));
  ASSERT_TRUE(A().Info("src").has_value());
  EXPECT_TRUE(WaitGone(p + "ob:" + member));
  EXPECT_EQ(A().Get("dlq", "m1")->status, MsgStatus::kConsuming);
  core::TopicInfo info = *A().Info("dlq");
  EXPECT_EQ(info.waiting + info.ready + info.consuming, 1);
}

// A node starting (its subscription made) looks in the outboxes of every known topic, so a dead
// letter whose node died reaches its topic even when nobody touches the source again.
TEST_P(RedisTopicsTest, ANodeStartingFinishesWhatDeadNodesLeftInOutboxes) {
  ASSERT_TRUE(A().Send(Msg("src", "other")).has_value());  // a known topic
  WriteDeadLetterEntry("0000000000000077m1", "body", "0", "", MsgStatus::kExpire, 0, kNow);
  clock_.Advance(Millis(3'000));
  b_->backend->OnResubscribed();
  ASSERT_TRUE(WaitFor(A(), "dlq", "m1", MsgStatus::kReady));
  EXPECT_EQ(A().Get("dlq", "m1")->record.dead_letter->status, MsgStatus::kExpire);
}

// A node stored a dead letter and died before removing the outbox entry; the dead letter was
// redriven (released from the dead-letter topic) before another node repeated the move. The
// marker the first move left in the dead-letter topic's inbox makes the repeat store nothing.
TEST_P(RedisTopicsTest, AMoveRepeatedAfterTheDeadLetterWasRedrivenStoresItNoMore) {
  const std::string p = fmt::format("cq:{{{}:src}}:", ns_);
  const std::string dlq = fmt::format("cq:{{{}:dlq}}:", ns_);
  const std::string member = "0000000000000042m1";
  auto write_entry = [&] {
    WriteDeadLetterEntry(member, "body m1", "0", "", MsgStatus::kExpire, 0, kNow);
  };
  write_entry();
  scheduler_.Advance(Millis(3'000));
  ASSERT_TRUE(B().Info("src").has_value());
  ASSERT_TRUE(WaitFor(A(), "dlq", "m1", MsgStatus::kReady));
  ExpectMarkersReleased(dlq + "in");
  // The state the first node left when it died after storing the dead letter: the entry is
  // still there, and so is the marker, never released.
  write_entry();
  Raw({"ZADD", dlq + "in", std::to_string(kNow + 30LL * 24 * 3'600'000), "src\n" + member});
  Result<int64_t> n = A().Redrive(backend::RedriveRequest{"dlq", std::string("m1"), 1, Millis(0)});
  ASSERT_TRUE(n.has_value()) << n.error().ToString();
  ASSERT_EQ(*n, 1);
  ASSERT_EQ(B().Get("dlq", "m1").error().code(), Errc::kNotFound);
  // Long after: another node finds the entry and repeats the move.
  scheduler_.Advance(Millis(600'000));
  ASSERT_TRUE(B().Info("src").has_value());
  EXPECT_TRUE(WaitGone(p + "ob:" + member));
  EXPECT_EQ(B().Get("dlq", "m1").error().code(), Errc::kNotFound) << "the dead letter came twice";
  EXPECT_EQ(A().Get("src", "m1")->status, MsgStatus::kReady);  // the redriven message
  core::TopicInfo info = *A().Info("dlq");
  EXPECT_EQ(info.waiting + info.ready + info.consuming, 0);
}

// The same for a redrive: a node stored the redriven message in its source and died before the
// dead-letter topic removed its outbox entry; the message was deleted (released) from the source
// before another node repeated the move.
TEST_P(RedisTopicsTest, ARedriveRepeatedAfterTheMessageWasReleasedStoresItNoMore) {
  SourceWithDeadLetters();
  DieIntoDeadLetters("m1");
  ASSERT_FALSE(HasFatalFailure());
  const std::string member = fmt::format("{:016d}m1", A().Get("dlq", "m1")->record.seq);
  ASSERT_EQ(*A().Redrive(backend::RedriveRequest{"dlq", std::string("m1"), 1, Millis(0)}), 1);
  ASSERT_EQ(B().Get("src", "m1")->status, MsgStatus::kReady);
  // The dead-letter topic's entry as a node that died before removing it left it, and the
  // source's marker as never released.
  const std::string p = fmt::format("cq:{{{}:dlq}}:", ns_);
  const std::string src = fmt::format("cq:{{{}:src}}:", ns_);
  ExpectMarkersReleased(src + "in");
  Raw({"HSET", p + "ob:" + member, "k", "rd", "to", "src", "dy", "0", "id", "m1", "p", "body m1",
       "pr", "0"});
  Raw({"ZADD", p + "ob", std::to_string(ToEpochMs(clock_.Now())), member});
  Raw({"ZADD", src + "in", std::to_string(kNow + 30LL * 24 * 3'600'000), "dlq\n" + member});
  ASSERT_TRUE(A().Delete("src", "m1", /*release=*/true).ok());
  scheduler_.Advance(Millis(600'000));
  ASSERT_TRUE(B().Info("dlq").has_value());
  EXPECT_TRUE(WaitGone(p + "ob:" + member));
  EXPECT_EQ(A().Get("src", "m1").error().code(), Errc::kNotFound) << "redriven twice";
  EXPECT_EQ(A().Get("dlq", "m1").error().code(), Errc::kNotFound);
}

// A marker leaves the inbox a minute after its entry was removed: nothing piles up.
TEST_P(RedisTopicsTest, InboxMarkersGoAMinuteAfterTheMove) {
  SourceWithDeadLetters();
  for (const char* id : {"m1", "m2"}) {
    DieIntoDeadLetters(id);
    ASSERT_FALSE(HasFatalFailure());
    scheduler_.Advance(Millis(61'000));
  }
  const std::string dlq = fmt::format("cq:{{{}:dlq}}:", ns_);
  EXPECT_EQ(Raw({"ZCARD", dlq + "in"}), 1);  // m1's went when m2 came in
}

// listMsg (issue 15): a delivery waiting out its retry interval is WAITING, listed among the
// pending messages by the time it becomes consumable; CONSUMING lists the deliveries before
// their deadline only.
TEST_P(RedisTopicsTest, ListWaitingHoldsDeliveriesInTheirRetryIntervalByWhenConsumable) {
  core::TopicConfig c;
  c.retry_interval = Millis(10'000);
  ASSERT_TRUE(A().SetTopicConfig("t", c).has_value());
  for (const char* id : {"a", "b", "c"}) ASSERT_TRUE(A().Send("t", id, "x", Millis(0)).has_value());
  ASSERT_TRUE(A().Send("t", "w1", "x", Millis(5'000)).has_value());
  ASSERT_TRUE(A().Send("t", "w2", "x", Millis(20'000)).has_value());
  ASSERT_EQ(B().Pull("t", 1, Millis(1'000))->at(0).record.msg_id, "a");  // consumable at 11 s
  ASSERT_EQ(B().Pull("t", 1, Millis(3'000))->at(0).record.msg_id, "b");  // at 13 s
  ASSERT_EQ(B().Pull("t", 1, Millis(60'000))->at(0).record.msg_id, "c");
  scheduler_.Advance(Millis(3'000));
  auto ids = [](const backend::ListPage& page) {
    std::vector<std::string> out;
    for (const core::Message& m : page.messages) out.push_back(m.record.msg_id);
    return out;
  };
  auto page = [&](core::MsgStatus st, int limit, const std::string& cursor) {
    Result<backend::ListPage> r = A().ListMsg(backend::ListRequest{"t", st, limit, cursor});
    EXPECT_TRUE(r.has_value()) << r.error().ToString();
    return r.has_value() ? *r : backend::ListPage{};
  };
  using V = std::vector<std::string>;
  backend::ListPage w = page(MsgStatus::kWaiting, 100, "");
  EXPECT_EQ(ids(w), (V{"w1", "a", "b", "w2"}));
  EXPECT_EQ(w.next_cursor, "");
  for (const core::Message& m : w.messages) EXPECT_EQ(m.status, MsgStatus::kWaiting);
  EXPECT_EQ(ids(page(MsgStatus::kConsuming, 100, "")), V{"c"});
  // A walk one by one: a message that becomes WAITING behind the cursor is not listed, one
  // ahead of it is; none twice.
  V walked;
  std::string cursor;
  for (int i = 0; i < 10; ++i) {
    backend::ListPage pg = page(MsgStatus::kWaiting, 1, cursor);
    for (const std::string& id : ids(pg)) walked.push_back(id);
    if (i == 1) {
      ASSERT_TRUE(A().Send("t", "w0", "x", Millis(1'000)).has_value());   // at 4 s
      ASSERT_TRUE(A().Send("t", "w3", "x", Millis(15'000)).has_value());  // at 18 s
    }
    cursor = pg.next_cursor;
    if (cursor.empty()) break;
  }
  EXPECT_EQ(walked, (V{"w1", "a", "b", "w3", "w2"}));
  scheduler_.Advance(Millis(8'000));  // 11 s: a is consumable again, b is not yet
  EXPECT_EQ(ids(page(MsgStatus::kWaiting, 100, "")), (V{"b", "w3", "w2"}));
  EXPECT_EQ(ids(page(MsgStatus::kReady, 100, "")), (V{"w0", "w1", "a"}));
}

// Deliveries past their deadline do not use up CONSUMING pages, nor CONSUMING ones WAITING
// pages: each page lists what it can in one call, whatever lies in the other status.
TEST_P(RedisTopicsTest, ListPagesOfOneStatusAreNotSpentOnDeliveriesOfTheOther) {
  core::TopicConfig c;
  c.retry_interval = Millis(3'600'000);
  ASSERT_TRUE(A().SetTopicConfig("t", c).has_value());
  std::vector<core::NewMessage> batch;
  for (int i = 0; i < 300; ++i) batch.push_back(Msg("t", fmt::format("w{:03d}", i)));
  ASSERT_TRUE(A().SendBatch(batch).has_value());
  ASSERT_EQ(B().Pull("t", 300, Millis(1))->size(), 300u);
  scheduler_.Advance(Millis(1));
  ASSERT_TRUE(A().Send(Msg("t", "c")).has_value());
  ASSERT_EQ(B().Pull("t", 1, Millis(7'200'000))->size(), 1u);
  Result<backend::ListPage> r =
      A().ListMsg(backend::ListRequest{"t", MsgStatus::kConsuming, 1, ""});
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->messages.size(), 1u);
  EXPECT_EQ(r->messages[0].record.msg_id, "c");
  EXPECT_EQ(r->next_cursor, "");
  r = A().ListMsg(backend::ListRequest{"t", MsgStatus::kWaiting, 1000, ""});
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->messages.size(), 300u);
  EXPECT_EQ(r->next_cursor, "");
  // Several intervals at once (the topic's changed): still each message in its status.
  c.retry_interval = Millis(0);
  ASSERT_TRUE(A().SetTopicConfig("t", c).has_value());
  ASSERT_TRUE(A().Send(Msg("t", "z")).has_value());
  ASSERT_EQ(B().Pull("t", 1, Millis(60'000))->size(), 1u);
  // (Then a CONSUMING page may stop short and answer a cursor: the walk goes on.)
  std::vector<std::string> consuming;
  std::string cursor;
  for (int i = 0; i < 100; ++i) {
    r = A().ListMsg(backend::ListRequest{"t", MsgStatus::kConsuming, 10, cursor});
    ASSERT_TRUE(r.has_value());
    for (const core::Message& m : r->messages) consuming.push_back(m.record.msg_id);
    cursor = r->next_cursor;
    if (cursor.empty()) break;
  }
  EXPECT_EQ(consuming, (std::vector<std::string>{"z", "c"}));
  r = A().ListMsg(backend::ListRequest{"t", MsgStatus::kWaiting, 1000, ""});
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->messages.size(), 300u);
  Result<int64_t> purged = B().Purge("t", MsgStatus::kConsuming);
  ASSERT_TRUE(purged.has_value());
  EXPECT_EQ(*purged, 2);
  purged = B().Purge("t", MsgStatus::kWaiting);
  ASSERT_TRUE(purged.has_value());
  EXPECT_EQ(*purged, 300);
}

// Pub/sub is at most once: a publication lost on the way (a Cluster bus link that reset) left a
// long poll parked on another node until its timeout. Recheck (called every few seconds for
// topics with parked polls) finds what is consumable and tells the listener. This fixture has
// no subscriptions, so B hears nothing of A's send but through the recheck.
TEST_P(RedisTopicsTest, ARecheckFindsWhatALostPublicationWouldHaveAnnounced) {
  struct Heard : backend::ReadyListener {
    std::atomic<int> ready{0};
    void OnReady(std::string_view topic) override {
      if (topic == "lp") ready.fetch_add(1);
    }
  } heard;
  b_->backend->SetReadyListener(&heard);
  ASSERT_TRUE(A().Send(Msg("lp", "m1")).has_value());
  EXPECT_EQ(heard.ready.load(), 0);
  b_->backend->Recheck("lp");
  // Real time: the script's answer is asynchronous I/O.
  const bool told = testutil::Eventually([&] { return heard.ready.load() > 0; });
  b_->backend->SetReadyListener(nullptr);
  EXPECT_TRUE(told);
}

INSTANTIATE_TEST_SUITE_P(Redis, RedisTopicsTest,
                         ::testing::Values(Kind::kStandalone, Kind::kCluster),
                         [](const auto& info) {
                           return info.param == Kind::kCluster ? "Cluster" : "Standalone";
                         });

}  // namespace
}  // namespace chronoq::redis
