// The message-level extensions of API-EXTENSIONS.md sections 1-3 over real connections, on every
// storage (and two nodes on one Redis): priority order, absolute trigger times, sendMsgBatch and
// ackMsgBatch, updateMsg ("trigger now"), touchMsg, count triggers waking parked long polls,
// listMsg walks, and what a restart keeps. Time moves only through the test clock.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "tests/integration/it_util.h"

namespace chronoq::it {
namespace {

class ExtensionsTest : public ServerTest {
 protected:
  ApiResponse Batch(const std::string& op, const std::string& body) {
    return api().PostJson(std::string(testutil::kQueuePath) + op, body);
  }
  // Starts a long poll on a connection of its own and waits until the server has parked it.
  std::unique_ptr<ApiClient> Park(const std::string& topic) {
    auto c = NewClient();
    EXPECT_TRUE(
        c->BeginQueue("longPollingMsg", {{"topic", topic}, {"longPollingTimeoutMillis", "60000"}})
            .ok());
    EXPECT_TRUE(api().WaitParked(1)) << "parked: " << api().ParkedLongPolls();
    return c;
  }
  static std::string IdOf(const json::value& m) { return Str(m.at("msgId")); }
  static int64_t PriorityOf(const json::value& m) {
    const json::value* p = m.as_object().if_contains("priority");
    return p == nullptr ? 0 : Int(*p);
  }
};

TEST_F(ExtensionsTest, PullsDeliverHigherPrioritiesFirstThenSendOrder) {
  const std::string t = Topic();
  // 40 messages, priorities spread out of order, all consumable now, in one batch.
  std::string msgs;
  for (int i = 0; i < 40; ++i) {
    msgs += fmt::format(R"({}{{"msgId":"m{}","msg":"x","delayMillis":0,"priority":{}}})",
                        i == 0 ? "" : ",", i, (i * 7) % 10);
  }
  ApiResponse sent = Batch("sendMsgBatch", R"({"topic":")" + t + R"(","msgs":[)" + msgs + "]}");
  ASSERT_EQ(sent.code(), 200) << sent.Describe();
  ASSERT_EQ(sent.at("results").as_array().size(), 40u);
  std::vector<std::pair<int64_t, int>> seen;  // (priority, send index)
  for (int round = 0; round < 8; ++round) {
    for (const json::object& m : PullOk(t, 5, 60'000)) {
      seen.emplace_back(PriorityOf(m), std::stoi(IdOf(m).substr(1)));
    }
  }
  ASSERT_EQ(seen.size(), 40u);
  std::vector<std::pair<int64_t, int>> want = seen;
  std::sort(want.begin(), want.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  EXPECT_EQ(seen, want);
}

TEST_F(ExtensionsTest, ATimedOutHighPriorityDeliveryComesBeforeOlderLowPriorityOnes) {
  const std::string t = Topic();
  SendOk(t, "low", 0, {{"msgId", "low"}});
  SendOk(t, "high", 0, {{"msgId", "high"}, {"priority", "8"}});
  ASSERT_EQ(IdOf(PullOk(t, 1, 1'000).at(0)), "high");
  Advance(1'000);  // its ack deadline passes: consumable again, still priority 8
  std::vector<json::object> next = PullOk(t, 2, 60'000);
  ASSERT_EQ(next.size(), 2u);
  EXPECT_EQ(IdOf(next[0]), "high");
  EXPECT_EQ(Int(next[0].at("retry")), 2);
  EXPECT_EQ(IdOf(next[1]), "low");
}

TEST_F(ExtensionsTest, AnAbsoluteTriggerTimeIsKeptExactly) {
  const std::string t = Topic();
  const int64_t at = Now() + 5'000;
  ApiResponse r = api().Queue(
      "sendMsg", {{"topic", t}, {"msgId", "a"}, {"msg", "x"}, {"triggerTime", std::to_string(at)}});
  ASSERT_EQ(r.code(), 200) << r.Describe();
  EXPECT_EQ(Int(r.at("delayMsg").at("triggerTime")), at);
  EXPECT_EQ(Int(r.at("delayMsg").at("status")), 1);
  Advance(4'999);
  EXPECT_EQ(StatusOf(t, "a"), 1);
  Advance(1);
  EXPECT_EQ(StatusOf(t, "a"), 2);
}

TEST_F(ExtensionsTest, BatchesSendAndAckTogetherWithPerItemAnswers) {
  const std::string t = Topic();
  SendOk(t, "old", 60'000, {{"msgId", "old"}});
  ApiResponse sent = Batch("sendMsgBatch", R"({"topic":")" + t +
                                               R"(","msgs":[)"
                                               R"({"msgId":"a","msg":"1","delayMillis":0},)"
                                               R"({"msgId":"b","msg":"2","priority":12},)"
                                               R"({"msgId":"old","msg":"3","delayMillis":0},)"
                                               R"({"msgId":"c","msg":"4","delayMillis":0}]})");
  ASSERT_EQ(sent.code(), 200) << sent.Describe();
  const json::array& results = sent.at("results").as_array();
  ASSERT_EQ(results.size(), 4u);
  EXPECT_EQ(Int(results[0].at("code")), 200);
  EXPECT_EQ(Int(results[1].at("code")), 400);
  EXPECT_EQ(Str(results[1].at("msg")).rfind("msgs[1]: ", 0), 0u) << Str(results[1].at("msg"));
  EXPECT_EQ(Str(results[2].at("delayMsg").at("msg")), "old");  // in life: answered, not replaced
  EXPECT_TRUE(results[2].at("existing").as_bool());
  EXPECT_EQ(GetMsg(t, "b").code(), 404);
  ASSERT_EQ(PullOk(t, 10, 60'000).size(), 2u);  // a and c
  ApiResponse acked = Batch("ackMsgBatch", R"({"topic":")" + t +
                                               R"(","ack":["a","zz"],"nack":["c"],)"
                                               R"("reason":"downstream said 503"})");
  ASSERT_EQ(acked.code(), 200) << acked.Describe();
  const json::array& ar = acked.at("results").as_array();
  ASSERT_EQ(ar.size(), 3u);
  EXPECT_EQ(Int(ar[0].at("code")), 200);
  EXPECT_EQ(Int(ar[1].at("code")), 404);
  EXPECT_EQ(Str(ar[2].at("msgId")), "c");
  EXPECT_EQ(StatusOf(t, "a"), 4);
  json::object c = GetOk(t, "c");
  EXPECT_EQ(Int(c.at("status")), 2);
  EXPECT_EQ(Str(c.at("lastError")), "downstream said 503");
}

TEST_F(ExtensionsTest, ACountTriggerReachedWakesAParkedLongPoll) {
  const std::string t = Topic();
  SendOk(t, "go", 3'600'000, {{"msgId", "q"}, {"countTrigger", "3"}});
  auto c = Park(t);
  ApiResponse once = api().Queue("countMsg", {{"topic", t}, {"msgId", "q"}, {"count", "2"}});
  ASSERT_EQ(once.code(), 200) << once.Describe();
  EXPECT_EQ(Int(once.at("delayMsg").at("count")), 2);
  EXPECT_EQ(Int(once.at("delayMsg").at("status")), 1);
  EXPECT_EQ(api().ParkedLongPolls(), 1);
  ApiResponse reached = api().Queue("countMsg", {{"topic", t}, {"msgId", "q"}});
  ASSERT_EQ(reached.code(), 200) << reached.Describe();
  EXPECT_EQ(Int(reached.at("delayMsg").at("status")), 2);
  ApiResponse got = c->Finish();
  ASSERT_EQ(got.code(), 200) << got.Describe();
  ASSERT_EQ(got.at("delayMsgList").as_array().size(), 1u);
  EXPECT_EQ(IdOf(got.at("delayMsgList").at(0)), "q");
  // Counting a message that is no longer waiting is refused and changes nothing.
  ApiResponse late = api().Queue("countMsg", {{"topic", t}, {"msgId", "q"}});
  EXPECT_EQ(late.code(), 404) << late.Describe();
  EXPECT_NE(late.msg().find("CONSUMING"), std::string::npos) << late.Describe();
}

TEST_F(ExtensionsTest, TriggerNowWakesAParkedLongPollAndUpdatesApply) {
  const std::string t = Topic();
  SendOk(t, "v1", 3'600'000, {{"msgId", "a"}});
  ApiResponse u = api().Queue("updateMsg", {{"topic", t}, {"msgId", "a"}, {"msg", "v2"}});
  ASSERT_EQ(u.code(), 200) << u.Describe();
  EXPECT_EQ(Str(u.at("delayMsg").at("msg")), "v2");
  auto c = Park(t);
  ApiResponse now = api().Queue("updateMsg", {{"topic", t}, {"msgId", "a"}, {"triggerTime", "0"}});
  ASSERT_EQ(now.code(), 200) << now.Describe();
  ApiResponse got = c->Finish();
  ASSERT_EQ(got.at("delayMsgList").as_array().size(), 1u) << got.Describe();
  EXPECT_EQ(Str(got.at("delayMsgList").at(0).at("msg")), "v2");
  // Being consumed: no update; a touch gives it a new deadline instead.
  ApiResponse refused = api().Queue("updateMsg", {{"topic", t}, {"msgId", "a"}, {"msg", "v3"}});
  EXPECT_EQ(refused.code(), 404) << refused.Describe();
  ApiResponse touched =
      api().Queue("touchMsg", {{"topic", t}, {"msgId", "a"}, {"ackTimeoutMillis", "90000"}});
  ASSERT_EQ(touched.code(), 200) << touched.Describe();
  Advance(60'000);  // past the long poll's default ack deadline (30 s), before the touched one
  EXPECT_EQ(StatusOf(t, "a"), 3);
  Advance(30'000);
  EXPECT_EQ(StatusOf(t, "a"), 2);
}

TEST_F(ExtensionsTest, ListMsgWalksEveryStatusWithCursors) {
  const std::string t = Topic();
  for (int i = 0; i < 7; ++i) SendOk(t, "w", 10'000 + i, {{"msgId", fmt::format("w{}", i)}});
  for (int i = 0; i < 3; ++i) SendOk(t, "r", 0, {{"msgId", fmt::format("r{}", i)}});
  // Waiting, 3 at a time, by trigger time.
  std::vector<std::string> ids;
  std::string cursor;
  for (int page = 0; page < 10; ++page) {
    Form q = {{"topic", t}, {"status", "1"}, {"limit", "3"}};
    if (!cursor.empty()) q.emplace_back("cursor", cursor);
    ApiResponse r = api().Monitor("listMsg", q);
    ASSERT_EQ(r.code(), 200) << r.Describe();
    for (const auto& m : r.at("delayMsgList").as_array()) ids.push_back(IdOf(m));
    if (r.at("nextCursor").is_null()) break;
    cursor = Str(r.at("nextCursor"));
  }
  EXPECT_EQ(ids, (std::vector<std::string>{"w0", "w1", "w2", "w3", "w4", "w5", "w6"}));
  // A peek shows the ready ones in pull order and delivers nothing.
  ApiResponse peek = api().Monitor("listMsg", {{"topic", t}, {"status", "2"}});
  ASSERT_EQ(peek.code(), 200) << peek.Describe();
  ASSERT_EQ(peek.at("delayMsgList").as_array().size(), 3u);
  EXPECT_EQ(IdOf(peek.at("delayMsgList").at(0)), "r0");
  EXPECT_EQ(StatusOf(t, "r0"), 2);
  ApiResponse bad = api().Monitor("listMsg", {{"topic", t}, {"cursor", "not-a-cursor"}});
  EXPECT_EQ(bad.code(), 400) << bad.Describe();
  EXPECT_NE(bad.msg().find("cursor"), std::string::npos) << bad.Describe();
}

TEST_F(ExtensionsTest, ARestartKeepsPriorityCountAndLastError) {
  const std::string t = Topic();
  SendOk(t, "p", 0, {{"msgId", "p"}, {"priority", "6"}});
  SendOk(t, "c", 3'600'000, {{"msgId", "c"}, {"countTrigger", "5"}});
  ASSERT_EQ(api().Queue("countMsg", {{"topic", t}, {"msgId", "c"}, {"count", "2"}}).code(), 200);
  ASSERT_EQ(IdOf(PullOk(t, 1, 60'000).at(0)), "p");
  ASSERT_EQ(
      api()
          .Queue("ackMsg", {{"topic", t}, {"msgId", "p"}, {"ack", "false"}, {"reason", "boom"}})
          .code(),
      200);
  // Memory storage keeps nothing across a restart by design: there the values are read as is.
  if (testutil::StorageUnderTest() != "memory") {
    ASSERT_TRUE(RestartServer().ok());
  }
  json::object p = GetOk(t, "p");
  EXPECT_EQ(Int(p.at("priority")), 6);
  EXPECT_EQ(Str(p.at("lastError")), "boom");
  json::object c = GetOk(t, "c");
  EXPECT_EQ(Int(c.at("count")), 2);
  EXPECT_EQ(Int(c.at("countTrigger")), 5);
}

}  // namespace
}  // namespace chronoq::it
