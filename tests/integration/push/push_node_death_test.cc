// Push delivery goes on when a node dies (issue 16, docs/push.md): two real nodes on one Redis
// (their own, started here, on the test clock), one killed with SIGKILL while it holds leased
// attempts. Its attempts are taken again by the other node at the end of their leases, and
// messages sent afterwards are pushed by the survivor. Its own ctest target, run in the
// redis2 variant only (tests/integration/CMakeLists.txt).
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <set>

#include "tests/integration/push/push_it.h"

namespace chronoq::it {
namespace {

class PushNodeDeathTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static int runs = 0;
    const std::vector<std::string> flags = {
        "--storage=redis", fmt::format("--namespace=push-death-{}-{}", ::getpid(), ++runs),
        "--test-clock", "--log-level=warn", "--push-allowed-targets=127.0.0.1"};
    for (ServerProcess& n : nodes_) {
      Status s = n.Start(flags);
      ASSERT_TRUE(s.ok()) << s.message();
    }
    ApiClient a(nodes_[0].endpoint()), b(nodes_[1].endpoint());
    const int64_t ta = a.Now(), tb = b.Now();
    if (ta < tb) a.AdvanceClock(tb - ta);
    if (tb < ta) b.AdvanceClock(ta - tb);
  }

  static int64_t StatusOf(ApiClient& api, const std::string& topic, const std::string& id) {
    ApiResponse r = api.Queue("getMsg", {{"topic", topic}, {"msgId", id}});
    const json::value& m = r.at("delayMsg");
    return m.is_object() ? Int(m.as_object().at("status")) : 0;
  }
  // Waits (real time, bounded) until every message `prefix`0..n-1 is acked (status 4).
  bool AllAcked(ApiClient& api, const std::string& topic, const std::string& prefix, int n) {
    const auto until = std::chrono::steady_clock::now() + 20s;
    for (int i = 0; i < n; ++i) {
      while (StatusOf(api, topic, prefix + std::to_string(i)) != 4) {
        if (std::chrono::steady_clock::now() > until) {
          ADD_FAILURE() << prefix << i << " is in status "
                        << StatusOf(api, topic, prefix + std::to_string(i));
          return false;
        }
        std::this_thread::sleep_for(5ms);  // polling another process's progress, not time
      }
    }
    return true;
  }

  ServerProcess nodes_[2];
};

TEST_F(PushNodeDeathTest, TheSurvivorPushesWhatADeadNodeHadLeasedAndWhatComesAfter) {
  // Gone before the nodes stop (locals of the test): the survivor's hanging calls end at once.
  HttpReceiver stuck(Hanging());
  HttpReceiver healthy(Answering(200));
  ApiClient a(nodes_[0].endpoint());
  ApiClient b(nodes_[1].endpoint());
  const std::string t = "death";
  auto set_callback = [&](const std::string& cb) {
    ApiResponse r = a.Queue("setTopicConfig", {{"topic", t}, {"callback", cb}});
    ASSERT_EQ(r.code(), 200) << r.Describe();
  };
  // Every message goes to the topic's callback, resolved at each attempt: first a target that
  // never answers (each attempt leased for 60 s + the margin), then a healthy one.
  set_callback(
      fmt::format(R"({{"type":"http","url":"{}","timeoutMillis":60000}})", stuck.Url("/")));
  constexpr int kMessages = 30;
  for (int i = 0; i < kMessages; ++i) {
    ApiClient& via = i % 2 == 0 ? a : b;
    ApiResponse r = via.Queue(
        "sendMsg",
        {{"topic", t}, {"msgId", fmt::format("m{}", i)}, {"msg", "x"}, {"delayMillis", "0"}});
    ASSERT_EQ(r.code(), 200) << r.Describe();
  }
  // Each message is taken once, by one node or the other.
  ASSERT_TRUE(stuck.WaitForRequests(kMessages, 10s)) << stuck.RequestCount();
  EXPECT_EQ(stuck.RequestCount(), static_cast<size_t>(kMessages));
  std::set<std::string> stuck_ids;
  for (const auto& r : stuck.Requests()) stuck_ids.insert(r.Header("X-Chronoq-Msg-Id"));
  EXPECT_EQ(stuck_ids.size(), static_cast<size_t>(kMessages));

  nodes_[1].Kill();
  set_callback(fmt::format(R"({{"type":"http","url":"{}"}})", healthy.Url("/ok")));
  EXPECT_FALSE(healthy.WaitForRequests(1, 200ms)) << "an attempt taken again before its lease";
  a.AdvanceClock(62'001);  // every lease is over, the dead node's and the survivor's
  ASSERT_TRUE(healthy.WaitForRequests(kMessages, 10s)) << healthy.RequestCount();
  ASSERT_TRUE(AllAcked(a, t, "m", kMessages));
  std::set<std::string> again;
  for (const auto& r : healthy.Requests()) {
    EXPECT_EQ(r.Header("X-Chronoq-Attempt"), "2");
    again.insert(r.Header("X-Chronoq-Msg-Id"));
  }
  EXPECT_EQ(again, stuck_ids);
  EXPECT_EQ(healthy.RequestCount(), static_cast<size_t>(kMessages));

  // The survivor alone pushes what is sent now.
  for (int i = 0; i < 10; ++i) {
    ApiResponse r = a.Queue(
        "sendMsg",
        {{"topic", t}, {"msgId", fmt::format("after{}", i)}, {"msg", "y"}, {"delayMillis", "0"}});
    ASSERT_EQ(r.code(), 200) << r.Describe();
  }
  ASSERT_TRUE(AllAcked(a, t, "after", 10));
  EXPECT_EQ(healthy.RequestCount(), static_cast<size_t>(kMessages + 10));
}

}  // namespace
}  // namespace chronoq::it
