// Crash test of dead letters on Redis (API-EXTENSIONS.md section 4, docs/redis.md "Dead letters"):
// two real chronoq nodes (`chronoq serve --storage=redis`) on one redis-server (and on a 3-master
// Redis Cluster, where a topic and its dead-letter topic live on different masters), under load:
// messages sent with short ttls expire, deliveries are nacked or left to time out with one
// delivery allowed, so they end as 5 or 6 and move to the dead-letter topic through the outbox;
// a consumer of the dead-letter topic acks what it gets. One node at a time is killed with
// SIGKILL at random moments and started again while the other carries on, many times.
//
// Checked against a ledger of answered requests:
//   - after each kill, through the surviving node: a message found in the dead-letter topic is
//     ended in its source (never in life in both);
//   - no dead letter is delivered by a pull sent after an ack of it was answered (never doubled:
//     a second move of an acked dead letter would make it consumable again);
//   - at the end, once every message's time has run out: each answered message ended in its
//     source as 5 or 6 is in the dead-letter topic exactly once, with the source's end status
//     (never neither), an acked dead letter is still acked, and an acked source message has none.
// The nodes run test clocks, moved forward together by the test (messages expire and deliveries
// time out by clock moves, not by waiting); only process deaths and starts take real time.
#include <gtest/gtest.h>

#include <atomic>
#include <boost/json.hpp>
#include <chrono>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/crash/two_redis_nodes.h"
#include "tests/testutil/eventually.h"
#include "tests/testutil/redis_servers.h"
#include "tests/testutil/server_harness.h"

namespace chronoq::testutil {
namespace {

using namespace std::chrono_literals;
namespace json = boost::json;

constexpr const char* kSource = "src";
constexpr const char* kDeadLetters = "dlq";
constexpr int64_t kDay = 86'400'000;

// Shared by the load threads: the nodes' current endpoints (a node restarts on another port) and
// the ledger.
class Shared {
 public:
  void SetNode(int i, std::optional<client::Endpoint> ep) {
    std::lock_guard lock(mu_);
    nodes_[i] = std::move(ep);
  }
  // A running node's endpoint (the one of `prefer` when it runs), or none.
  std::optional<client::Endpoint> Node(int prefer) {
    std::lock_guard lock(mu_);
    if (nodes_[prefer % 2]) return nodes_[prefer % 2];
    return nodes_[(prefer + 1) % 2];
  }
  void Sent(const std::string& id) {
    std::lock_guard lock(mu_);
    sent_.insert(id);
  }
  void DeadLetterAcked(const std::string& id) {
    std::lock_guard lock(mu_);
    dl_acked_.insert(id);
  }
  // A pull of the dead-letter topic sent after `acked_before` (a copy of the acked set taken
  // before sending it) delivered `id`.
  void DeadLetterDelivered(const std::string& id, const std::set<std::string>& acked_before) {
    if (!acked_before.contains(id)) return;
    std::lock_guard lock(mu_);
    violations_.push_back("dead letter " + id + " delivered again after its ack was answered");
  }
  std::set<std::string> DeadLettersAcked() {
    std::lock_guard lock(mu_);
    return dl_acked_;
  }
  std::set<std::string> SentIds() {
    std::lock_guard lock(mu_);
    return sent_;
  }
  std::vector<std::string> violations() {
    std::lock_guard lock(mu_);
    return violations_;
  }

 private:
  std::mutex mu_;
  std::optional<client::Endpoint> nodes_[2];
  std::set<std::string> sent_;
  std::set<std::string> dl_acked_;
  std::vector<std::string> violations_;
};

std::vector<std::string> Ids(const ApiResponse& r) {
  std::vector<std::string> out;
  const json::value& l = r.at("delayMsgList");
  if (!l.is_array()) return out;
  for (const json::value& m : l.as_array()) out.emplace_back(m.at("msgId").as_string());
  return out;
}

// A client that follows the node it is meant for across restarts (a new port each time).
class NodeClient {
 public:
  NodeClient(Shared* shared, int prefer) : shared_(shared), prefer_(prefer) {}
  // Sends a request to a running node; nullopt when none answered.
  std::optional<ApiResponse> Queue(std::string_view op, const Form& form) {
    std::optional<client::Endpoint> ep = shared_->Node(prefer_);
    if (!ep) return std::nullopt;
    if (!api_ || ep->port != port_) {
      api_ = std::make_unique<ApiClient>(*ep);
      port_ = ep->port;
    }
    ApiResponse r = api_->Post(std::string(kQueuePath) + std::string(op), form);
    if (r.status == 0) return std::nullopt;  // killed under it
    return r;
  }

 private:
  Shared* shared_;
  int prefer_;
  std::unique_ptr<ApiClient> api_;
  uint16_t port_ = 0;
};

class RedisDeadLetterCrashTest : public TwoRedisNodesTest {
 protected:
  std::vector<std::string> Flags() const override {
    return {"--storage=redis", "--redis-url=" + RedisUrl(), "--namespace=crash", "--test-clock",
            // Ended messages stay readable for the checks at the end, after the clock jumped.
            "--end-life-msg-expire-millis=" + std::to_string(30 * kDay)};
  }
  void NodeMoved(int i, std::optional<client::Endpoint> ep) override {
    shared_.SetNode(i, std::move(ep));
  }

  // Moves both running nodes' clocks forward by `ms` (a node being killed just fails).
  void AdvanceBoth(int64_t ms) {
    for (int i = 0; i < 2; ++i) {
      std::optional<client::Endpoint> ep = shared_.Node(i);
      if (!ep) continue;
      ApiClient api(*ep);
      api.Request("POST", "/chronoq/test/advanceClock?millis=" + std::to_string(ms));
    }
  }

  // The load until `stop`: producers, consumers of the source (ack, nack, or let time out), a
  // consumer of the dead-letter topic, and the clock.
  void RunLoad(std::atomic<bool>* stop) {
    std::vector<std::thread> threads;
    for (int p = 0; p < 2; ++p) {
      threads.emplace_back([this, stop, p] {
        NodeClient c(&shared_, p);
        std::mt19937 rng(static_cast<unsigned>(1000 + p));
        for (int n = 0; !stop->load(); ++n) {
          const std::string id = "p" + std::to_string(p) + "-" + std::to_string(next_id_++);
          auto r = c.Queue("sendMsg", {{"topic", kSource},
                                       {"msgId", id},
                                       {"msg", "payload of " + id},
                                       {"delayMillis", "0"},
                                       {"ttlMillis", std::to_string(100 + rng() % 1'900)}});
          if (r && r->code() == 200) shared_.Sent(id);
          std::this_thread::sleep_for(2ms);  // the pace of the load, not time passing
        }
      });
    }
    for (int k = 0; k < 2; ++k) {
      threads.emplace_back([this, stop, k] {
        NodeClient c(&shared_, k + 1);
        std::mt19937 rng(static_cast<unsigned>(2000 + k));
        while (!stop->load()) {
          auto r = c.Queue("pullMsg", {{"topic", kSource}, {"batch", "8"}});
          if (!r) continue;
          for (const std::string& id : Ids(*r)) {
            const unsigned what = rng() % 3;  // ack, nack (exhausted), or let it time out
            if (what == 2) continue;
            c.Queue("ackMsg",
                    {{"topic", kSource}, {"msgId", id}, {"ack", what == 0 ? "true" : "false"}});
          }
        }
      });
    }
    threads.emplace_back([this, stop] {
      NodeClient c(&shared_, 0);
      while (!stop->load()) {
        const std::set<std::string> acked = shared_.DeadLettersAcked();
        auto r = c.Queue("pullMsg", {{"topic", kDeadLetters}, {"batch", "16"}});
        if (!r) continue;
        for (const std::string& id : Ids(*r)) {
          shared_.DeadLetterDelivered(id, acked);
          auto a = c.Queue("ackMsg", {{"topic", kDeadLetters}, {"msgId", id}, {"ack", "true"}});
          if (a && a->code() == 200) shared_.DeadLetterAcked(id);
        }
      }
    });
    threads.emplace_back([this, stop] {
      while (!stop->load()) {
        AdvanceBoth(50);
        std::this_thread::sleep_for(5ms);  // the pace of the load, not time passing
      }
    });
    for (auto& t : threads) t.join();
  }

  // getMsg through a running node: {code, status, deadLetter}.
  struct Seen {
    int64_t code = 0;
    int64_t status = 0;
    std::string dl_topic;
    int64_t dl_status = 0;
  };
  Seen Get(ApiClient& api, const std::string& topic, const std::string& id) {
    ApiResponse r = api.Queue("getMsg", {{"topic", topic}, {"msgId", id}});
    Seen s;
    s.code = r.code();
    const json::value& m = r.at("delayMsg");
    if (s.code != 200 || !m.is_object()) return s;
    s.status = m.at("status").as_int64();
    if (const json::value* d = m.as_object().if_contains("deadLetter")) {
      s.dl_topic = std::string(d->at("topic").as_string());
      s.dl_status = d->at("status").as_int64();
    }
    return s;
  }

  // Through node `via`: each id found in the dead-letter topic is ended in the source (the reads
  // go dead-letter topic first, then source: an end is never undone).
  void CheckNeverBothInLife(int via, const std::vector<std::string>& ids) {
    ApiClient api(nodes_[via].endpoint());
    for (const std::string& id : ids) {
      Seen dl = Get(api, kDeadLetters, id);
      if (dl.code != 200) continue;
      Seen src = Get(api, kSource, id);
      ASSERT_EQ(src.code, 200) << id;
      EXPECT_TRUE(src.status == 5 || src.status == 6)
          << id << " is in the dead-letter topic (status " << dl.status
          << ") while its source has it in status " << src.status;
    }
  }

  // Entries in the source's outbox (dead letters not yet moved), read from Redis.
  int64_t OutboxSize() {
    const std::vector<std::string> cmd = {"ZCARD", "cq:{crash:src}:ob"};
    Result<RedisReply> r = Redis(cmd);
    return r.has_value() ? r->integer : -1;
  }

  Shared shared_;
  std::atomic<uint64_t> next_id_{0};
};

TEST_P(RedisDeadLetterCrashTest, EachEndIsInTheDeadLetterTopicOnceAcrossKills) {
  {
    ApiClient api(nodes_[0].endpoint());
    ApiResponse r = api.Queue("setTopicConfig", {{"topic", kSource},
                                                 {"deadLetterTopic", kDeadLetters},
                                                 {"maxRetry", "0"},
                                                 {"ackTimeoutMillis", "200"}});
    ASSERT_EQ(r.code(), 200) << r.Describe();
    r = api.Queue("setTopicConfig",
                  {{"topic", kDeadLetters}, {"ttlMillis", std::to_string(20 * kDay)}});
    ASSERT_EQ(r.code(), 200) << r.Describe();
  }
  const int kKills = 8;
  int64_t left_at_kills = 0;
  std::mt19937 rng(20261125);
  std::atomic<bool> stop{false};
  std::thread load([&] { RunLoad(&stop); });
  for (int round = 0; round < kKills && !HasFatalFailure(); ++round) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300 + rng() % 500));  // a random moment
    const int victim = static_cast<int>(rng() % 2);
    KillNode(victim);
    left_at_kills += OutboxSize();  // entries in flight, or left by the killed node
    // The other node carries on alone for a while; what it shows must hold meanwhile.
    std::this_thread::sleep_for(std::chrono::milliseconds(100 + rng() % 300));
    std::vector<std::string> ids;
    for (const std::string& id : shared_.SentIds()) {
      if (rng() % 8 == 0) ids.push_back(id);  // a sample: the whole ledger would take too long
    }
    CheckNeverBothInLife(1 - victim, ids);
    StartNode(victim);
  }
  stop = true;
  load.join();
  ASSERT_FALSE(HasFatalFailure());
  for (const std::string& v : shared_.violations()) ADD_FAILURE() << v;

  // The end: every source message's time runs out (an hour later), the nodes finish what is due
  // and move on what killed nodes left in the outbox (entries over two seconds old).
  ApiClient a(nodes_[0].endpoint());
  ApiClient b(nodes_[1].endpoint());
  const int64_t ta = a.Now(), tb = b.Now();
  if (ta < tb) a.AdvanceClock(tb - ta);
  if (tb < ta) b.AdvanceClock(ta - tb);
  a.AdvanceClock(3'600'000);
  b.AdvanceClock(3'600'000);
  // The moves are I/O in flight: polled in real time, up to testutil::Eventually's limit.
  const bool settled = Eventually(
      [&] {
        ApiResponse info = a.Monitor("getTopicInfo", {{"topic", kSource}});
        const json::value& d = info.at("data");
        const bool in_life = !d.is_object() || d.at("waitingQueueSize").as_int64() +
                                                       d.at("readyQueueSize").as_int64() +
                                                       d.at("ackQueueSize").as_int64() >
                                                   0;
        return !in_life && OutboxSize() == 0;
      },
      20ms);
  ASSERT_TRUE(settled) << "the source did not end everything, or its outbox did not empty ("
                       << OutboxSize() << " entries)";

  const std::set<std::string> sent = shared_.SentIds();
  const std::set<std::string> dl_acked = shared_.DeadLettersAcked();
  int64_t dead = 0, acked = 0;
  for (const std::string& id : sent) {
    Seen src = Get(a, kSource, id);
    ASSERT_EQ(src.code, 200) << "answered message " << id << " is lost";
    Seen dl = Get(b, kDeadLetters, id);
    if (src.status == 5 || src.status == 6) {
      ++dead;
      ASSERT_EQ(dl.code, 200) << id << " ended as " << src.status << " without a dead letter";
      EXPECT_EQ(dl.dl_topic, kSource) << id;
      EXPECT_EQ(dl.dl_status, src.status) << id;
      if (dl_acked.contains(id)) {
        EXPECT_EQ(dl.status, 4) << "the acked dead letter " << id << " came back: doubled";
      } else {
        EXPECT_TRUE(dl.status >= 2 && dl.status <= 4) << id << " " << dl.status;
      }
    } else {
      EXPECT_EQ(src.status, 4) << id;
      EXPECT_EQ(dl.code, 404) << "acked " << id << " became a dead letter";
      ++acked;
    }
  }
  std::printf(
      "redis dead-letter crash test: %d kills (%ld outbox entries at the kills), %zu "
      "answered sends, %ld dead letters, %ld acked, %zu dead letters acked\n",
      kKills, left_at_kills, sent.size(), dead, acked, dl_acked.size());
  EXPECT_GT(dead, 200) << "the load was too light to mean anything";
}

INSTANTIATE_TEST_SUITE_P(Redis, RedisDeadLetterCrashTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "Cluster" : "Standalone"; });

}  // namespace
}  // namespace chronoq::testutil
