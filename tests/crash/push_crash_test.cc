// Crash test of push delivery (issue 16, docs/push.md): the real binary, on the embedded store and
// on Redis, pushes messages with callbacks to two real HTTP receivers on loopback, one fast and one
// that answers slowly (so pushes are in flight at any moment); it is killed with SIGKILL at random
// moments under that load and started again on the same store, several times. The receivers
// record every request's msgId. The last start comes once every lease of the killed processes has
// run out; that server's clock then follows real time while it finishes what is left. Checked
// against the ledger of answered sends:
//   - every answered message was pushed at least once and ends acked (status 4): none lost;
//   - a message pushed more than once had a kill and restart between its first and its last push
//     (a push whose outcome the dead process never wrote is pushed again; nothing else is
//     doubled).
// The server runs on a test clock (leases run out by clock moves, not by waiting), which starts
// at the system time and, in the rounds with kills, stands still.
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
#include "push/testing/http_receiver.h"
#include "tests/testutil/redis_servers.h"
#include "tests/testutil/server_harness.h"

namespace chronoq::testutil {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;
using push::testing::HttpReceiver;

constexpr const char* kTopic = "pushcrash";
// The lease of each push: the callbacks' timeoutMillis (Callback()) plus the scheduler's margin.
constexpr auto kLease = 3s + 2s;
// The least number of answered sends of a round before its kill (the whole run needs over 300).
constexpr size_t kSendsPerRound = 80;

class PushCrashTest : public ::testing::TestWithParam<std::string> {  // param: the storage
 protected:
  void SetUp() override {
    fast_ = std::make_unique<HttpReceiver>(HttpReceiver::Options{});
    HttpReceiver::Options slow;
    slow.answer_delay = 250ms;
    slow_ = std::make_unique<HttpReceiver>(slow);
    if (GetParam() == "redis") {
      Status s = redis_.Start();
      ASSERT_TRUE(s.ok()) << s.ToString();
    }
  }

  std::vector<std::string> Flags() const {
    std::vector<std::string> f = {"--test-clock", "--log-level=warn",
                                  "--push-allowed-targets=127.0.0.1",
                                  "--end-life-msg-expire-millis=86400000"};
    if (GetParam() == "redis") {
      f.push_back("--storage=redis");
      f.push_back("--redis-url=" + redis_.url());
      f.push_back("--namespace=pushcrash");
    } else {
      f.push_back("--storage=embedded");  // the data directory is kept across restarts
    }
    return f;
  }

  std::string Callback(int i) const {
    const HttpReceiver& r = i % 2 == 0 ? *fast_ : *slow_;
    return R"({"type":"http","url":")" + r.Url("/push") + R"(","timeoutMillis":3000})";
  }

  // Sends until `stop` or the server dies, recording each answered msgId.
  void Produce(client::Endpoint ep, std::atomic<bool>* stop) {
    auto conn = client::HttpConnection::Connect(ep, 1s);
    if (!conn.has_value()) return;
    while (!stop->load()) {
      const uint64_t n = next_id_++;
      const std::string id = "m" + std::to_string(n);
      auto r = conn->Request("POST", "/camellia/delayQueue/sendMsg",
                             client::FormEncode({{"topic", kTopic},
                                                 {"msgId", id},
                                                 {"msg", "payload-" + id},
                                                 {"delayMillis", "0"},
                                                 {"maxRetry", "1000"},
                                                 {"callback", Callback(static_cast<int>(n))}}),
                             "application/x-www-form-urlencoded", 2s);
      if (!r.has_value()) return;  // killed
      auto doc = client::Json::Parse(r->body);
      if (r->status == 200 && doc.has_value() && (*doc)["code"].AsInt() == 200) {
        std::lock_guard lock(mu_);
        answered_.insert(id);
      }
      std::this_thread::sleep_for(1ms);  // the pace of the load, not time passing
    }
  }

  // Which start failed (0: the first; n: the one after the n-th kill), and how long after the kill
  // it began.
  std::string StartFailed(int start, Clock::time_point last_kill) const {
    if (start == 0) return "the first start failed: ";
    const auto after =
        std::chrono::duration_cast<std::chrono::milliseconds>(restarts_.back() - last_kill);
    return "the start after kill " + std::to_string(start) + " (" + std::to_string(after.count()) +
           " ms after it) failed: ";
  }

  size_t Answered() {
    std::lock_guard lock(mu_);
    return answered_.size();
  }

  // getMsg of `id`: code, status and the answer.
  struct Seen {
    int64_t code = -1;
    int64_t status = 0;
    std::string body;
  };
  Seen Get(client::HttpConnection& conn, const std::string& id) {
    auto r = conn.Request("POST", "/camellia/delayQueue/getMsg",
                          client::FormEncode({{"topic", kTopic}, {"msgId", id}}),
                          "application/x-www-form-urlencoded", 2s);
    if (!r.has_value()) return {};
    auto doc = client::Json::Parse(r->body);
    if (!doc.has_value()) return {-1, 0, r->body};
    return {(*doc)["code"].AsInt(), (*doc)["delayMsg"]["status"].AsInt(), r->body};
  }

  // Every request both receivers got, by msgId: the receive times.
  std::map<std::string, std::vector<Clock::time_point>> Pushes() {
    std::map<std::string, std::vector<Clock::time_point>> out;
    for (const HttpReceiver* r : {fast_.get(), slow_.get()}) {
      for (const auto& req : r->Requests()) out[req.Header("X-Chronoq-Msg-Id")].push_back(req.at);
    }
    for (auto& [id, times] : out) std::sort(times.begin(), times.end());
    return out;
  }

  RedisStandalone redis_;
  std::unique_ptr<HttpReceiver> fast_;
  std::unique_ptr<HttpReceiver> slow_;
  ServerProcess server_;
  std::atomic<uint64_t> next_id_{0};
  std::mutex mu_;
  std::set<std::string> answered_;
  // The instant before each start that follows a kill. No server runs between a kill and the next
  // start, so a push recorded before it was sent by a killed process (the receivers may read a
  // request the process wrote just before its kill well after the kill, under load).
  std::vector<Clock::time_point> restarts_;
};

TEST_P(PushCrashTest, EveryMessageIsPushedAtLeastOnceAndAckedAcrossKills) {
  const int kKills = 5;
  std::mt19937 rng(20261126);
  Clock::time_point last_kill;
  for (int round = 0; round < kKills && !HasFatalFailure(); ++round) {
    if (round > 0) restarts_.push_back(Clock::now());
    Status s = server_.Start(Flags(), 20s);
    ASSERT_TRUE(s.ok()) << StartFailed(round, last_kill) << s.message();
    std::atomic<bool> stop{false};
    std::vector<std::thread> producers;
    for (int p = 0; p < 2; ++p) {
      producers.emplace_back([this, ep = server_.endpoint(), &stop] { Produce(ep, &stop); });
    }
    // A random moment in the load: with 250 ms answers, dozens of pushes are in flight. On a
    // loaded machine the server answers fewer sends in that time: the round goes on until it has
    // answered its share of the ledger (each round's, so the five add up to enough to mean
    // something).
    const size_t before = Answered();
    std::this_thread::sleep_for(std::chrono::milliseconds(400 + rng() % 600));
    for (const auto until = Clock::now() + 30s; Answered() < before + kSendsPerRound;) {
      if (Clock::now() > until) break;  // the ledger's size is checked below
      std::this_thread::sleep_for(10ms);
    }
    last_kill = Clock::now();
    server_.Kill();
    stop = true;
    for (auto& t : producers) t.join();
  }
  ASSERT_FALSE(HasFatalFailure());

  // The last start: past every lease, the server finishes the rest, its clock now moving with
  // real time (releases of a busy target wait out a back-off). A lease is the callback's timeout
  // (3 s) plus the scheduler's margin (2 s) from a take, and a killed process took nothing after
  // its kill, its clock standing at its start: the new process, whose clock starts at the system
  // time, starts with every one of them over. (Moving its clock past them once it runs would
  // also end the leases of the pushes it has just taken: those would go again, their first push
  // possibly after the move under load, with nothing to tell them from a real double push.)
  std::this_thread::sleep_until(last_kill + kLease + 1s);
  restarts_.push_back(Clock::now());
  Status s = server_.Start(Flags(), 20s);
  ASSERT_TRUE(s.ok()) << StartFailed(kKills, last_kill) << s.message();
  std::atomic<bool> done{false};
  std::thread ticker([&done, ep = server_.endpoint()] {
    ApiClient c(ep);
    for (auto last = Clock::now(); !done.load();) {
      std::this_thread::sleep_for(20ms);
      const auto now = Clock::now();
      c.AdvanceClock(std::chrono::duration_cast<std::chrono::milliseconds>(now - last).count());
      last = now;
    }
  });
  std::set<std::string> answered;
  {
    std::lock_guard lock(mu_);
    answered = answered_;
  }
  ASSERT_GT(answered.size(), 300u) << "the load was too light to mean anything";
  auto conn = client::HttpConnection::Connect(server_.endpoint(), 2s);
  ASSERT_TRUE(conn.has_value());
  const auto until = Clock::now() + 60s;
  for (const std::string& id : answered) {
    Seen got = Get(*conn, id);
    while (got.code == 200 && got.status != 4 && Clock::now() < until) {
      std::this_thread::sleep_for(10ms);  // the server's pushes are real I/O
      got = Get(*conn, id);
    }
    if (got.code != 200) ADD_FAILURE() << "answered send " << id << " is lost: " << got.body;
    if (got.code == 200 && got.status != 4) ADD_FAILURE() << id << " is not acked: " << got.body;
  }
  done = true;
  ticker.join();

  const auto pushes = Pushes();
  int64_t again = 0;
  for (const std::string& id : answered) {
    auto it = pushes.find(id);
    if (it == pushes.end()) {
      ADD_FAILURE() << id << " is acked but was never pushed";
      continue;
    }
    const auto& times = it->second;
    if (times.size() < 2) continue;
    ++again;
    const bool restart_between =
        std::any_of(restarts_.begin(), restarts_.end(),
                    [&](Clock::time_point r) { return times.front() < r && r < times.back(); });
    EXPECT_TRUE(restart_between) << id << " was pushed " << times.size()
                                 << " times without a kill and restart between";
  }
  // With the slow receiver, pushes were in flight at the kills: some went again, as they must.
  EXPECT_GT(again, 0) << "no push was in flight at a kill: the test did not test the case";
  std::cerr << GetParam() << ": " << answered.size() << " messages, " << again
            << " pushed again after a kill\n";
}

INSTANTIATE_TEST_SUITE_P(Storages, PushCrashTest, ::testing::Values("embedded", "redis"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace chronoq::testutil
