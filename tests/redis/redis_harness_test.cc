// Tests of the Redis deployments harness (tests/testutil/redis_servers.h) against real
// redis-server, redis-cli and sentinel processes.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "tests/testutil/redis_servers.h"

namespace chronoq::testutil {
namespace {

using std::chrono::seconds;

// Runs `args` on `conn`, failing the test when the connection fails.
RedisReply Cmd(RedisConn& conn, const std::vector<std::string>& args) {
  Result<RedisReply> r = conn.Command(args);
  EXPECT_TRUE(r.has_value()) << args[0] << ": " << r.error().message();
  return r.has_value() ? *r : RedisReply{};
}

RedisConn Connect(uint16_t port, std::string_view password = {}) {
  Result<RedisConn> c = RedisConn::Connect(port, password);
  EXPECT_TRUE(c.has_value()) << c.error().message();
  return c.has_value() ? std::move(c).value() : RedisConn();
}

TEST(RedisStandaloneTest, StartsAndRoundTrips) {
  RedisStandalone redis;
  Status s = redis.Start();
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_GT(redis.port(), 0);
  EXPECT_LT(redis.port(), 55000);
  EXPECT_EQ(redis.url(), fmt::format("redis://127.0.0.1:{}", redis.port()));

  RedisConn conn = Connect(redis.port());
  EXPECT_EQ(Cmd(conn, {"SET", "greeting", "hello world"}).ToString(), "OK");
  RedisReply got = Cmd(conn, {"GET", "greeting"});
  EXPECT_EQ(got.type, RedisReply::Type::kString);
  EXPECT_EQ(got.str, "hello world");
  EXPECT_TRUE(Cmd(conn, {"GET", "missing"}).is_nil());
  EXPECT_TRUE(redis.Stop().ok());
}

TEST(RedisStandaloneTest, PasswordRequiresAuth) {
  RedisStandalone redis;
  RedisOptions options;
  options.password = "s3cret:@x";
  Status s = redis.Start(options);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(redis.url(), fmt::format("redis://:s3cret%3A%40x@127.0.0.1:{}", redis.port()));

  RedisConn anonymous = Connect(redis.port());
  RedisReply refused = Cmd(anonymous, {"SET", "k", "v"});
  EXPECT_TRUE(refused.is_error()) << refused.ToString();
  EXPECT_EQ(refused.str.rfind("NOAUTH", 0), 0u) << refused.ToString();
  RedisReply wrong = Cmd(anonymous, {"AUTH", "wrong"});
  EXPECT_TRUE(wrong.is_error()) << wrong.ToString();
  EXPECT_EQ(Cmd(anonymous, {"AUTH", "s3cret:@x"}).ToString(), "OK");
  EXPECT_EQ(Cmd(anonymous, {"SET", "k", "v"}).ToString(), "OK");

  EXPECT_FALSE(RedisConn::Connect(redis.port(), "wrong").has_value());
  RedisConn authed = Connect(redis.port(), "s3cret:@x");
  EXPECT_EQ(Cmd(authed, {"GET", "k"}).str, "v");
}

TEST(RedisStandaloneTest, KillAndRestartKeepsAppendOnlyData) {
  RedisStandalone redis;
  RedisOptions options;
  options.appendonly = true;
  options.appendfsync = "always";
  Status s = redis.Start(options);
  ASSERT_TRUE(s.ok()) << s.message();
  uint16_t port = redis.port();
  {
    RedisConn conn = Connect(port);
    for (int i = 0; i < 100; ++i) {
      ASSERT_EQ(Cmd(conn, {"SET", fmt::format("key{}", i), fmt::format("value{}", i)}).ToString(),
                "OK");
    }
    EXPECT_EQ(Cmd(conn, {"RPUSH", "list", "a", "b", "c"}).integer, 3);
  }
  redis.Kill();  // SIGKILL: only what was fsynced survives
  EXPECT_FALSE(RedisConn::Connect(port).has_value());

  s = redis.Restart();
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(redis.port(), port);
  RedisConn conn = Connect(port);
  EXPECT_EQ(Cmd(conn, {"DBSIZE"}).integer, 101);
  EXPECT_EQ(Cmd(conn, {"GET", "key99"}).str, "value99");
  EXPECT_EQ(Cmd(conn, {"LRANGE", "list", "0", "-1"}).ToString(), "[\"a\", \"b\", \"c\"]");

  // A clean stop and a second restart keep it too.
  ASSERT_TRUE(redis.Stop().ok());
  s = redis.Restart();
  ASSERT_TRUE(s.ok()) << s.message();
  RedisConn again = Connect(port);
  EXPECT_EQ(Cmd(again, {"GET", "key0"}).str, "value0");
}

TEST(RedisStandaloneTest, BadConfigFailsWithTheLog) {
  RedisStandalone redis;
  RedisOptions options;
  options.extra_config = {"no-such-directive yes"};
  Status s = redis.Start(options);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("did not start"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("no-such-directive"), std::string::npos) << s.message();
  EXPECT_FALSE(redis.node().running());
}

TEST(RedisClusterTest, ClusterIsOkAndRoutesKeys) {
  RedisCluster cluster;
  RedisOptions options;
  options.password = "clusterpw";
  Status s = cluster.Start(options);
  ASSERT_TRUE(s.ok()) << s.message();
  std::vector<uint16_t> ports = cluster.ports();
  ASSERT_EQ(ports.size(), 3u);
  EXPECT_EQ(cluster.url(),
            fmt::format("redis-cluster://:clusterpw@127.0.0.1:{},127.0.0.1:{},127.0.0.1:{}",
                        ports[0], ports[1], ports[2]));
  for (uint16_t p : ports) {
    Result<RedisReply> info = RedisCommandOnce(p, {"CLUSTER", "INFO"}, "clusterpw");
    ASSERT_TRUE(info.has_value()) << info.error().message();
    EXPECT_NE(info->str.find("cluster_state:ok"), std::string::npos) << info->str;
  }

  // Keys written through node 0 with `redis-cli -c` land on every node and read back anywhere.
  std::string port0 = std::to_string(ports[0]);
  for (int i = 0; i < 20; ++i) {
    Result<std::string> out =
        RunRedisCli({"-c", "-p", port0, "-a", "clusterpw", "--no-auth-warning", "SET",
                     fmt::format("key{}", i), fmt::format("v{}", i)});
    ASSERT_TRUE(out.has_value()) << out.error().message();
    EXPECT_EQ(*out, "OK\n");
  }
  int64_t total = 0;
  for (uint16_t p : ports) {
    Result<RedisReply> n = RedisCommandOnce(p, {"DBSIZE"}, "clusterpw");
    ASSERT_TRUE(n.has_value()) << n.error().message();
    EXPECT_GT(n->integer, 0) << "node " << p << " holds no key";
    total += n->integer;
  }
  EXPECT_EQ(total, 20);
  for (int i = 0; i < 20; ++i) {
    Result<RedisReply> got = cluster.Command({"GET", fmt::format("key{}", i)}, i % 3);
    ASSERT_TRUE(got.has_value()) << got.error().message();
    EXPECT_EQ(got->str, fmt::format("v{}", i));
  }
  Result<std::string> via_cli = RunRedisCli({"-c", "-p", std::to_string(ports[2]), "-a",
                                             "clusterpw", "--no-auth-warning", "GET", "key7"});
  ASSERT_TRUE(via_cli.has_value()) << via_cli.error().message();
  EXPECT_EQ(*via_cli, "v7\n");

  cluster.KillNode(1);
  EXPECT_FALSE(RedisConn::Connect(ports[1]).has_value());
}

TEST(RedisSentinelTest, ReportsMasterAndFailsOver) {
  RedisSentinelSet set;
  RedisOptions options;
  options.password = "sentinelpw";
  Status s = set.Start(options);
  ASSERT_TRUE(s.ok()) << s.message();
  std::vector<uint16_t> sp = set.sentinel_ports();
  EXPECT_EQ(set.url(), fmt::format("redis-sentinel://:sentinelpw@127.0.0.1:{},127.0.0.1:{},"
                                   "127.0.0.1:{}/mymaster",
                                   sp[0], sp[1], sp[2]));
  uint16_t old_master = set.master_port();
  for (int i = 0; i < RedisSentinelSet::kSentinels; ++i) {
    Result<uint16_t> m = set.SentinelMasterPort(i);
    ASSERT_TRUE(m.has_value()) << m.error().message();
    EXPECT_EQ(*m, old_master);
  }
  RedisConn master = Connect(old_master, "sentinelpw");
  EXPECT_EQ(Cmd(master, {"SET", "before", "failover"}).ToString(), "OK");
  EXPECT_EQ(Cmd(master, {"WAIT", "1", "5000"}).integer, 1);  // the replica has it

  auto t0 = std::chrono::steady_clock::now();
  set.KillMaster();
  Result<uint16_t> promoted = set.WaitForFailover(seconds(20));
  auto took =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
  ASSERT_TRUE(promoted.has_value()) << promoted.error().message();
  EXPECT_EQ(*promoted, set.replica_port());
  EXPECT_EQ(set.master_port(), *promoted);
  EXPECT_LT(took, seconds(15)) << "failover took " << took.count() << " ms";
  RecordProperty("failover_ms", static_cast<int>(took.count()));

  RedisConn now_master = Connect(*promoted, "sentinelpw");
  EXPECT_EQ(Cmd(now_master, {"GET", "before"}).str, "failover");
  EXPECT_EQ(Cmd(now_master, {"SET", "after", "failover"}).ToString(), "OK");
}

}  // namespace
}  // namespace chronoq::testutil
