// 10,000 long polls parked on ONE topic with the default settings (README "Connections"): every
// one parks (no per-topic cap answers some early, max-connections refuses none), and each gets
// either a message or, at its timeout, its empty answer. The 10,000 connections are held by one
// epoll thread (bench::LoadLoop), not 10,000 threads; time moves by the test clock. Run once, on
// the default storage (embedded): the harness passes only --listen, --data-dir and --test-clock.
#include <sys/resource.h>

#include <atomic>
#include <memory>
#include <set>
#include <thread>

#include "bench/common.h"
#include "bench/load_loop.h"
#include "tests/integration/it_util.h"

namespace chronoq::it {
namespace {

using namespace std::chrono_literals;

constexpr int kPolls = 10'000;
constexpr int kMessages = 100;

// One longPollingMsg on its own connection; the answer is kept for the checks.
class OnePoll final : public bench::Session {
 public:
  OnePoll(std::string request, std::atomic<int>* answered)
      : request_(std::move(request)), answered_(answered) {}
  bench::Next NextRequest(std::string* out) override {
    if (sent_) return bench::Next::Done();
    sent_ = true;
    out->append(request_);
    return bench::Next::Send();
  }
  void OnResponse(int status, std::string_view body, std::chrono::microseconds) override {
    status_ = status;
    body_ = std::string(body);
    ++*answered_;
  }
  void OnError(std::string_view what) override {
    error_ = std::string(what);
    ++*answered_;
  }

  int status() const { return status_; }
  const std::string& body() const { return body_; }
  const std::string& error() const { return error_; }

 private:
  std::string request_;
  std::atomic<int>* answered_;  // shared by the polls; outlives them
  bool sent_ = false;
  int status_ = 0;  // 0: no answer
  std::string body_;
  std::string error_;
};

// The test process holds 10,000 sockets too: raise its soft fd limit (the server inherits it and
// fits itself). A hard limit too low fails the test; it never skips.
void RaiseFdLimit(rlim_t wanted) {
  rlimit rl{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &rl), 0);
  if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < wanted) {
    ASSERT_TRUE(rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= wanted)
        << "this test needs " << wanted << " file descriptors; the hard limit is " << rl.rlim_max
        << " (ulimit -Hn)";
    rl.rlim_cur = wanted;
    ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &rl), 0);
  }
}

// Waits until `n` polls are parked. 10,000 connections park (or are answered) at the rate the
// host allows: a sanitizer build on a loaded 2-core CI host parked 8,896 of them in 60 s. So the
// wait fails only when the count stops moving for `stall` (a poll stuck), not after a fixed total;
// `check` runs on every reading.
template <typename Check>
void WaitParkedWhileMoving(ApiClient& api, int64_t n, std::chrono::seconds stall, Check check) {
  int64_t last = -1;
  for (auto deadline = bench::SteadyClock::now() + stall;;) {
    check();
    if (::testing::Test::HasFatalFailure()) return;
    const int64_t parked = api.ParkedLongPolls();
    if (parked == n) return;
    if (parked != last) {
      last = parked;
      deadline = bench::SteadyClock::now() + stall;
    }
    ASSERT_LT(bench::SteadyClock::now(), deadline) << "parked: " << parked << ", waiting for " << n
                                                   << "; no change in " << stall.count() << " s";
    std::this_thread::sleep_for(5ms);
  }
}

TEST(LongPollCapacityTest, TenThousandParkOnOneTopicWithTheDefaults) {
  RaiseFdLimit(kPolls + 1'000);
  ServerProcess server;
  Status st = server.Start({"--test-clock"}, 30s);
  ASSERT_TRUE(st.ok()) << st.message();
  ApiClient api(server.endpoint());
  const std::string topic = "capacity";

  const std::string request = bench::FormPost(
      server.endpoint(), "/camellia/delayQueue/longPollingMsg",
      "topic=" + topic + "&batch=1&ackTimeoutMillis=60000&longPollingTimeoutMillis=30000");
  std::atomic<int> answered{0};
  std::vector<std::unique_ptr<OnePoll>> polls;
  std::vector<bench::Session*> sessions;
  for (int i = 0; i < kPolls; ++i) {
    polls.push_back(std::make_unique<OnePoll>(request, &answered));
    sessions.push_back(polls.back().get());
  }
  bench::LoadLoop loop(server.endpoint());
  ASSERT_TRUE(loop.Connect(sessions).ok());
  // The loop's thread owns the sessions until it returns: when every poll has its answer.
  std::atomic<bool> abort{false};
  std::thread client([&] {
    // Returns when every poll has its answer, or when the test ends early (abort); the
    // deadline only bounds a test that hangs.
    loop.Run(
        bench::SteadyClock::now() + 900s, [&] { return abort.load(); }, nullptr);
  });
  struct Join {
    std::thread& t;
    std::atomic<bool>& abort;
    ~Join() {
      abort = true;
      if (t.joinable()) t.join();
    }
  } join{client, abort};

  // All parked: none answered early (by a cap), none refused (HTTP 503).
  WaitParkedWhileMoving(api, kPolls, 30s, [&] {
    ASSERT_EQ(answered.load(), 0) << "long polls answered before all " << kPolls << " parked";
  });
  ASSERT_FALSE(HasFatalFailure());

  // Each message wakes one parked poll (batch 1) ...
  for (int i = 0; i < kMessages; ++i) {
    ApiResponse r = api.Queue("sendMsg", {{"topic", topic},
                                          {"msgId", "m" + std::to_string(i)},
                                          {"msg", "payload " + std::to_string(i)},
                                          {"delayMillis", "0"}});
    ASSERT_EQ(r.code(), 200) << r.Describe();
  }
  ASSERT_TRUE(api.WaitParked(kPolls - kMessages, 30s)) << "parked: " << api.ParkedLongPolls();
  // ... and the others get their empty answer at their timeout.
  api.AdvanceClock(30'000);
  WaitParkedWhileMoving(api, 0, 30s, [] {});
  ASSERT_FALSE(HasFatalFailure());
  client.join();

  std::set<std::string> delivered;
  int empty = 0;
  for (const auto& p : polls) {
    ASSERT_EQ(p->status(), 200) << p->error() << " " << p->body();
    boost::system::error_code ec;
    json::value v = json::parse(p->body(), ec);
    ASSERT_FALSE(ec) << p->body();
    ASSERT_EQ(Int(v.at("code")), 200) << p->body();
    const json::array& list = v.at("delayMsgList").as_array();
    ASSERT_LE(list.size(), 1u) << p->body();
    if (list.empty()) {
      ++empty;
    } else {
      EXPECT_TRUE(delivered.insert(Str(list[0].at("msgId"))).second) << "twice: " << p->body();
    }
  }
  EXPECT_EQ(delivered.size(), static_cast<size_t>(kMessages));
  EXPECT_EQ(empty, kPolls - kMessages);
}

}  // namespace
}  // namespace chronoq::it
