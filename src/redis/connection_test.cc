// RedisConnection against a real redis-server that the test starts (tests/testutil).
#include "redis/connection.h"

#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "tests/testutil/eventually.h"
#include "tests/testutil/redis_servers.h"

namespace chronoq::redis {
namespace {

using namespace std::chrono_literals;

Result<RedisReply> Call(RedisConnection& c, std::vector<std::string> args) {
  std::promise<Result<RedisReply>> p;
  c.Command(std::move(args), [&p](Result<RedisReply> r) { p.set_value(std::move(r)); });
  return p.get_future().get();
}

ConnectionOptions To(uint16_t port, std::string password = "", int db = 0) {
  ConnectionOptions o;
  o.endpoint = RedisEndpoint{"127.0.0.1", port};
  o.password = std::move(password);
  o.db = db;
  o.connect_timeout = 500ms;
  o.command_timeout = 500ms;
  o.reconnect_min = 20ms;
  o.reconnect_max = 100ms;
  return o;
}

class RedisConnectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Status s = redis_.Start();
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  testutil::RedisStandalone redis_;
  EventLoop loop_;
};

TEST_F(RedisConnectionTest, RepliesOfEveryType) {
  RedisConnection c(&loop_, To(redis_.port()));
  Result<RedisReply> r = Call(c, {"SET", "k", std::string("v\0w", 3)});
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_EQ(r->type, RedisReply::Type::kStatus);
  EXPECT_EQ(r->str, "OK");
  r = Call(c, {"GET", "k"});
  EXPECT_EQ(r->type, RedisReply::Type::kString);
  EXPECT_EQ(r->str, std::string("v\0w", 3));  // binary-safe
  EXPECT_TRUE(Call(c, {"GET", "missing"})->is_nil());
  EXPECT_EQ(Call(c, {"INCRBY", "n", "41"})->integer, 41);
  r = Call(c, {"RPUSH", "l", "a", "b"});
  r = Call(c, {"LRANGE", "l", "0", "-1"});
  ASSERT_EQ(r->type, RedisReply::Type::kArray);
  ASSERT_EQ(r->elements.size(), 2u);
  EXPECT_EQ(r->elements[1].str, "b");
  r = Call(c, {"INCR", "l"});  // wrong type: an error reply, not a failure
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->is_error());
  EXPECT_EQ(r->error_kind(), "WRONGTYPE");
  EXPECT_TRUE(c.ready());
}

TEST_F(RedisConnectionTest, PipelinedCommandsFromManyThreadsAllAnswerInOrder) {
  RedisConnection c(&loop_, To(redis_.port()));
  constexpr int kThreads = 4;
  constexpr int kPerThread = 2000;
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  std::atomic<int> answered{0};
  std::promise<void> all;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        // Each thread increments its own counter; the reply must be exactly i + 1.
        c.Command({"INCR", "ctr" + std::to_string(t)}, [&, i](Result<RedisReply> r) {
          if (!r.has_value() || r->integer != i + 1) wrong.fetch_add(1);
          if (answered.fetch_add(1) + 1 == kThreads * kPerThread) all.set_value();
        });
      }
    });
  }
  for (auto& th : threads) th.join();
  ASSERT_EQ(all.get_future().wait_for(10s), std::future_status::ready);
  EXPECT_EQ(wrong.load(), 0);
}

TEST_F(RedisConnectionTest, LogsInAndSelectsTheDatabase) {
  testutil::RedisStandalone secured;
  testutil::RedisOptions opts;
  opts.password = "s3cret";
  ASSERT_TRUE(secured.Start(opts).ok());
  RedisConnection db1(&loop_, To(secured.port(), "s3cret", 1));
  ASSERT_TRUE(Call(db1, {"SET", "k", "one"}).has_value());
  RedisConnection db0(&loop_, To(secured.port(), "s3cret", 0));
  EXPECT_TRUE(Call(db0, {"GET", "k"})->is_nil());
  EXPECT_EQ(Call(db1, {"GET", "k"})->str, "one");

  // With a wrong password nothing gets through, and the failures say why: the command queued
  // behind the refused AUTH is refused by Redis (NOAUTH) or failed by the connection, which
  // then reconnects and is refused again.
  RedisConnection wrong(&loop_, To(secured.port(), "guess"));
  for (int i = 0; i < 3; ++i) {
    Result<RedisReply> r = Call(wrong, {"GET", "k"});
    if (r.has_value()) {
      EXPECT_EQ(r->error_kind(), "NOAUTH") << r->str;
    } else {
      EXPECT_EQ(r.error().code(), Errc::kUnavailable);
      EXPECT_NE(r.error().message().find("AUTH refused"), std::string::npos) << r.error().message();
    }
  }
}

TEST_F(RedisConnectionTest, UnreachableServerFailsWithinTheConnectTimeout) {
  uint16_t nobody = testutil::PickFreeRedisPort();
  RedisConnection c(&loop_, To(nobody));
  auto start = std::chrono::steady_clock::now();
  Result<RedisReply> r = Call(c, {"PING"});
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), Errc::kUnavailable);
  EXPECT_NE(r.error().message().find(std::to_string(nobody)), std::string::npos)
      << r.error().message();
  EXPECT_FALSE(c.ready());
}

TEST_F(RedisConnectionTest, RecoversByItselfWhenTheServerComesBack) {
  RedisConnection c(&loop_, To(redis_.port()));
  ASSERT_TRUE(Call(c, {"PING"}).has_value());
  redis_.Kill();
  auto start = std::chrono::steady_clock::now();
  Result<RedisReply> r = Call(c, {"PING"});
  EXPECT_FALSE(r.has_value());
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);  // bounded, never hangs
  ASSERT_TRUE(redis_.Restart().ok());
  // Real time: the reconnect backoff (20-100 ms here); how long is not what this is about.
  const bool back = testutil::Eventually(
      [&] {
        r = Call(c, {"PING"});
        return r.has_value() && r->str == "PONG";
      },
      20ms);
  EXPECT_TRUE(back);
  EXPECT_TRUE(c.ready());
}

TEST_F(RedisConnectionTest, ACommandWithoutReplyFailsAfterTheTimeoutAndTheConnectionRecovers) {
  RedisConnection c(&loop_, To(redis_.port()));
  auto start = std::chrono::steady_clock::now();
  Result<RedisReply> r = Call(c, {"BLPOP", "never", "5"});  // blocks 5 s on the server
  auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message().find("no reply within 500 ms"), std::string::npos)
      << r.error().message();
  EXPECT_GE(took, 450ms);
  EXPECT_LT(took, 2s);
  const bool back = testutil::Eventually(
      [&] {
        r = Call(c, {"PING"});
        return r.has_value() && r->str == "PONG";
      },
      20ms);
  EXPECT_TRUE(back);
}

}  // namespace
}  // namespace chronoq::redis
