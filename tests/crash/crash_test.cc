// Crash tests: the real binary on the embedded store, under concurrent produce and consume load,
// and under sendMsgBatch load (each batch must be wholly present or wholly absent after a kill),
// killed with SIGKILL at random moments and restarted on the same data directory, many times.
// A ledger records every answered request; after each restart and at the end the store must
// agree with it:
//   - no answered send is missing;
//   - no message is delivered by a pull that started after an answered ack or delete of it;
//   - in the end every message ever stored is acked (4) or deleted (7) as the ledger says.
// Real time is the subject here (the process dies at arbitrary instants), so this suite runs on
// the real clock with short delays and ack timeouts instead of a test clock.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "client/http_client.h"
#include "client/json.h"
#include "tests/testutil/server_harness.h"

namespace chronoq::testutil {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr const char* kTopic = "crash";

struct MessageLedger {
  bool send_answered = false;
  int64_t trigger_ms = 0;
  std::optional<Clock::time_point> acked;    // when an ack answered 200
  std::optional<Clock::time_point> deleted;  // when a delete answered 200
};

class Ledger {
 public:
  void SendAnswered(const std::string& id, int64_t trigger_ms) {
    std::lock_guard lock(mu_);
    auto& m = msgs_[id];
    m.send_answered = true;
    m.trigger_ms = trigger_ms;
  }
  void Acked(const std::string& id) {
    std::lock_guard lock(mu_);
    msgs_[id].acked = Clock::now();
  }
  void Deleted(const std::string& id) {
    std::lock_guard lock(mu_);
    msgs_[id].deleted = Clock::now();
  }
  // A pull sent at `sent` returned `id`.
  void Delivered(const std::string& id, Clock::time_point sent) {
    std::lock_guard lock(mu_);
    auto it = msgs_.find(id);
    if (it == msgs_.end()) return;
    if ((it->second.acked && *it->second.acked < sent) ||
        (it->second.deleted && *it->second.deleted < sent)) {
      violations_.push_back("message " + id + " delivered by a pull sent after it was " +
                            (it->second.acked ? "acked" : "deleted"));
    }
  }
  std::map<std::string, MessageLedger> Snapshot() {
    std::lock_guard lock(mu_);
    return msgs_;
  }
  std::vector<std::string> violations() {
    std::lock_guard lock(mu_);
    return violations_;
  }

 private:
  std::mutex mu_;
  std::map<std::string, MessageLedger> msgs_;
  std::vector<std::string> violations_;
};

std::string Form(const std::vector<std::pair<std::string, std::string>>& p) {
  return client::FormEncode(p);
}

// One load phase against a running server until `stop`; every answered request goes to the
// ledger. Connection failures (the server was killed) end the thread's work quietly.
class Load {
 public:
  Load(client::Endpoint ep, Ledger* ledger, std::atomic<uint64_t>* next_id, uint32_t seed)
      : ep_(std::move(ep)), ledger_(ledger), next_id_(next_id), seed_(seed) {}

  void Run(std::atomic<bool>* stop) {
    std::vector<std::thread> threads;
    for (int i = 0; i < 3; ++i) threads.emplace_back([this, stop, i] { Produce(stop, seed_ + i); });
    for (int i = 0; i < 3; ++i) {
      threads.emplace_back([this, stop, i] { Consume(stop, seed_ + 100 + i); });
    }
    for (auto& t : threads) t.join();
  }

 private:
  void Produce(std::atomic<bool>* stop, uint32_t seed) {
    std::mt19937 rng(seed);
    auto conn = client::HttpConnection::Connect(ep_, 1s);
    if (!conn.has_value()) return;
    while (!stop->load()) {
      std::string id = "m" + std::to_string(next_id_->fetch_add(1));
      std::string delay = std::to_string(rng() % 300);
      auto r = conn->Request("POST", "/camellia/delayQueue/sendMsg",
                             Form({{"topic", kTopic},
                                   {"msgId", id},
                                   {"msg", "payload-" + id},
                                   {"delayMillis", delay},
                                   {"maxRetry", "1000"}}),
                             "application/x-www-form-urlencoded", 2s);
      if (!r.has_value()) return;  // killed
      auto doc = client::Json::Parse(r->body);
      if (r->status == 200 && doc.has_value() && (*doc)["code"].AsInt() == 200) {
        ledger_->SendAnswered(id, (*doc)["delayMsg"]["triggerTime"].AsInt());
      }
    }
  }

  void Consume(std::atomic<bool>* stop, uint32_t seed) {
    std::mt19937 rng(seed);
    auto conn = client::HttpConnection::Connect(ep_, 1s);
    if (!conn.has_value()) return;
    while (!stop->load()) {
      Clock::time_point sent = Clock::now();
      auto r =
          conn->Request("POST", "/camellia/delayQueue/pullMsg",
                        Form({{"topic", kTopic}, {"batch", "10"}, {"ackTimeoutMillis", "300"}}),
                        "application/x-www-form-urlencoded", 2s);
      if (!r.has_value()) return;
      auto doc = client::Json::Parse(r->body);
      if (!doc.has_value()) continue;
      for (const client::Json& m : (*doc)["delayMsgList"].items()) {
        std::string id = m["msgId"].AsString();
        ledger_->Delivered(id, sent);
        int what = static_cast<int>(rng() % 10);
        if (what == 0) continue;  // never acked: delivered again after the ack timeout
        std::string path = what == 1 ? "deleteMsg" : "ackMsg";
        std::string body = what == 1   ? Form({{"topic", kTopic}, {"msgId", id}})
                           : what == 2 ? Form({{"topic", kTopic}, {"msgId", id}, {"ack", "false"}})
                                       : Form({{"topic", kTopic}, {"msgId", id}, {"ack", "true"}});
        auto a = conn->Request("POST", "/camellia/delayQueue/" + path, body,
                               "application/x-www-form-urlencoded", 2s);
        if (!a.has_value()) return;
        auto ad = client::Json::Parse(a->body);
        if (a->status != 200 || !ad.has_value() || (*ad)["code"].AsInt() != 200) continue;
        if (what == 1) ledger_->Deleted(id);
        if (what >= 3) ledger_->Acked(id);
      }
    }
  }

  client::Endpoint ep_;
  Ledger* ledger_;
  std::atomic<uint64_t>* next_id_;
  uint32_t seed_;
};

class CrashTest : public ::testing::Test {
 protected:
  // Starts (or restarts) the server on the same data directory.
  void Start(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> flags = {"--storage=embedded", "--end-life-msg-expire-millis=3600000"};
    flags.insert(flags.end(), extra.begin(), extra.end());
    if (!data_flag_.empty()) flags.push_back(data_flag_);
    Status s = server_.Start(flags, 20s);
    ASSERT_TRUE(s.ok()) << s.message();
    if (data_flag_.empty()) data_flag_ = "--data-dir=" + server_.data_dir();
  }

  // Every answered send can be read back; acked and deleted ones have that status. Between
  // rounds, the entries new since the last check plus a random sample of older ones; at the end,
  // all of them.
  void CheckStore(const std::map<std::string, MessageLedger>& ledger, bool final) {
    client::HttpConnection conn = *client::HttpConnection::Connect(server_.endpoint(), 2s);
    std::mt19937 rng(static_cast<uint32_t>(ledger.size()));
    for (const auto& [id, m] : ledger) {
      if (!m.send_answered && !m.acked && !m.deleted) continue;
      if (!final && checked_.contains(id) && rng() % 20 != 0) continue;
      checked_.insert(id);
      auto r = conn.Request("POST", "/camellia/delayQueue/getMsg",
                            Form({{"topic", kTopic}, {"msgId", id}}));
      ASSERT_TRUE(r.has_value()) << r.error().ToString();
      auto doc = client::Json::Parse(r->body);
      ASSERT_TRUE(doc.has_value()) << r->body;
      ASSERT_EQ((*doc)["code"].AsInt(), 200)
          << "answered send " << id << " is missing: " << r->body;
      int status = static_cast<int>((*doc)["delayMsg"]["status"].AsInt());
      if (m.send_answered) {
        EXPECT_EQ((*doc)["delayMsg"]["triggerTime"].AsInt(), m.trigger_ms) << id;
      }
      if (m.acked) {
        EXPECT_EQ(status, 4) << id << " was acked";
      } else if (m.deleted) {
        EXPECT_EQ(status, 7) << id << " was deleted";
      } else if (final) {
        // Drained: everything is acked or deleted by now (unanswered acks and deletes included).
        EXPECT_TRUE(status == 4 || status == 7) << id << " ended with status " << status;
      }
    }
  }

  ServerProcess server_;
  std::string data_flag_;
  std::set<std::string> checked_;
};

TEST_F(CrashTest, NothingAnsweredIsLostAcrossRepeatedKills) {
  const int kKills = 20;
  Ledger ledger;
  std::atomic<uint64_t> next_id{1};
  std::mt19937 rng(20261121);
  for (int round = 0; round < kKills; ++round) {
    // Half the rounds with fsynced writes, so both commit paths are killed mid-flight.
    Start({round % 2 == 0 ? "--sync-writes=false" : "--sync-writes=true"});
    if (HasFatalFailure()) return;
    CheckStore(ledger.Snapshot(), /*final=*/false);
    if (HasFatalFailure()) return;
    std::atomic<bool> stop{false};
    Load load(server_.endpoint(), &ledger, &next_id, 1000 * round);
    std::thread loader([&] { load.Run(&stop); });
    std::this_thread::sleep_for(std::chrono::milliseconds(150 + rng() % 450));  // kill at random
    server_.Kill();
    stop = true;
    loader.join();
  }
  // Final round: no kill; drain everything by acking whatever is delivered.
  Start();
  if (HasFatalFailure()) return;
  client::HttpConnection conn = *client::HttpConnection::Connect(server_.endpoint(), 2s);
  auto idle_since = Clock::now();
  while (Clock::now() - idle_since < 1500ms) {
    Clock::time_point sent = Clock::now();
    auto r =
        conn.Request("POST", "/camellia/delayQueue/pullMsg",
                     Form({{"topic", kTopic}, {"batch", "100"}, {"ackTimeoutMillis", "5000"}}));
    ASSERT_TRUE(r.has_value());
    auto doc = client::Json::Parse(r->body);
    ASSERT_TRUE(doc.has_value());
    const auto& list = (*doc)["delayMsgList"].items();
    if (!list.empty()) idle_since = Clock::now();
    for (const client::Json& m : list) {
      std::string id = m["msgId"].AsString();
      ledger.Delivered(id, sent);
      auto a = conn.Request("POST", "/camellia/delayQueue/ackMsg",
                            Form({{"topic", kTopic}, {"msgId", id}, {"ack", "true"}}));
      ASSERT_TRUE(a.has_value());
      ledger.Acked(id);
    }
    if (list.empty()) std::this_thread::sleep_for(20ms);  // waiting for delays to pass
  }
  auto snapshot = ledger.Snapshot();
  CheckStore(snapshot, /*final=*/true);
  auto info = conn.Request("GET", "/camellia/delayQueue/getTopicInfo?topic=crash");
  ASSERT_TRUE(info.has_value());
  auto doc = client::Json::Parse(info->body);
  EXPECT_EQ((*doc)["data"]["waitingQueueSize"].AsInt(), 0) << info->body;
  EXPECT_EQ((*doc)["data"]["readyQueueSize"].AsInt(), 0) << info->body;
  EXPECT_EQ((*doc)["data"]["ackQueueSize"].AsInt(), 0) << info->body;
  std::vector<std::string> v = ledger.violations();
  EXPECT_TRUE(v.empty()) << v.size() << " violations, first: " << v.front();
  int64_t answered = 0;
  for (const auto& [id, m] : snapshot) answered += m.send_answered ? 1 : 0;
  EXPECT_GT(answered, 1000) << "the load was too light to mean anything";
  std::printf("crash test: %d kills, %ld answered sends, %zu messages in the ledger\n", kKills,
              static_cast<long>(answered), snapshot.size());
}

// sendMsgBatch is one atomic durable write (API-EXTENSIONS.md section 2): killed in the middle of
// a batch load, the store holds each batch whole or not at all, and every answered batch whole.
// The messages wait an hour, so nothing moves while the store is walked with listMsg.
TEST_F(CrashTest, EachBatchIsWhollyPresentOrWhollyAbsentAfterKills) {
  const int kKills = 8;
  const int kPerBatch = 100;
  const std::string topic = "batches";
  std::mutex mu;
  std::set<std::string> attempted, answered;
  std::mt19937 rng(20261125);
  auto produce = [&](std::atomic<bool>* stop, const std::string& prefix) {
    auto conn = client::HttpConnection::Connect(server_.endpoint(), 1s);
    if (!conn.has_value()) return;
    for (int k = 0; !stop->load(); ++k) {
      const std::string batch = prefix + "-" + std::to_string(k);
      std::string body = R"({"topic":")" + topic + R"(","msgs":[)";
      for (int i = 0; i < kPerBatch; ++i) {
        body += (i ? "," : "") + std::string(R"({"msgId":")") + batch + "-" + std::to_string(i) +
                R"(","msg":"x","delayMillis":3600000})";
      }
      body += "]}";
      {
        std::lock_guard lock(mu);
        attempted.insert(batch);
      }
      auto r =
          conn->Request("POST", "/camellia/delayQueue/sendMsgBatch", body, "application/json", 2s);
      if (!r.has_value()) return;  // killed
      auto doc = client::Json::Parse(r->body);
      if (r->status != 200 || !doc.has_value() || (*doc)["code"].AsInt() != 200) continue;
      int stored = 0;
      for (const client::Json& item : (*doc)["results"].items()) {
        stored += item["code"].AsInt() == 200 ? 1 : 0;
      }
      if (stored == kPerBatch) {
        std::lock_guard lock(mu);
        answered.insert(batch);
      }
    }
  };
  // Messages per batch, as listMsg walks the waiting ones.
  auto count_batches = [&]() {
    std::map<std::string, int> per_batch;
    client::HttpConnection conn = *client::HttpConnection::Connect(server_.endpoint(), 2s);
    std::string cursor;
    for (int page = 0; page < 100'000; ++page) {
      std::string target = "/camellia/delayQueue/listMsg?topic=" + topic + "&status=1&limit=1000";
      if (!cursor.empty()) target += "&cursor=" + client::UrlEncode(cursor);
      auto r = conn.Request("GET", target);
      EXPECT_TRUE(r.has_value());
      if (!r.has_value()) break;
      auto doc = client::Json::Parse(r->body);
      EXPECT_TRUE(doc.has_value() && (*doc)["code"].AsInt() == 200) << r->body.substr(0, 300);
      if (!doc.has_value()) break;
      for (const client::Json& m : (*doc)["delayMsgList"].items()) {
        const std::string& id = m["msgId"].AsString();
        ++per_batch[id.substr(0, id.rfind('-'))];
      }
      if ((*doc)["nextCursor"].is_null()) break;
      cursor = (*doc)["nextCursor"].AsString();
    }
    return per_batch;
  };
  auto check = [&](const char* when) {
    std::map<std::string, int> per_batch = count_batches();
    std::lock_guard lock(mu);
    for (const auto& [batch, n] : per_batch) {
      EXPECT_TRUE(attempted.contains(batch)) << when << ": unknown batch " << batch;
      EXPECT_EQ(n, kPerBatch) << when << ": batch " << batch << " is partly stored";
    }
    for (const std::string& batch : answered) {
      EXPECT_TRUE(per_batch.contains(batch)) << when << ": answered batch " << batch << " is lost";
    }
    return per_batch.size();
  };
  size_t stored = 0;
  for (int round = 0; round < kKills; ++round) {
    Start({round % 2 == 0 ? "--sync-writes=false" : "--sync-writes=true"});
    if (HasFatalFailure()) return;
    check("after a restart");
    if (HasFatalFailure()) return;
    std::atomic<bool> stop{false};
    std::vector<std::thread> threads;
    for (int t = 0; t < 3; ++t) {
      threads.emplace_back(produce, &stop, "b" + std::to_string(round) + "." + std::to_string(t));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(150 + rng() % 450));  // kill at random
    server_.Kill();
    stop = true;
    for (auto& t : threads) t.join();
  }
  Start();
  if (HasFatalFailure()) return;
  stored = check("at the end");
  EXPECT_GT(answered.size(), 50u) << "the load was too light to mean anything";
  std::printf("batch crash test: %d kills, %zu batches attempted, %zu answered, %zu stored\n",
              kKills, attempted.size(), answered.size(), stored);
}

}  // namespace
}  // namespace chronoq::testutil
