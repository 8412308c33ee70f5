// Topic configuration, capacity, pause, retry interval, dead letters, redrive and purge
// (API-EXTENSIONS.md section 4, docs/topic-config.md) over real connections, on every storage (and
// two nodes on one Redis, where a change made through one node must hold on the other at once:
// requests alternate between them). Time moves only through the test clock. Capacity under
// concurrent senders: capacity_test.cc.
#include <fmt/format.h>

#include <fstream>

#include "tests/integration/auth_util.h"
#include "tests/integration/it_util.h"
#include "tests/testutil/temp_dir.h"

namespace chronoq::it {
namespace {

class TopicConfigTest : public ServerTest {
 protected:
  ApiResponse SetConfig(const Form& f) { return api().Queue("setTopicConfig", f); }
  // getTopicConfig's topicConfig (an empty object on failure).
  json::object Config(const std::string& topic) {
    ApiResponse r = api().Monitor("getTopicConfig", {{"topic", topic}});
    EXPECT_EQ(r.code(), 200) << r.Describe();
    const json::value& c = r.at("topicConfig");
    return c.is_object() ? c.as_object() : json::object();
  }
  static std::string SourceOf(const json::object& c, const char* field) {
    return Str(c.at("sources").as_object().at(field));
  }
  int64_t InLife(const std::string& topic) {
    json::object i = TopicInfo(topic);
    return Int(i["waitingQueueSize"]) + Int(i["readyQueueSize"]) + Int(i["ackQueueSize"]);
  }
  // The value of one sample of GET /metrics ("name{labels}"), or -1 when absent.
  int64_t Metric(const std::string& series) {
    ApiResponse r = api().Get("/metrics");
    const std::string& text = r.http.body;
    size_t at = text.find("\n" + series + " ");
    if (at == std::string::npos) return -1;
    return std::stoll(text.substr(at + series.size() + 2));
  }
};

TEST_F(TopicConfigTest, SetGetDeleteAndTheLayerOfEachValue) {
  const std::string t = Topic();
  json::object c = Config(t);
  EXPECT_EQ(Int(c.at("capacity")), 0);
  EXPECT_EQ(Str(c.at("deadLetterTopic")), "");
  EXPECT_FALSE(c.at("paused").as_bool());
  EXPECT_EQ(SourceOf(c, "capacity"), "server");
  ApiResponse set = SetConfig({{"topic", t},
                               {"capacity", "10"},
                               {"ttlMillis", "5000"},
                               {"maxRetry", "2"},
                               {"ackTimeoutMillis", "700"},
                               {"retryIntervalMillis", "250"},
                               {"deadLetterTopic", t + ".dlq"}});
  ASSERT_EQ(set.code(), 200) << set.Describe();
  c = Config(t);  // through the other node on redis2
  EXPECT_EQ(Int(c.at("capacity")), 10);
  EXPECT_EQ(Int(c.at("ttlMillis")), 5000);
  EXPECT_EQ(Int(c.at("maxRetry")), 2);
  EXPECT_EQ(Int(c.at("ackTimeoutMillis")), 700);
  EXPECT_EQ(Int(c.at("retryIntervalMillis")), 250);
  EXPECT_EQ(Str(c.at("deadLetterTopic")), t + ".dlq");
  EXPECT_EQ(SourceOf(c, "capacity"), "topic");
  EXPECT_EQ(SourceOf(c, "paused"), "server");
  // The topic's defaults apply to a send that gives none.
  json::object m = SendOk(t, "m", 0, {{"msgId", "a"}});
  EXPECT_EQ(Int(m.at("maxRetry")), 2);
  EXPECT_EQ(Int(m.at("expireTime")) - Int(m.at("triggerTime")), 5000);
  // Durable (memory storage keeps nothing across a restart by design).
  if (testutil::StorageUnderTest() != "memory") {
    ASSERT_TRUE(RestartServer().ok());
    EXPECT_EQ(Int(Config(t).at("capacity")), 10);
  }
  ASSERT_EQ(api().Queue("deleteTopicConfig", {{"topic", t}}).code(), 200);
  c = Config(t);
  EXPECT_EQ(Int(c.at("capacity")), 0);
  EXPECT_EQ(SourceOf(c, "capacity"), "server");
}

TEST_F(TopicConfigTest, AFullTopicAnswers429AndAnEndFreesRoomAtOnce) {
  const std::string t = Topic();
  ASSERT_EQ(SetConfig({{"topic", t}, {"capacity", "2"}}).code(), 200);
  SendOk(t, "m", 0, {{"msgId", "a"}});
  SendOk(t, "m", 0, {{"msgId", "b"}});
  ApiResponse full = Send(t, "m", 0, {{"msgId", "c"}});
  EXPECT_EQ(full.code(), 429) << full.Describe();
  EXPECT_EQ(full.msg(), "topic '" + t + "' is full: 2 messages in life, capacity 2");
  EXPECT_EQ(StatusOf(t, "c"), 0);
  // An idempotent re-send of a message in life is answered, never refused.
  EXPECT_EQ(Send(t, "m", 0, {{"msgId", "a"}}).code(), 200);
  ASSERT_EQ(Delete(t, "a").code(), 200);
  EXPECT_EQ(Send(t, "m", 0, {{"msgId", "c"}}).code(), 200);
  // A batch stores items in order until the topic is full; the rest answer 429 each (b and c are
  // in life: d and e fit, f does not).
  ASSERT_EQ(SetConfig({{"topic", t}, {"capacity", "4"}}).code(), 200);
  ApiResponse batch = api().PostJson(
      std::string(testutil::kQueuePath) + "sendMsgBatch",
      R"({"topic":")" + t +
          R"(","msgs":[{"msgId":"d","msg":"x","delayMillis":0},{"msgId":"e","msg":"x","delayMillis":0},)"
          R"({"msgId":"f","msg":"x","delayMillis":0}]})");
  ASSERT_EQ(batch.code(), 200) << batch.Describe();
  const json::array& results = batch.at("results").as_array();
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(Int(results[0].as_object().at("code")), 200);
  EXPECT_EQ(Int(results[1].as_object().at("code")), 200);
  EXPECT_EQ(Int(results[2].as_object().at("code")), 429);
  EXPECT_EQ(InLife(t), 4);
  // Counted by the node that answered (with two nodes, each counts its own).
  if (testutil::StorageUnderTest() != "redis2") {
    EXPECT_EQ(Metric("cq_queue_capacity_refusals_total{topic=\"" + t + "\"}"), 2);
  }
}

TEST_F(TopicConfigTest, APausedTopicStoresSendsButDeliversNothingUntilResumed) {
  const std::string t = Topic();
  ASSERT_EQ(api().Queue("pauseTopic", {{"topic", t}}).code(), 200);
  SendOk(t, "m", 0, {{"msgId", "a"}});
  EXPECT_TRUE(PullOk(t, 10).empty());
  auto parked = NewClient();
  ASSERT_TRUE(
      parked->BeginQueue("longPollingMsg", {{"topic", t}, {"longPollingTimeoutMillis", "60000"}})
          .ok());
  ASSERT_TRUE(api().WaitParked(1));
  ASSERT_EQ(api().Queue("resumeTopic", {{"topic", t}}).code(), 200);
  ApiResponse woke = parked->Finish();
  ASSERT_EQ(woke.code(), 200) << woke.Describe();
  ASSERT_EQ(woke.at("delayMsgList").as_array().size(), 1u) << woke.Describe();
  EXPECT_FALSE(Config(t).at("paused").as_bool());
}

TEST_F(TopicConfigTest, ARetryIntervalDelaysRedeliveryAfterANack) {
  const std::string t = Topic();
  ASSERT_EQ(SetConfig({{"topic", t}, {"retryIntervalMillis", "5000"}}).code(), 200);
  SendOk(t, "m", 0, {{"msgId", "a"}});
  ASSERT_EQ(PullOk(t, 1, 60'000).size(), 1u);
  ASSERT_EQ(Ack(t, "a", false).code(), 200);
  EXPECT_EQ(StatusOf(t, "a"), 1);
  EXPECT_TRUE(PullOk(t, 1).empty());
  Advance(4'999);
  EXPECT_TRUE(PullOk(t, 1).empty());
  Advance(1);
  EXPECT_EQ(PullOk(t, 1).size(), 1u);
}

TEST_F(TopicConfigTest, ExhaustedAndExpiredMessagesBecomeDeadLettersAndRedriveOnce) {
  const std::string t = Topic();
  const std::string dlq = Topic("dlq");
  ASSERT_EQ(SetConfig({{"topic", t}, {"maxRetry", "0"}, {"deadLetterTopic", dlq}}).code(), 200);
  SendOk(t, "one", 0, {{"msgId", "a"}});
  SendOk(t, "two", 0, {{"msgId", "b"}, {"ttlMillis", "1000"}});
  ASSERT_EQ(PullOk(t, 1, 60'000).size(), 1u);  // a
  ASSERT_EQ(Ack(t, "a", false).code(), 200);   // its last delivery: RETRY_EXHAUST
  EXPECT_EQ(StatusOf(t, "a"), 6);
  json::object dead = GetOk(dlq, "a");
  EXPECT_EQ(Int(dead.at("status")), 2);
  EXPECT_EQ(Str(dead.at("msg")), "one");
  const json::object& origin = dead.at("deadLetter").as_object();
  EXPECT_EQ(Str(origin.at("topic")), t);
  EXPECT_EQ(Int(origin.at("status")), 6);
  EXPECT_EQ(Int(origin.at("retry")), 1);
  Advance(1'001);  // b expires
  EXPECT_EQ(StatusOf(t, "b"), 5);
  EXPECT_EQ(Int(GetOk(dlq, "b").at("deadLetter").as_object().at("status")), 5);
  if (testutil::StorageUnderTest() != "redis2") {  // with two nodes, each counts what it saw
    EXPECT_EQ(Metric("cq_queue_dead_letters_total{topic=\"" + t + "\"}"), 2);
  }
  // Redrive: back to the source as new messages (retry 0), gone from the dead-letter topic.
  ApiResponse r = api().Queue("redriveMsg", {{"topic", dlq}, {"msgId", "a"}});
  ASSERT_EQ(r.code(), 200) << r.Describe();
  EXPECT_EQ(Int(r.at("redriven")), 1);
  json::object back = GetOk(t, "a");
  EXPECT_EQ(Int(back.at("status")), 2);
  EXPECT_EQ(Int(back.at("retry")), 0);
  EXPECT_FALSE(back.contains("deadLetter"));
  EXPECT_EQ(Int(api().Queue("redriveMsg", {{"topic", dlq}}).at("redriven")), 1);  // b
  EXPECT_EQ(Int(api().Queue("redriveMsg", {{"topic", dlq}}).at("redriven")), 0);
}

TEST_F(TopicConfigTest, ATopicCannotBeItsOwnDeadLetterTopicButChainsWork) {
  const std::string t = Topic();
  const std::string dlq = Topic("dlq");
  const std::string last = Topic("last");
  ApiResponse self = SetConfig({{"topic", t}, {"deadLetterTopic", t}});
  EXPECT_EQ(self.code(), 400) << self.Describe();
  ASSERT_EQ(SetConfig({{"topic", t}, {"maxRetry", "0"}, {"deadLetterTopic", dlq}}).code(), 200);
  ASSERT_EQ(SetConfig({{"topic", dlq}, {"maxRetry", "0"}, {"deadLetterTopic", last}}).code(), 200);
  SendOk(t, "m", 0, {{"msgId", "a"}});
  ASSERT_EQ(PullOk(t, 1, 60'000).size(), 1u);
  ASSERT_EQ(Ack(t, "a", false).code(), 200);
  ASSERT_EQ(PullOk(dlq, 1, 60'000).size(), 1u);
  ASSERT_EQ(Ack(dlq, "a", false).code(), 200);
  json::object end = GetOk(last, "a");
  EXPECT_EQ(Str(end.at("deadLetter").as_object().at("topic")), dlq);
}

TEST_F(TopicConfigTest, PurgeDeletesTheTopicsMessagesInLife) {
  const std::string t = Topic();
  const std::string other = Topic("other");
  for (int i = 0; i < 5; ++i) SendOk(t, "m", 0, {{"msgId", fmt::format("r{}", i)}});
  for (int i = 0; i < 3; ++i) SendOk(t, "m", 60'000, {{"msgId", fmt::format("w{}", i)}});
  SendOk(other, "m", 0, {{"msgId", "x"}});
  ApiResponse waiting = api().Queue("purgeTopic", {{"topic", t}, {"status", "1"}});
  ASSERT_EQ(waiting.code(), 200) << waiting.Describe();
  EXPECT_EQ(Int(waiting.at("purged")), 3);
  EXPECT_EQ(StatusOf(t, "w0"), 7);  // DELETE, as deleteMsg leaves it
  EXPECT_EQ(Int(api().Queue("purgeTopic", {{"topic", t}}).at("purged")), 5);
  EXPECT_EQ(InLife(t), 0);
  EXPECT_EQ(StatusOf(other, "x"), 2);
}

TEST_F(TopicConfigTest, GetTopicConfigShowsWhatTheApiStoredOverTheFile) {
  // A server of its own, with a [topics.<name>] table in its config file.
  testutil::TempDir dir;
  const std::string file = dir.path() + "/chronoq.toml";
  std::ofstream(file) << "[topics.filed]\ncapacity = 50\nttl-millis = 9000\n";
  ServerProcess s;
  ASSERT_TRUE(
      s.Start({"--test-clock", "--log-level=warn", "--storage=memory", "--config=" + file}).ok());
  ApiClient c(s.endpoint());
  ApiResponse r = c.Monitor("getTopicConfig", {{"topic", "filed"}});
  ASSERT_EQ(r.code(), 200) << r.Describe();
  const json::object& cfg = r.at("topicConfig").as_object();
  EXPECT_EQ(Int(cfg.at("capacity")), 50);
  EXPECT_EQ(Str(cfg.at("sources").as_object().at("ttlMillis")), "file");
  ASSERT_EQ(c.Queue("setTopicConfig", {{"topic", "filed"}, {"capacity", "7"}}).code(), 200);
  r = c.Monitor("getTopicConfig", {{"topic", "filed"}});
  EXPECT_EQ(Int(r.at("topicConfig").as_object().at("capacity")), 7);
  EXPECT_EQ(Str(r.at("topicConfig").as_object().at("sources").as_object().at("capacity")), "topic");
}

// A namespace's topics have config-file tables of their own ([namespaces.<ns>.topics.<name>]):
// they apply to that namespace's topic only, and their dead-letter topic is in that namespace.
TEST(TopicConfigFileTest, ANamespacedTableAppliesToThatNamespacesTopicOnly) {
  testutil::TempDir dir;
  const std::string file = dir.path() + "/chronoq.toml";
  std::ofstream(file) << "[namespaces.shop.topics.filed]\ncapacity = 50\nmax-retry = 0\n"
                         "dead-letter-topic = \"filed-dlq\"\n";
  ServerProcess s;
  ASSERT_TRUE(s.Start({"--log-level=warn", "--storage=memory", "--config=" + file,
                       "--auth-tokens-file=" + TokensPath()})
                  .ok());
  ApiClient shop(s.endpoint());
  shop.set_token(kShopAdmin);
  ApiResponse r = shop.Monitor("getTopicConfig", {{"topic", "filed"}});
  ASSERT_EQ(r.code(), 200) << r.Describe();
  const json::object& cfg = r.at("topicConfig").as_object();
  EXPECT_EQ(Int(cfg.at("capacity")), 50);
  EXPECT_EQ(Str(cfg.at("deadLetterTopic")), "filed-dlq");  // the client's name
  EXPECT_EQ(Str(cfg.at("sources").as_object().at("capacity")), "file");
  for (const std::string& other : {kBankAdmin, kRoot}) {
    ApiClient c(s.endpoint());
    c.set_token(other);
    r = c.Monitor("getTopicConfig", {{"topic", "filed"}});
    ASSERT_EQ(r.code(), 200) << r.Describe();
    EXPECT_EQ(Str(r.at("topicConfig").as_object().at("sources").as_object().at("capacity")),
              "server");
  }
  // One delivery, nacked: a dead letter in shop's filed-dlq.
  ASSERT_EQ(shop.Queue("sendMsg",
                       {{"topic", "filed"}, {"msgId", "m"}, {"msg", "x"}, {"delayMillis", "0"}})
                .code(),
            200);
  r = shop.Queue("pullMsg", {{"topic", "filed"}});
  ASSERT_EQ(r.code(), 200) << r.Describe();
  ASSERT_EQ(shop.Queue("ackMsg", {{"topic", "filed"}, {"msgId", "m"}, {"ack", "false"}}).code(),
            200);
  r = shop.Queue("getMsg", {{"topic", "filed-dlq"}, {"msgId", "m"}});
  ASSERT_EQ(r.code(), 200) << r.Describe();
  EXPECT_EQ(Int(r.at("delayMsg").at("status")), 2);  // READY
}

TEST(TopicConfigFileTest, ABadTableRefusesTheStartAndPrintConfigShowsTheTables) {
  testutil::TempDir dir;
  const std::string bad = dir.path() + "/bad.toml";
  std::ofstream(bad) << "[topics.orders]\ncapacity = -1\n";
  testutil::ExitResult r = testutil::RunBinary({"serve", "--config=" + bad});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("[topics.orders] capacity must be at least 0, got -1"), std::string::npos)
      << r.err;
  const std::string good = dir.path() + "/good.toml";
  std::ofstream(good) << "[topics.orders]\ncapacity = 5\ndead-letter-topic = \"orders-dlq\"\n";
  r = testutil::RunBinary({"serve", "--config=" + good, "--print-config"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\n[topics.orders]\ncapacity = 5\ndead-letter-topic = \"orders-dlq\"\n"),
            std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace chronoq::it
