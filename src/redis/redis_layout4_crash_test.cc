// Layout 4's burst move into E and its ended-record trim when a node dies in the middle
// (docs/redis.md "Format 4 (design, issue 20)", build step 5): nodes of namespace "crash" on the
// harness's real redis-server, sharing a test clock. A first node sends a burst of messages with
// one trigger time and goes; once they are due, node A's scripts move them into E (1,000 per
// script) while two of A's consumers pull and ack them; at a given answer A's connection is
// killed (CLIENT KILL: its scripts in flight ran whole or not at all, their answers lost) and A
// is discarded. Node B continues. Later, node C sweeps the ended records (1,000 per script) and
// dies the same way between two sweeps; node D finishes. Checked against a ledger of the
// answers the consumers got:
//   - no message is delivered by a pull sent after an ack of it was answered, none is answered
//     acked twice, and every message ends acked over A and B (what A delivered without an ack
//     comes back after its ack timeout; an ack whose answer the kill lost may have run);
//   - nothing lost or counted twice: topic info, the waiting count behind capacity ('qn' field
//     'w'), the pending buckets and their runs, E and the ended set are exact afterwards;
//   - after the retention, every ended message's record is deleted (no key of a record bucket
//     holds one), the waiting message's record is kept, and the topic leaves the sweep set.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <condition_variable>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/scheduler.h"
#include "redis/command_sink.h"
#include "redis/connection.h"
#include "redis/event_loop.h"
#include "redis/key_id.h"
#include "redis/redis_backend.h"
#include "tests/testutil/redis_servers.h"
#include "tests/testutil/redis_test_options.h"
#include "tests/testutil/sync_backend.h"

namespace chronoq::redis {
namespace {

constexpr int64_t kNow = 1'700'000'040'000;
constexpr int kBurst = 5'000;
constexpr Millis kAckTimeout{30'000};
const std::string kPrefix = "cq:{crash:t}:";

backend::AckItem AckOf(const core::Message& m) {
  backend::AckItem a;
  a.msg_id = m.record.msg_id;
  return a;
}

// What the consumers were answered, from the loop thread.
class Ledger {
 public:
  std::set<std::string> Acked() {
    std::lock_guard lock(mu_);
    return acked_;
  }
  // A pull sent when `acked_before` were acked delivered `ids`.
  void Delivered(const std::vector<core::Message>& ms, const std::set<std::string>& acked_before) {
    std::lock_guard lock(mu_);
    for (const core::Message& m : ms) {
      if (acked_before.contains(m.record.msg_id)) {
        violations_.push_back(m.record.msg_id + " delivered after its ack was answered");
      }
    }
  }
  void AckAnswered(const std::string& id) {
    std::lock_guard lock(mu_);
    if (!acked_.insert(id).second) violations_.push_back(id + " acked twice");
  }
  std::vector<std::string> Violations() {
    std::lock_guard lock(mu_);
    return violations_;
  }

 private:
  std::mutex mu_;
  std::set<std::string> acked_;
  std::vector<std::string> violations_;
};

class Layout4CrashTest : public ::testing::TestWithParam<int> {
 protected:
  struct Node {
    std::unique_ptr<RedisConnection> conn;
    std::unique_ptr<CommandSink> sink;
    std::unique_ptr<RedisBackend> backend;
    std::unique_ptr<testutil::SyncBackend> sync;
    std::string client_id;  // of its connection, for CLIENT KILL
  };

  void SetUp() override {
    Status s = redis_.Start();
    ASSERT_TRUE(s.ok()) << s.ToString();
    Result<testutil::RedisConn> c = testutil::RedisConn::Connect(redis_.port());
    ASSERT_TRUE(c.has_value()) << c.error().ToString();
    raw_ = std::make_unique<testutil::RedisConn>(std::move(*c));
  }

  // A node creating topics in layout 4 (the test-only switch; the config refuses format 4).
  std::unique_ptr<Node> StartNode() {
    auto n = std::make_unique<Node>();
    ConnectionOptions co = testutil::TestConnectionOptions(redis_.port());
    n->conn = std::make_unique<RedisConnection>(&loop_, co);
    n->sink = std::make_unique<SingleServer>(n->conn.get());
    RedisBackendOptions o;
    o.ns = "crash";
    o.record_format = 4;
    n->backend = std::make_unique<RedisBackend>(o, n->sink.get(), &clock_, &scheduler_);
    n->sync = std::make_unique<testutil::SyncBackend>(n->backend.get());
    std::promise<std::string> id;
    n->sink->Command("", {"CLIENT", "ID"}, [&id](Result<RedisReply> r) {
      id.set_value(r.has_value() ? std::to_string(r->integer) : "");
    });
    n->client_id = id.get_future().get();
    return n;
  }
  // The node dies: its connection is killed with whatever it has in flight, then it is discarded
  // (its timers, coalescers and wake-up chains with it).
  void Kill(std::unique_ptr<Node>& n) {
    Result<testutil::RedisReply> r = raw_->Command({"CLIENT", "KILL", "ID", n->client_id});
    EXPECT_TRUE(r.has_value() && r->integer == 1);
    n.reset();
  }
  void Settle(Node& n) {
    std::promise<void> settled;
    n.backend->Flush([&settled] { settled.set_value(); });
    settled.get_future().wait();
  }
  int64_t Int(const std::vector<std::string>& cmd) {
    Result<testutil::RedisReply> r = raw_->Command(cmd);
    if (!r.has_value() || r->is_nil()) return 0;
    return r->type == testutil::RedisReply::Type::kInteger ? r->integer : std::stoll(r->str);
  }
  std::vector<std::string> Keys(const std::string& pattern) {
    std::vector<std::string> out;
    Result<testutil::RedisReply> r = raw_->Command({"KEYS", pattern});
    if (r.has_value()) {
      for (const testutil::RedisReply& e : r->elements) out.push_back(e.str);
    }
    return out;
  }

  // Two consumers on node `a` pull batches of 100 and ack them; at the `kill_at`-th answer (or
  // when both found the topic empty) the node is killed.
  void ConsumeThenKill(std::unique_ptr<Node>& a, Ledger& ledger, int kill_at) {
    RedisBackend* backend = a->backend.get();
    std::mutex mu;
    std::condition_variable cv;
    int answers = 0, running = 2;
    bool dead = false;
    auto answered = [&] {
      std::lock_guard lock(mu);
      ++answers;
      cv.notify_all();
    };
    auto stop = [&] {
      std::lock_guard lock(mu);
      --running;
      cv.notify_all();
    };
    auto alive = [&] {
      std::lock_guard lock(mu);
      return !dead;
    };
    std::function<void()> pull = [&] {
      if (!alive()) return stop();
      backend::PullRequest req{"t", 100, kAckTimeout};
      backend->Pull(req, [&, before = ledger.Acked()](Result<std::vector<core::Message>> r) {
        answered();
        if (!r.has_value() || r->empty() || !alive()) return stop();
        ledger.Delivered(*r, before);
        std::vector<backend::AckItem> items;
        std::vector<std::string> ids;
        for (const core::Message& m : *r) {
          items.push_back(AckOf(m));
          ids.push_back(m.record.msg_id);
        }
        backend->AckBatch("t", std::move(items), [&, ids](Result<std::vector<Status>> s) {
          answered();
          if (s.has_value()) {
            for (size_t i = 0; i < ids.size(); ++i) {
              if ((*s)[i].ok()) ledger.AckAnswered(ids[i]);
            }
          }
          pull();
        });
      });
    };
    pull();
    pull();
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return answers >= kill_at || running == 0; });
    dead = true;
    lock.unlock();
    Kill(a);
    lock.lock();
    cv.wait(lock, [&] { return running == 0; });
  }

  testutil::RedisStandalone redis_;
  std::unique_ptr<testutil::RedisConn> raw_;
  base::ManualClock clock_{FromEpochMs(kNow)};
  base::ManualScheduler scheduler_{&clock_};
  EventLoop loop_;
};

TEST_P(Layout4CrashTest, ANodeDyingInTheBurstMoveOrTheTrimLosesAndDoublesNothing) {
  Ledger ledger;
  std::unique_ptr<Node> sender = StartNode();
  for (int b = 0; b < kBurst / 100; ++b) {
    std::vector<core::NewMessage> batch;
    for (int i = 0; i < 100; ++i) {
      batch.push_back(core::NewMessage{"t", fmt::format("m{}", b * 100 + i), "x", Millis(60'000)});
    }
    ASSERT_TRUE(sender->sync->SendBatch(std::move(batch)).has_value());
  }
  ASSERT_TRUE(sender->sync->Send("t", "keep", "x", Millis(86'400'000)).has_value());
  EXPECT_EQ(Int({"HGET", kPrefix + "qn", "w"}), kBurst + 1);
  Settle(*sender);
  sender.reset();  // its wake-up timers with it: A's scripts do the move

  // Due: A's first scripts move 1,000 each into E (answering "now" as the next change, so A
  // checks again at once) while its consumers pull and ack; A dies at the parameter's answer
  // (the first ones: in the middle of the move; in runs here the 1st and 2nd answers found
  // 2,000-3,000
  // of the 5,000 not moved yet).
  std::unique_ptr<Node> a = StartNode();
  scheduler_.Advance(Millis(60'000));
  ConsumeThenKill(a, ledger, GetParam());
  const size_t acked_on_a = ledger.Acked().size();

  // B carries on: the rest of the move, and A's deliveries without an answered ack once their
  // ack timeout passed.
  std::unique_ptr<Node> b = StartNode();
  for (int round = 0; round < 3; ++round) {
    for (;;) {
      std::set<std::string> before = ledger.Acked();
      Result<std::vector<core::Message>> got = b->sync->Pull("t", 100, kAckTimeout);
      ASSERT_TRUE(got.has_value()) << got.error().ToString();
      if (got->empty()) break;
      ledger.Delivered(*got, before);
      std::vector<backend::AckItem> items;
      for (const core::Message& m : *got) items.push_back(AckOf(m));
      Result<std::vector<Status>> acks = b->sync->AckBatch("t", items);
      ASSERT_TRUE(acks.has_value()) << acks.error().ToString();
      for (size_t i = 0; i < items.size(); ++i) {
        EXPECT_TRUE((*acks)[i].ok()) << items[i].msg_id << ": " << (*acks)[i].ToString();
        if ((*acks)[i].ok()) ledger.AckAnswered(items[i].msg_id);
      }
    }
    scheduler_.Advance(kAckTimeout + Millis(1));
  }
  for (const std::string& v : ledger.Violations()) ADD_FAILURE() << v;
  // Acks A sent whose answers the kill lost may have run: every message is acked, and all but
  // those were answered.
  const std::set<std::string> acked = ledger.Acked();
  EXPECT_GE(acked.size() + 200, static_cast<size_t>(kBurst)) << acked_on_a << " answered on A";
  for (int i = 0; i < kBurst; ++i) {
    const std::string id = fmt::format("m{}", i);
    Result<core::Message> m = b->sync->Get("t", id);
    ASSERT_TRUE(m.has_value()) << id;
    EXPECT_EQ(m->status, core::MsgStatus::kConsumeOk)
        << id << (acked.contains(id) ? "" : " (not answered)");
  }
  Result<core::TopicInfo> info = b->sync->Info("t");
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->waiting, 1);
  EXPECT_EQ(info->ready, 0);
  EXPECT_EQ(info->consuming, 0);
  EXPECT_EQ(Int({"HGET", kPrefix + "qn", "w"}), 1);  // "keep": the capacity counts it alone
  EXPECT_EQ(Int({"HGET", kPrefix + "qn", "n0"}), 1);
  EXPECT_EQ(Int({"ZCARD", kPrefix + "qr0"}), 1);  // one run, of one bucket, holding "keep"
  EXPECT_EQ(
      Int({"HGET", kPrefix + "qc0",
           "n" + raw_->Command({"ZRANGE", kPrefix + "qr0", "0", "0"})->elements[0].str.substr(14)}),
      1);
  EXPECT_EQ(Int({"ZCARD", kPrefix + "E"}), 0);
  EXPECT_EQ(Int({"ZCARD", kPrefix + "D0"}), 0);
  EXPECT_EQ(Int({"ZCARD", kPrefix + "X4"}), kBurst);
  Settle(*b);
  b.reset();

  // The retention runs out with no request to the topic: C sweeps (1,000 records per script)
  // and dies in its second round; D finishes.
  std::unique_ptr<Node> c = StartNode();
  c->backend->OnResubscribed();  // as at a node's start: its sweep rounds begin
  scheduler_.Advance(Millis(300'000));
  Settle(*c);
  scheduler_.Advance(Millis(1'000));
  Settle(*c);
  const int64_t left = Int({"ZCARD", kPrefix + "X4"});
  EXPECT_LT(left, kBurst);  // a round ran
  scheduler_.Advance(Millis(1'000));
  Kill(c);
  std::unique_ptr<Node> d = StartNode();
  d->backend->OnResubscribed();
  for (int round = 0; round < 10 && Int({"ZCARD", kPrefix + "X4"}) > 0; ++round) {
    scheduler_.Advance(Millis(1'000));
    Settle(*d);
    scheduler_.Advance(Millis(1'000));
    Settle(*d);
  }
  EXPECT_EQ(Int({"ZCARD", kPrefix + "X4"}), 0);
  int64_t records = 0;
  for (const std::string& k : Keys(kPrefix + "b:*")) records += Int({"HLEN", k});
  EXPECT_EQ(records, 1);  // "keep"'s
  EXPECT_EQ(Int({"HEXISTS", kPrefix + "b:" + std::to_string(RecordBucketOf("keep")), "keep"}), 1);
  EXPECT_EQ(Int({"ZSCORE", "cq:{crash}:sweep", "t"}), 0);  // gone from the sweep set
  EXPECT_FALSE(d->sync->Get("t", "m0").has_value());
  EXPECT_EQ(d->sync->Get("t", "keep")->status, core::MsgStatus::kWaiting);
  Settle(*d);
}

// A dies at its consumers' 1st, 2nd, 3rd, 5th or 9th answer.
INSTANTIATE_TEST_SUITE_P(KilledAtAnswer, Layout4CrashTest, ::testing::Values(1, 2, 3, 5, 9));

}  // namespace
}  // namespace chronoq::redis
