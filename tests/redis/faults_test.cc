// A node on storage=redis while its Redis goes away and comes back: requests fail fast with a
// clear message, nothing hangs, and the node recovers by itself.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <chrono>
#include <thread>

#include "tests/testutil/redis_servers.h"
#include "tests/testutil/server_harness.h"

namespace chronoq::testutil {
namespace {

using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;

class RedisFaultsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RedisOptions o;
    o.appendonly = true;
    o.appendfsync = "always";  // what was acknowledged survives the restart below
    Status s = redis_.Start(o);
    ASSERT_TRUE(s.ok()) << s.ToString();
    s = node_.Start({"--storage=redis", "--redis-url=" + redis_.url()});
    ASSERT_TRUE(s.ok()) << s.ToString();
    api_ = std::make_unique<ApiClient>(node_.endpoint());
  }
  // A sample of GET /metrics ("name" or "name{labels}"); -1 when absent.
  double Metric(const std::string& series) {
    ApiResponse r = api_->Get("/metrics");
    EXPECT_EQ(r.status, 200) << r.Describe();
    std::string needle = "\n" + series + " ";
    size_t at = r.http.body.find(needle);
    if (at == std::string::npos) return -1;
    return std::stod(r.http.body.substr(at + needle.size()));
  }
  ApiResponse Send(const std::string& id) {
    return api_->Queue("sendMsg",
                       {{"topic", "f"}, {"msgId", id}, {"msg", "m"}, {"delayMillis", "0"}});
  }

  RedisStandalone redis_;
  ServerProcess node_;
  std::unique_ptr<ApiClient> api_;
};

TEST_F(RedisFaultsTest, UnreachableRedisAnswers500QuicklyAndTheNodeRecoversByItself) {
  ASSERT_EQ(Send("before").code(), 200);
  const std::string app_errors = "cq_http_app_errors_total{route=\"/camellia/delayQueue/sendMsg\"}";
  EXPECT_EQ(Metric("cq_redis_errors_total"), 0);
  EXPECT_EQ(Metric(app_errors), 0);
  redis_.Kill();

  // Every operation answers code 500 naming Redis, within the bounded timeouts.
  for (const char* op : {"sendMsg", "pullMsg", "getMsg", "ackMsg", "deleteMsg"}) {
    auto start = SteadyClock::now();
    ApiResponse r = api_->Queue(
        op,
        {{"topic", "f"}, {"msgId", "before"}, {"msg", "m"}, {"ack", "true"}, {"delayMillis", "0"}});
    EXPECT_LT(SteadyClock::now() - start, 3s) << op;
    EXPECT_EQ(r.status, 200) << op << ": " << r.Describe();
    EXPECT_EQ(r.code(), 500) << op << ": " << r.Describe();
    EXPECT_NE(r.msg().find("redis"), std::string::npos) << op << ": " << r.msg();
  }
  // A long poll does not hang either: it answers (an error or empty) by its timeout.
  auto start = SteadyClock::now();
  ApiResponse lp =
      api_->Queue("longPollingMsg", {{"topic", "f"}, {"longPollingTimeoutMillis", "500"}});
  EXPECT_LT(SteadyClock::now() - start, 3s);
  EXPECT_EQ(lp.status, 200) << lp.Describe();

  // The outage shows in the metrics (docs/metrics.md).
  EXPECT_EQ(Metric(app_errors), 1);
  EXPECT_EQ(Metric("cq_queue_depth_read_ok"), 0);
  EXPECT_GE(Metric("cq_redis_errors_total"), 1);

  ASSERT_TRUE(redis_.Restart().ok());
  // Recovers without a restart of the node (reconnect backoff is at most a second).
  bool back = false;
  for (int i = 0; i < 100 && !back; ++i) {
    back = Send("after").code() == 200;
    if (!back) std::this_thread::sleep_for(50ms);  // real time: the reconnect backoff
  }
  ASSERT_TRUE(back);
  EXPECT_GE(Metric("cq_redis_reconnects_total"), 1);
  EXPECT_EQ(Metric("cq_queue_depth_read_ok"), 1);
  // The message acknowledged before the outage is still there (appendfsync always).
  ApiResponse r = api_->Queue("getMsg", {{"topic", "f"}, {"msgId", "before"}});
  EXPECT_EQ(r.code(), 200) << r.Describe();
}

}  // namespace
}  // namespace chronoq::testutil
