// longPollingMsg over real connections (API.md section 4): immediate answers, wake-ups (send,
// trigger time, nack, ack timeout), timeout, first-come first-served between parked requests, one
// message to one request, clients that go away. Parking is observed through the test-mode
// endpoint GET /chronoq/test/longPolls, never by sleeping.
#include "tests/integration/it_util.h"

namespace chronoq::it {
namespace {

using namespace std::chrono_literals;

class LongPollTest : public ServerTest {
 protected:
  // Starts a long poll on a connection of its own and waits until the server has parked it.
  std::unique_ptr<ApiClient> Park(const std::string& topic, int64_t timeout_ms = 60'000,
                                  int batch = 0, int64_t expect_parked = 1) {
    auto c = NewClient();
    Form f = {{"topic", topic}, {"longPollingTimeoutMillis", std::to_string(timeout_ms)}};
    if (batch != 0) f.emplace_back("batch", std::to_string(batch));
    EXPECT_TRUE(c->BeginQueue("longPollingMsg", f).ok());
    EXPECT_TRUE(api().WaitParked(expect_parked))
        << "parked: " << api().ParkedLongPolls() << ", expected " << expect_parked;
    return c;
  }
  // The ids in a long-poll answer.
  static std::vector<std::string> Ids(const ApiResponse& r) {
    std::vector<std::string> out;
    EXPECT_EQ(r.code(), 200) << r.Describe();
    const json::value& l = r.at("delayMsgList");
    EXPECT_TRUE(l.is_array()) << r.Describe();
    if (l.is_array()) {
      for (const auto& m : l.as_array()) out.push_back(Str(m.at("msgId")));
    }
    return out;
  }
  using Ids_ = std::vector<std::string>;
};

TEST_F(LongPollTest, AnswersAtOnceWhenMessagesAreReady) {
  std::string t = Topic();
  for (const char* id : {"a", "b", "c"}) SendOk(t, "m", 0, {{"msgId", id}});
  ApiResponse r = api().Queue(
      "longPollingMsg", {{"topic", t}, {"batch", "2"}, {"longPollingTimeoutMillis", "60000"}});
  EXPECT_EQ(Ids(r), (Ids_{"a", "b"}));
  for (const auto& m : r.at("delayMsgList").as_array()) {
    ExpectMessageShape(m);
    EXPECT_EQ(Int(m.at("status")), 3);
    EXPECT_EQ(Int(m.at("retry")), 1);
  }
  EXPECT_EQ(api().ParkedLongPolls(), 0);
}

TEST_F(LongPollTest, WakesWhenAMessageIsSent) {
  std::string t = Topic();
  auto c = Park(t);
  SendOk(t, "hello", 0, {{"msgId", "a"}});
  ApiResponse r = c->Finish();
  EXPECT_EQ(Ids(r), (Ids_{"a"}));
  EXPECT_EQ(Str(r.at("delayMsgList").at(0).at("msg")), "hello");
  EXPECT_EQ(Int(r.at("delayMsgList").at(0).at("status")), 3);
  EXPECT_EQ(StatusOf(t, "a"), 3);
  EXPECT_EQ(api().ParkedLongPolls(), 0);
  // The delivered message is acked like any other.
  ExpectAppCode(Ack(t, "a"), 200);
  // The connection stays usable after the long poll.
  ExpectAppCode(c->Queue("getMsg", {{"topic", t}, {"msgId", "a"}}), 200);
}

TEST_F(LongPollTest, ADelayedSendDoesNotWakeButItsTriggerTimeDoes) {
  std::string t = Topic();
  auto c = Park(t);
  SendOk(t, "m", 5000, {{"msgId", "a"}});
  EXPECT_EQ(api().ParkedLongPolls(), 1);
  Advance(4999);
  EXPECT_EQ(api().ParkedLongPolls(), 1);
  Advance(1);
  ApiResponse r = c->Finish();
  EXPECT_EQ(Ids(r), (Ids_{"a"}));
  EXPECT_EQ(StatusOf(t, "a"), 3);
}

TEST_F(LongPollTest, WakesAtTriggerTimeOfAMessageSentBefore) {
  std::string t = Topic();
  SendOk(t, "m", 3000, {{"msgId", "a"}});
  auto c = Park(t);
  Advance(3000);
  EXPECT_EQ(Ids(c->Finish()), (Ids_{"a"}));
}

TEST_F(LongPollTest, WakesWhenAMessageIsNacked) {
  std::string t = Topic();
  SendOk(t, "m", 0, {{"msgId", "a"}});
  ASSERT_EQ(PullOk(t, 1, 60'000).size(), 1u);
  auto c = Park(t);
  ExpectAppCode(Ack(t, "a", false), 200);
  ApiResponse r = c->Finish();
  EXPECT_EQ(Ids(r), (Ids_{"a"}));
  EXPECT_EQ(Int(r.at("delayMsgList").at(0).at("retry")), 2);
}

TEST_F(LongPollTest, WakesWhenAnAckTimesOut) {
  std::string t = Topic();
  SendOk(t, "m", 0, {{"msgId", "a"}});
  ASSERT_EQ(PullOk(t, 1, 3000).size(), 1u);
  auto c = Park(t);
  Advance(2999);
  EXPECT_EQ(api().ParkedLongPolls(), 1);
  Advance(1);
  ApiResponse r = c->Finish();
  EXPECT_EQ(Ids(r), (Ids_{"a"}));
  EXPECT_EQ(Int(r.at("delayMsgList").at(0).at("retry")), 2);
}

TEST_F(LongPollTest, TimeoutAnswersAnEmptyList) {
  std::string t = Topic();
  auto c = Park(t, 2000);
  Advance(1999);
  EXPECT_EQ(api().ParkedLongPolls(), 1);
  Advance(1);
  ApiResponse r = c->Finish();
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.header("Content-Type"), "application/json");
  EXPECT_EQ(r.http.body, R"({"code":200,"msg":"success","delayMsgList":[]})");
  EXPECT_EQ(api().ParkedLongPolls(), 0);
  // Nothing was taken: a message sent now is for the next request.
  SendOk(t, "m", 0, {{"msgId", "a"}});
  std::vector<json::object> l = PullOk(t);
  ASSERT_EQ(l.size(), 1u);
  EXPECT_EQ(Int(l[0]["retry"]), 1);
}

TEST_F(LongPollTest, ParkedRequestsAreServedFirstComeFirstServed) {
  std::string t = Topic();
  auto first = Park(t, 60'000, 0, 1);
  auto second = Park(t, 60'000, 0, 2);
  auto third = Park(t, 60'000, 0, 3);
  SendOk(t, "m", 0, {{"msgId", "m1"}});
  EXPECT_EQ(Ids(first->Finish()), (Ids_{"m1"}));
  EXPECT_TRUE(api().WaitParked(2));
  SendOk(t, "m", 0, {{"msgId", "m2"}});
  EXPECT_EQ(Ids(second->Finish()), (Ids_{"m2"}));
  EXPECT_TRUE(api().WaitParked(1));
  SendOk(t, "m", 0, {{"msgId", "m3"}});
  EXPECT_EQ(Ids(third->Finish()), (Ids_{"m3"}));
  EXPECT_EQ(api().ParkedLongPolls(), 0);
}

TEST_F(LongPollTest, OneMessageGoesToOneRequest) {
  std::string t = Topic();
  auto first = Park(t, 5000, 10, 1);
  auto second = Park(t, 5000, 10, 2);
  SendOk(t, "m", 0, {{"msgId", "only"}});
  EXPECT_EQ(Ids(first->Finish()), (Ids_{"only"}));
  EXPECT_TRUE(api().WaitParked(1));
  // The other request stays parked and gets nothing: not the same message a second time.
  Advance(5000);
  ApiResponse r = second->Finish();
  EXPECT_EQ(Ids(r), Ids_{});
  EXPECT_EQ(Int(GetOk(t, "only")["retry"]), 1);
}

TEST_F(LongPollTest, TriggerOfSeveralMessagesServesParkedRequestsInOrder) {
  std::string t = Topic();
  for (const char* id : {"a", "b", "c"}) SendOk(t, "m", 1000, {{"msgId", id}});
  // Long-poll timeouts shorter than the 30 s ack timeout, so nothing is delivered twice.
  auto first = Park(t, 20'000, 2, 1);
  auto second = Park(t, 20'000, 2, 2);
  auto third = Park(t, 20'000, 2, 3);
  Advance(1000);  // three messages ready at once
  EXPECT_EQ(Ids(first->Finish()), (Ids_{"a", "b"}));
  EXPECT_EQ(Ids(second->Finish()), (Ids_{"c"}));
  EXPECT_TRUE(api().WaitParked(1));
  Advance(19'000);
  EXPECT_EQ(Ids(third->Finish()), Ids_{});
}

TEST_F(LongPollTest, OtherTopicsDoNotWakeARequest) {
  std::string t = Topic();
  std::string other = Topic("other");
  auto c = Park(t, 3000);
  SendOk(other, "m", 0);
  EXPECT_EQ(api().ParkedLongPolls(), 1);
  Advance(3000);
  EXPECT_EQ(Ids(c->Finish()), Ids_{});
  EXPECT_EQ(PullOk(other).size(), 1u);
}

TEST_F(LongPollTest, AClientThatLeftTakesNoMessage) {
  std::string t = Topic();
  auto c = Park(t);
  c->Close();
  EXPECT_TRUE(api().WaitParked(0)) << "the server did not notice the client leaving";
  SendOk(t, "m", 0, {{"msgId", "a"}});
  std::vector<json::object> l = PullOk(t);
  ASSERT_EQ(l.size(), 1u);
  EXPECT_EQ(Int(l[0]["retry"]), 1) << "the message was delivered to the departed client";
}

TEST_F(LongPollTest, AClientThatLeftTakesNoMessageEvenWhenSentRightAway) {
  std::string t = Topic();
  auto c = Park(t);
  c->Close();
  SendOk(t, "m", 0, {{"msgId", "a"}});  // no wait: the server may learn of the close only now
  std::vector<json::object> l = PullOk(t);
  ASSERT_EQ(l.size(), 1u);
  EXPECT_EQ(Int(l[0]["retry"]), 1) << "the message was delivered to the departed client";
  EXPECT_TRUE(api().WaitParked(0));
}

TEST_F(LongPollTest, AClientThatPipelinedAnotherRequestAndLeftTakesNoMessage) {
  // Unread bytes of a pipelined request sit in the server's socket when the client closes: the
  // close must still be seen.
  std::string t = Topic();
  auto c = Park(t);
  ASSERT_TRUE(
      c->connection().SendRaw(c->connection().Format("GET", "/camellia/health/check")).ok());
  c->Close();
  SendOk(t, "m", 0, {{"msgId", "a"}});
  std::vector<json::object> l = PullOk(t);
  ASSERT_EQ(l.size(), 1u) << "the message was delivered to the departed client";
  EXPECT_EQ(Int(l[0]["retry"]), 1);
}

TEST_F(LongPollTest, ALeftClientIsSkippedAndTheNextParkedOneServed) {
  std::string t = Topic();
  auto gone = Park(t, 60'000, 0, 1);
  auto waiting = Park(t, 60'000, 0, 2);
  gone->Close();
  SendOk(t, "m", 0, {{"msgId", "a"}});
  ApiResponse r = waiting->Finish();
  EXPECT_EQ(Ids(r), (Ids_{"a"}));
  EXPECT_EQ(Int(r.at("delayMsgList").at(0).at("retry")), 1);
  EXPECT_TRUE(api().WaitParked(0));
}

TEST_F(LongPollTest, ManyParkedRequestsAllTimeOut) {
  std::string t = Topic();
  std::vector<std::unique_ptr<ApiClient>> clients;
  for (int i = 0; i < 50; ++i) clients.push_back(Park(t, 1000, 0, i + 1));
  Advance(1000);
  for (auto& c : clients) EXPECT_EQ(Ids(c->Finish()), Ids_{});
  EXPECT_EQ(api().ParkedLongPolls(), 0);
}

TEST_F(LongPollTest, ManyParkedRequestsEachGetOneMessage) {
  std::string t = Topic();
  std::vector<std::unique_ptr<ApiClient>> clients;
  for (int i = 0; i < 20; ++i) clients.push_back(Park(t, 60'000, 0, i + 1));
  for (int i = 0; i < 20; ++i) SendOk(t, "m", 0, {{"msgId", "m" + std::to_string(i)}});
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(Ids(clients[i]->Finish()), (Ids_{"m" + std::to_string(i)})) << i;
  }
}

// The caps on parked long polls: beyond them a request is answered at once (200, with what one
// pull finds), never with an error, and parks again once there is room.
class LongPollLimitsTest : public LongPollTest {
 protected:
  std::vector<std::string> Flags() const override {
    return {"--max-parked-long-polls=3", "--max-parked-long-polls-per-topic=2"};
  }
  // A long poll beyond a cap: answered without waiting for its 60 s.
  ApiResponse Refused(const std::string& topic) {
    auto c = NewClient();
    return c->Queue("longPollingMsg", {{"topic", topic}, {"longPollingTimeoutMillis", "60000"}});
  }
};

TEST_F(LongPollLimitsTest, BeyondTheCapsRequestsAreAnsweredAtOnce) {
  std::string a = Topic("a"), b = Topic("b"), c = Topic("c");
  auto a1 = Park(a, 1000, 0, 1);
  auto a2 = Park(a, 1000, 0, 2);
  EXPECT_EQ(Ids(Refused(a)), Ids_{});  // per topic
  EXPECT_EQ(api().ParkedLongPolls(), 2);
  auto b1 = Park(b, 1000, 0, 3);
  EXPECT_EQ(Ids(Refused(c)), Ids_{});  // in total
  EXPECT_EQ(api().ParkedLongPolls(), 3);
  // Beyond the cap a request still gets what is ready: one pull, no wait.
  SendOk(c, "m", 0, {{"msgId", "x"}});
  EXPECT_EQ(Ids(Refused(c)), (Ids_{"x"}));
  // Room again once the parked ones leave.
  Advance(1000);
  for (auto* p : {&a1, &a2, &b1}) EXPECT_EQ(Ids((*p)->Finish()), Ids_{});
  ASSERT_TRUE(api().WaitParked(0));
  auto a3 = Park(a, 1000, 0, 1);
  SendOk(a, "m", 0, {{"msgId", "y"}});
  EXPECT_EQ(Ids(a3->Finish()), (Ids_{"y"}));
}

}  // namespace
}  // namespace chronoq::it
