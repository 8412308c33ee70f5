// `chronoq redis-migrate` through the real binary (redis-format 4, build step 7: docs/redis.md
// "Migration from layouts 1-3"): a node of redis-format 2 fills a namespace on the harness's
// redis-server and stops, the namespace is migrated, and a node started again serves the same
// messages from layout 4 (a delivery made before is acked). A topic being migrated answers code
// 503 with the reason; bad options are refused with what is wrong.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <csignal>

#include "tests/testutil/redis_servers.h"
#include "tests/testutil/server_harness.h"

namespace chronoq::data_test {
namespace {

namespace json = boost::json;
using testutil::ApiClient;
using testutil::ApiResponse;
using testutil::ExitResult;
using testutil::RunBinary;
using testutil::ServerProcess;

constexpr std::string_view kNs = "migrate-e2e";

class RedisMigrateCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    redis_ = testutil::SharedDeployment<testutil::RedisStandalone>();
    ASSERT_NE(redis_, nullptr);
    url_ = "redis://127.0.0.1:" + std::to_string(redis_->port());
  }
  Status StartServer() {
    return server_.Start({"--storage=redis", "--redis-url=" + url_,
                          "--namespace=" + std::string(kNs), "--test-clock"});
  }
  ExitResult Run(std::vector<std::string> args) {
    args.insert(args.begin(), "redis-migrate");
    return RunBinary(args, std::chrono::seconds(60));
  }
  testutil::RedisReply Redis(const std::vector<std::string>& args) {
    Result<testutil::RedisReply> r = testutil::RedisCommandOnce(redis_->port(), args);
    EXPECT_TRUE(r.has_value()) << r.error().ToString();
    return r.has_value() ? *r : testutil::RedisReply{};
  }
  ApiResponse Queue(std::string_view op, const testutil::Form& form) {
    return ApiClient(server_.endpoint()).Queue(op, form);
  }
  int64_t StatusOf(const std::string& topic, const std::string& id) {
    ApiResponse r = Queue("getMsg", {{"topic", topic}, {"msgId", id}});
    EXPECT_EQ(r.code(), 200) << r.Describe();
    return r.code() == 200 ? r.at("delayMsg").at("status").as_int64() : -1;
  }
  std::string Key(const std::string& topic, const std::string& rest) {
    return "cq:{" + std::string(kNs) + ":" + topic + "}:" + rest;
  }

  testutil::RedisStandalone* redis_ = nullptr;
  std::string url_;
  ServerProcess server_;
};

std::string Describe(const ExitResult& r) {
  return "exit " + std::to_string(r.exit_code) + "\nstdout:\n" + r.out + "\nstderr:\n" + r.err;
}

TEST_F(RedisMigrateCommandTest, ANamespaceMigratedOfflineIsServedWithItsDeliveriesInFlight) {
  ASSERT_TRUE(StartServer().ok());
  for (const auto& [topic, id, delay] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"orders", "waiting", "600000"},
           {"orders", "first", "0"},
           {"orders", "0123456789abcdef0123456789abcdef", "0"},
           {"jobs", "j1", "0"}}) {
    ApiResponse r =
        Queue("sendMsg",
              {{"topic", topic}, {"msgId", id}, {"msg", "body " + id}, {"delayMillis", delay}});
    ASSERT_EQ(r.code(), 200) << r.Describe();
  }
  ApiResponse pulled = Queue("pullMsg", {{"topic", "orders"}, {"batch", "1"}});
  ASSERT_EQ(pulled.code(), 200) << pulled.Describe();
  ASSERT_EQ(pulled.at("delayMsgList").as_array().size(), 1u);
  EXPECT_EQ(pulled.at("delayMsgList").as_array()[0].at("msgId").as_string(), "first");
  ASSERT_EQ(server_.Stop(SIGTERM), 0);
  ASSERT_EQ(Redis({"EXISTS", Key("orders", "r:first")}).integer, 1);

  ExitResult r = Run({"--redis-url=" + url_, "--namespace=" + std::string(kNs)});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.out.find("topic 'orders': in redis-format 4, 3 messages moved"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("topic 'jobs': in redis-format 4, 1 messages moved"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("2 topics in redis-format 4, 4 messages moved; 0 not found"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(Redis({"GET", Key("orders", "lay")}).str, "4");
  EXPECT_EQ(Redis({"EXISTS", Key("orders", "r:first")}).integer, 0);
  // Again: nothing left to do.
  r = Run({"--redis-url=" + url_, "--namespace=" + std::string(kNs), "--topic=orders"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.out.find("topic 'orders': in redis-format 4, 0 messages moved"), std::string::npos)
      << r.out;

  ASSERT_TRUE(StartServer().ok());
  EXPECT_EQ(StatusOf("orders", "waiting"), 1);
  EXPECT_EQ(StatusOf("orders", "first"), 3);
  EXPECT_EQ(StatusOf("orders", "0123456789abcdef0123456789abcdef"), 2);
  EXPECT_EQ(StatusOf("jobs", "j1"), 2);
  ApiResponse ack = Queue("ackMsg", {{"topic", "orders"}, {"msgId", "first"}, {"ack", "true"}});
  ASSERT_EQ(ack.code(), 200) << ack.Describe();
  EXPECT_EQ(StatusOf("orders", "first"), 4);
  pulled = Queue("pullMsg", {{"topic", "orders"}, {"batch", "10"}});
  ASSERT_EQ(pulled.code(), 200) << pulled.Describe();
  ASSERT_EQ(pulled.at("delayMsgList").as_array().size(), 1u);
  EXPECT_EQ(pulled.at("delayMsgList").as_array()[0].at("msgId").as_string(),
            "0123456789abcdef0123456789abcdef");
  EXPECT_EQ(pulled.at("delayMsgList").as_array()[0].at("msg").as_string(),
            "body 0123456789abcdef0123456789abcdef");
}

TEST_F(RedisMigrateCommandTest, ATopicBeingMigratedAnswersCode503) {
  ASSERT_TRUE(StartServer().ok());
  ASSERT_EQ(
      Queue("sendMsg", {{"topic", "held"}, {"msgId", "h1"}, {"msg", "x"}, {"delayMillis", "0"}})
          .code(),
      200);
  Redis({"SET", Key("held", "lay"), "m"});  // as redis-migrate leaves it while it runs
  for (const auto& [op, form] : std::vector<std::pair<std::string, testutil::Form>>{
           {"sendMsg", {{"topic", "held"}, {"msgId", "h2"}, {"msg", "x"}, {"delayMillis", "0"}}},
           {"getMsg", {{"topic", "held"}, {"msgId", "h1"}}},
           {"pullMsg", {{"topic", "held"}}}}) {
    ApiResponse r = Queue(op, form);
    EXPECT_EQ(r.code(), 503) << op << " " << r.Describe();
    EXPECT_NE(r.Describe().find("topic 'held' is being migrated to redis-format 4"),
              std::string::npos)
        << r.Describe();
  }
  // Other topics are served.
  EXPECT_EQ(
      Queue("sendMsg", {{"topic", "free"}, {"msgId", "f1"}, {"msg", "x"}, {"delayMillis", "0"}})
          .code(),
      200);
  // The migration finishes it.
  ASSERT_EQ(server_.Stop(SIGTERM), 0);
  ExitResult r = Run({"--redis-url=" + url_, "--namespace=" + std::string(kNs), "--topic=held"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  ASSERT_TRUE(StartServer().ok());
  EXPECT_EQ(StatusOf("held", "h1"), 2);
}

// A running node of the namespace (subscribed to its ready channel) makes the migration refuse
// before it changes anything; a node of another namespace does not.
TEST_F(RedisMigrateCommandTest, ARunningNodeOfTheNamespaceMakesItRefuseAndChangeNothing) {
  ASSERT_TRUE(StartServer().ok());
  ASSERT_EQ(
      Queue("sendMsg", {{"topic", "busy"}, {"msgId", "b1"}, {"msg", "x"}, {"delayMillis", "0"}})
          .code(),
      200);
  ExitResult r = Run({"--redis-url=" + url_, "--namespace=" + std::string(kNs)});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_NE(r.err.find("1 running node(s) of namespace 'migrate-e2e'"), std::string::npos)
      << Describe(r);
  EXPECT_NE(r.err.find("stop every node of the namespace first; nothing was changed"),
            std::string::npos)
      << Describe(r);
  EXPECT_EQ(Redis({"EXISTS", Key("busy", "lay")}).integer, 0);
  EXPECT_EQ(Redis({"EXISTS", Key("busy", "r:b1")}).integer, 1);
  EXPECT_EQ(StatusOf("busy", "b1"), 2);  // served as before

  ServerProcess other;  // another namespace's node is no reason to refuse
  ASSERT_TRUE(other
                  .Start({"--storage=redis", "--redis-url=" + url_, "--namespace=elsewhere",
                          "--test-clock"})
                  .ok());
  ASSERT_EQ(server_.Stop(SIGTERM), 0);
  r = Run({"--redis-url=" + url_, "--namespace=" + std::string(kNs), "--topic=busy"});
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(Redis({"GET", Key("busy", "lay")}).str, "4");
}

// On a Cluster a server counts only the subscribers connected to it: every server is asked, so
// a node subscribed on any of them makes the migration refuse.
TEST(RedisMigrateClusterCommandTest, ARunningNodeOnAnyServerOfAClusterMakesItRefuse) {
  testutil::RedisCluster* cluster = testutil::SharedDeployment<testutil::RedisCluster>();
  ASSERT_NE(cluster, nullptr);
  ServerProcess node;
  ASSERT_TRUE(node.Start({"--storage=redis", "--redis-url=" + cluster->url(),
                          "--namespace=migrate-cluster", "--test-clock"})
                  .ok());
  ASSERT_EQ(
      ApiClient(node.endpoint())
          .Queue("sendMsg", {{"topic", "t"}, {"msgId", "c1"}, {"msg", "x"}, {"delayMillis", "0"}})
          .code(),
      200);
  const std::vector<std::string> args = {"redis-migrate", "--redis-url=" + cluster->url(),
                                         "--namespace=migrate-cluster"};
  ExitResult r = RunBinary(args, std::chrono::seconds(60));
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_NE(r.err.find("1 running node(s) of namespace 'migrate-cluster'"), std::string::npos)
      << Describe(r);
  Result<testutil::RedisReply> lay = cluster->Command({"EXISTS", "cq:{migrate-cluster:t}:lay"});
  ASSERT_TRUE(lay.has_value());
  EXPECT_EQ(lay->integer, 0);
  ASSERT_EQ(node.Stop(SIGTERM), 0);
  r = RunBinary(args, std::chrono::seconds(60));
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  lay = cluster->Command({"GET", "cq:{migrate-cluster:t}:lay"});
  ASSERT_TRUE(lay.has_value());
  EXPECT_EQ(lay->str, "4");
}

TEST_F(RedisMigrateCommandTest, BadOptionsAreRefusedWithWhatIsWrong) {
  struct Case {
    std::vector<std::string> args;
    int exit_code;
    std::string says;
  };
  const std::string ns = "--namespace=" + std::string(kNs);
  for (const Case& c : std::vector<Case>{
           {{"--redis-url=" + url_}, 2, "--namespace"},
           {{ns}, 2, "--redis-url"},
           {{"--redis-url=http://127.0.0.1:1", ns}, 2, "--redis-url: "},
           {{"--redis-url=" + url_, ns, "--batch=0"}, 2, "--batch: "},
           {{"--redis-url=" + url_, ns, "--batch=many"}, 2, "--batch: "},
           {{"--redis-url=" + url_, "--namespace="}, 2, "--namespace is empty"},
           {{"--redis-url=" + url_, ns, "--topic="}, 2, "--topic is empty"},
           {{"--redis-url=" + url_, ns, "--topics=x"}, 2, "--topics"},
           {{"--redis-url=redis://127.0.0.1:1", ns}, 3, "127.0.0.1:1"},
           {{"--redis-url=" + url_, ns, "--topic=no-such"},
            1,
            "topic 'no-such': no such topic in namespace"},
       }) {
    ExitResult r = Run(c.args);
    EXPECT_EQ(r.exit_code, c.exit_code) << Describe(r);
    EXPECT_NE(r.err.find(c.says), std::string::npos) << Describe(r);
  }
  EXPECT_EQ(Redis({"EXISTS", Key("no-such", "lay")}).integer, 0);
}

}  // namespace
}  // namespace chronoq::data_test
