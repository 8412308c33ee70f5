// Success shapes of every endpoint over HTTP (API.md sections 2-4): exact field names, JSON
// types, Content-Type, never an empty 200 body; health endpoints.
#include <regex>

#include "tests/integration/it_util.h"

namespace chronoq::it {
namespace {

class EndpointsTest : public ServerTest {};

TEST_F(EndpointsTest, SendMsgAnswersTheFullMessage) {
  std::string topic = Topic();
  int64_t now = Now();
  ApiResponse r =
      Send(topic, "hello", 5000, {{"msgId", "id-1"}, {"ttlMillis", "20000"}, {"maxRetry", "3"}});
  ExpectAppCode(r, 200);
  EXPECT_EQ(Keys(r.json), (std::vector<std::string>{"code", "msg", "delayMsg"}));
  const json::value& m = r.at("delayMsg");
  ExpectMessageShape(m);
  const json::object& o = m.as_object();
  EXPECT_EQ(Str(o.at("topic")), topic);
  EXPECT_EQ(Str(o.at("msgId")), "id-1");
  EXPECT_EQ(Str(o.at("msg")), "hello");
  EXPECT_EQ(Int(o.at("produceTime")), now);
  EXPECT_EQ(Int(o.at("triggerTime")), now + 5000);
  EXPECT_EQ(Int(o.at("expireTime")), now + 5000 + 20000);
  EXPECT_EQ(Int(o.at("maxRetry")), 3);
  EXPECT_EQ(Int(o.at("retry")), 0);
  EXPECT_EQ(Int(o.at("status")), 1);
}

TEST_F(EndpointsTest, SendMsgAppliesServerDefaults) {
  std::string topic = Topic();
  int64_t now = Now();
  json::object m = SendOk(topic, "x", 0);
  EXPECT_EQ(Int(m["triggerTime"]), now);
  EXPECT_EQ(Int(m["expireTime"]), now + 3'600'000);  // ttl-millis
  EXPECT_EQ(Int(m["maxRetry"]), 10);                 // max-retry
  EXPECT_EQ(Int(m["status"]), 2);
  // ttlMillis <= 0 and maxRetry < 0 take the defaults too; maxRetry 0 is valid.
  m = SendOk(topic, "y", 0, {{"ttlMillis", "0"}, {"maxRetry", "-1"}});
  EXPECT_EQ(Int(m["expireTime"]), now + 3'600'000);
  EXPECT_EQ(Int(m["maxRetry"]), 10);
  m = SendOk(topic, "z", 0, {{"ttlMillis", "-5"}, {"maxRetry", "0"}});
  EXPECT_EQ(Int(m["expireTime"]), now + 3'600'000);
  EXPECT_EQ(Int(m["maxRetry"]), 0);
  // Empty optional values count as absent.
  m = SendOk(topic, "w", 0, {{"ttlMillis", ""}, {"maxRetry", ""}});
  EXPECT_EQ(Int(m["expireTime"]), now + 3'600'000);
  EXPECT_EQ(Int(m["maxRetry"]), 10);
}

TEST_F(EndpointsTest, GeneratedMsgIdsAre32LowercaseHex) {
  std::string topic = Topic();
  std::regex hex32("^[0-9a-f]{32}$");
  std::string a = MsgId(SendOk(topic, "a", 0));
  std::string b = MsgId(SendOk(topic, "b", 0, {{"msgId", ""}}));  // empty -> generated
  EXPECT_TRUE(std::regex_match(a, hex32)) << a;
  EXPECT_TRUE(std::regex_match(b, hex32)) << b;
  EXPECT_NE(a, b);
}

TEST_F(EndpointsTest, NegativeDelayMeansNow) {
  std::string topic = Topic();
  int64_t now = Now();
  json::object m = SendOk(topic, "x", -100000);
  EXPECT_EQ(Int(m["produceTime"]), now);
  EXPECT_EQ(Int(m["triggerTime"]), now);
  EXPECT_EQ(Int(m["status"]), 2);
  m = SendOk(topic, "y", INT64_MIN);
  EXPECT_EQ(Int(m["triggerTime"]), now);
}

TEST_F(EndpointsTest, PullMsgAnswersAListOfMessages) {
  std::string topic = Topic();
  SendOk(topic, "a", 0, {{"msgId", "a"}});
  int64_t now = Now();
  ApiResponse r = Pull(topic, 5, 7000);
  ExpectAppCode(r, 200);
  EXPECT_EQ(Keys(r.json), (std::vector<std::string>{"code", "msg", "delayMsgList"}));
  ASSERT_TRUE(r.at("delayMsgList").is_array()) << r.Describe();
  const json::array& l = r.at("delayMsgList").as_array();
  ASSERT_EQ(l.size(), 1u);
  ExpectMessageShape(l[0]);
  EXPECT_EQ(Str(l[0].at("msgId")), "a");
  EXPECT_EQ(Int(l[0].at("status")), 3);
  EXPECT_EQ(Int(l[0].at("retry")), 1);
  EXPECT_EQ(Int(l[0].at("triggerTime")), now);
}

TEST_F(EndpointsTest, PullOfUnknownOrEmptyTopicIsAnEmptyList) {
  ApiResponse r = Pull(Topic("never-sent"));
  ExpectAppCode(r, 200);
  ASSERT_TRUE(r.at("delayMsgList").is_array()) << r.Describe();
  EXPECT_TRUE(r.at("delayMsgList").as_array().empty());
  EXPECT_EQ(r.http.body, R"({"code":200,"msg":"success","delayMsgList":[]})");
}

TEST_F(EndpointsTest, LongPollingMsgWithAReadyMessageAnswersAtOnce) {
  std::string topic = Topic();
  SendOk(topic, "a", 0, {{"msgId", "a"}});
  ApiResponse r =
      api().Queue("longPollingMsg", {{"topic", topic}, {"longPollingTimeoutMillis", "60000"}});
  ExpectAppCode(r, 200);
  EXPECT_EQ(Keys(r.json), (std::vector<std::string>{"code", "msg", "delayMsgList"}));
  ASSERT_TRUE(r.at("delayMsgList").is_array());
  ASSERT_EQ(r.at("delayMsgList").as_array().size(), 1u);
  ExpectMessageShape(r.at("delayMsgList").as_array()[0]);
}

TEST_F(EndpointsTest, AckDeleteAnswerCodeAndMsgOnly) {
  std::string topic = Topic();
  SendOk(topic, "a", 0, {{"msgId", "a"}});
  SendOk(topic, "b", 0, {{"msgId", "b"}});
  ASSERT_EQ(PullOk(topic, 2).size(), 2u);
  ApiResponse r = Ack(topic, "a");
  ExpectAppCode(r, 200);
  EXPECT_EQ(r.http.body, R"({"code":200,"msg":"success"})");
  r = Delete(topic, "b");
  ExpectAppCode(r, 200);
  EXPECT_EQ(r.http.body, R"({"code":200,"msg":"success"})");
}

TEST_F(EndpointsTest, GetMsgAnswersTheMessage) {
  std::string topic = Topic();
  json::object sent = SendOk(topic, "payload", 1000, {{"msgId", "g"}});
  ApiResponse r = GetMsg(topic, "g");
  ExpectAppCode(r, 200);
  EXPECT_EQ(Keys(r.json), (std::vector<std::string>{"code", "msg", "delayMsg"}));
  ExpectMessageShape(r.at("delayMsg"));
  EXPECT_EQ(r.at("delayMsg").as_object(), sent);
}

TEST_F(EndpointsTest, GetTopicInfoShape) {
  std::string topic = Topic();
  SendOk(topic, "a", 1000);
  ApiResponse r = api().Monitor("getTopicInfo", {{"topic", topic}});
  ExpectAppCode(r, 200);
  EXPECT_EQ(Keys(r.json), (std::vector<std::string>{"code", "msg", "data"}));
  const json::value& d = r.at("data");
  EXPECT_EQ(Keys(d), (std::vector<std::string>{"topic", "waitingQueueSize", "waitingQueueInfo",
                                               "readyQueueSize", "ackQueueSize"}));
  EXPECT_EQ(Keys(d.at("waitingQueueInfo")), BucketNames());
  EXPECT_EQ(Str(d.at("topic")), topic);
  EXPECT_EQ(Int(d.at("waitingQueueSize")), 1);
  EXPECT_EQ(Int(d.at("waitingQueueInfo").at("sizeOf0To1min")), 1);
}

TEST_F(EndpointsTest, GetTopicInfoOfUnknownTopicIsAllZero) {
  std::string topic = Topic("unknown");
  json::object d = TopicInfo(topic);
  EXPECT_EQ(Str(d["topic"]), topic);
  EXPECT_EQ(Int(d["waitingQueueSize"]), 0);
  EXPECT_EQ(Int(d["readyQueueSize"]), 0);
  EXPECT_EQ(Int(d["ackQueueSize"]), 0);
  ASSERT_TRUE(d["waitingQueueInfo"].is_object());
  for (const auto& b : BucketNames()) EXPECT_EQ(Int(d["waitingQueueInfo"].at(b)), 0) << b;
}

TEST_F(EndpointsTest, GetTopicInfoListShape) {
  std::string topic = Topic();
  SendOk(topic, "a", 0);
  ApiResponse r = api().Monitor("getTopicInfoList");
  ExpectAppCode(r, 200);
  EXPECT_EQ(Keys(r.json), (std::vector<std::string>{"code", "msg", "data"}));
  ASSERT_TRUE(r.at("data").is_array()) << r.Describe();
  bool found = false;
  for (const auto& t : r.at("data").as_array()) {
    EXPECT_EQ(Keys(t), (std::vector<std::string>{"topic", "waitingQueueSize", "waitingQueueInfo",
                                                 "readyQueueSize", "ackQueueSize"}));
    if (Str(t.at("topic")) == topic) {
      found = true;
      EXPECT_EQ(Int(t.at("readyQueueSize")), 1);
    }
  }
  EXPECT_TRUE(found) << r.Describe();
}

TEST_F(EndpointsTest, GetMonitorDataShape) {
  ApiResponse r = api().Monitor("getMonitorData");
  ExpectAppCode(r, 200);
  EXPECT_EQ(Keys(r.json), (std::vector<std::string>{"code", "msg", "data"}));
  EXPECT_EQ(Keys(r.at("data")),
            (std::vector<std::string>{"requestStatsList", "pullMsgTimeGapStatsList",
                                      "readyQueueTimeGapStatsList"}));
  for (const auto& k : Keys(r.at("data"))) EXPECT_TRUE(r.at("data").at(k).is_array()) << k;
}

TEST_F(EndpointsTest, MonitorEndpointsIgnoreABody) {
  // GET with an unexpected body still works (the topic may come from either place).
  ApiResponse r =
      api().Request("GET", std::string(testutil::kQueuePath) + "getTopicInfoList", "x=1");
  ExpectAppCode(r, 200);
}

TEST_F(EndpointsTest, HealthCheckAnswersForAnyMethod) {
  for (const char* method : {"GET", "POST", "PUT", "DELETE"}) {
    ApiResponse r = api().Request(method, "/camellia/health/check");
    EXPECT_EQ(r.status, 200) << method;
    EXPECT_EQ(r.http.body, R"({"code":200})") << method;
    EXPECT_EQ(r.header("Content-Type"), "application/json");
  }
}

TEST_F(EndpointsTest, HealthStatusFollowsOnlineAndOffline) {
  ApiResponse r = api().Get("/camellia/health/status");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.http.body, R"({"code":200})");

  r = api().Get("/camellia/health/offline");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.http.body, R"({"code":200})");
  r = api().Get("/camellia/health/status");
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(r.http.body, R"({"code":500})");
  EXPECT_EQ(r.header("Content-Type"), "application/json");
  r = api().Get("/camellia/health/check");  // check stays 200
  EXPECT_EQ(r.status, 200);

  // Offline only changes what status answers: serving continues.
  std::string topic = Topic();
  ExpectAppCode(Send(topic, "still served", 0), 200);
  EXPECT_EQ(PullOk(topic).size(), 1u);

  r = api().Request("POST", "/camellia/health/online");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.http.body, R"({"code":200})");
  r = api().Get("/camellia/health/status");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.http.body, R"({"code":200})");
}

TEST_F(EndpointsTest, EveryAnswerIsNonEmptyJson) {
  std::string topic = Topic();
  std::vector<ApiResponse> answers;
  answers.push_back(Send(topic, "m", 0, {{"msgId", "e"}}));
  answers.push_back(Send(topic, "", 0));
  answers.push_back(Pull(topic));
  answers.push_back(Pull(""));
  answers.push_back(api().Queue("longPollingMsg", {{"topic", ""}}));
  answers.push_back(Ack(topic, "e"));
  answers.push_back(Ack(topic, "nope"));
  answers.push_back(Delete(topic, "nope"));
  answers.push_back(GetMsg(topic, "nope"));
  answers.push_back(GetMsg(topic, "e"));
  answers.push_back(api().Monitor("getTopicInfo", {{"topic", ""}}));
  for (const ApiResponse& r : answers) {
    EXPECT_EQ(r.status, 200) << r.Describe();
    ExpectJsonAnswer(r);
    EXPECT_NE(r.code(), -1) << r.Describe();
  }
}

}  // namespace
}  // namespace chronoq::it
