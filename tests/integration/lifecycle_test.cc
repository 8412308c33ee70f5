// The message lifecycle of API.md section 5 over HTTP with the test clock: the status getMsg reads
// at each instant, trigger, ack, ack timeout, nack, retries, ttl, delete, retention, msgId
// idempotence and replacement of ended messages.
#include "tests/integration/it_util.h"

namespace chronoq::it {
namespace {

enum : int64_t {
  kGone = 0,  // StatusOf: getMsg answered code 404
  kWaiting = 1,
  kReady = 2,
  kConsuming = 3,
  kConsumeOk = 4,
  kExpire = 5,
  kRetryExhaust = 6,
  kDelete = 7,
};

constexpr int64_t kRetention = 300'000;  // end-life-msg-expire-millis default

class LifecycleTest : public ServerTest {
 protected:
  // Sends message `id` ready now and pulls it (ack timeout `ack_ms`); expects it delivered.
  void SendAndPull(const std::string& t, const std::string& id, const Form& extra = {},
                   int64_t ack_ms = 30'000) {
    Form f = extra;
    f.emplace_back("msgId", id);
    SendOk(t, "payload-" + id, 0, f);
    std::vector<json::object> l = PullOk(t, 1, ack_ms);
    ASSERT_EQ(l.size(), 1u);
    ASSERT_EQ(MsgId(l[0]), id);
  }
  json::object Info(const std::string& t) { return TopicInfo(t); }
  // waiting / ready / consuming counts of getTopicInfo.
  std::vector<int64_t> Counts(const std::string& t) {
    json::object i = Info(t);
    return {Int(i["waitingQueueSize"]), Int(i["readyQueueSize"]), Int(i["ackQueueSize"])};
  }
};

using Counts3 = std::vector<int64_t>;

TEST_F(LifecycleTest, WaitingBecomesReadyExactlyAtTriggerTime) {
  std::string t = Topic();
  json::object m = SendOk(t, "m", 5000, {{"msgId", "a"}});
  EXPECT_EQ(Int(m["status"]), kWaiting);
  EXPECT_EQ(Counts(t), (Counts3{1, 0, 0}));
  EXPECT_TRUE(PullOk(t).empty());
  Advance(4999);
  EXPECT_EQ(StatusOf(t, "a"), kWaiting);
  EXPECT_TRUE(PullOk(t).empty());
  Advance(1);
  EXPECT_EQ(StatusOf(t, "a"), kReady);
  EXPECT_EQ(Counts(t), (Counts3{0, 1, 0}));
  json::object got = GetOk(t, "a");
  EXPECT_EQ(Int(got["retry"]), 0);
  std::vector<json::object> l = PullOk(t);
  ASSERT_EQ(l.size(), 1u);
  EXPECT_EQ(Int(l[0]["status"]), kConsuming);
  EXPECT_EQ(Int(l[0]["retry"]), 1);
  EXPECT_EQ(Counts(t), (Counts3{0, 0, 1}));
}

TEST_F(LifecycleTest, PullTakesOldestTriggerTimeFirst) {
  std::string t = Topic();
  SendOk(t, "m", 3000, {{"msgId", "c"}});
  SendOk(t, "m", 1000, {{"msgId", "a"}});
  SendOk(t, "m", 2000, {{"msgId", "b"}});
  SendOk(t, "m", 9000, {{"msgId", "later"}});
  Advance(3000);
  std::vector<json::object> l = PullOk(t, 10);
  ASSERT_EQ(l.size(), 3u);
  EXPECT_EQ(MsgId(l[0]), "a");
  EXPECT_EQ(MsgId(l[1]), "b");
  EXPECT_EQ(MsgId(l[2]), "c");
  for (const auto& m : l) EXPECT_EQ(Int(m.at("status")), kConsuming);
  EXPECT_EQ(StatusOf(t, "later"), kWaiting);
}

TEST_F(LifecycleTest, AckEndsTheMessageForGood) {
  std::string t = Topic();
  SendAndPull(t, "a", {}, 1000);
  EXPECT_EQ(StatusOf(t, "a"), kConsuming);
  ExpectAppCode(Ack(t, "a"), 200);
  EXPECT_EQ(StatusOf(t, "a"), kConsumeOk);
  EXPECT_EQ(Counts(t), (Counts3{0, 0, 0}));
  Advance(5000);  // past the old ack timeout: never delivered again
  EXPECT_TRUE(PullOk(t).empty());
  EXPECT_EQ(StatusOf(t, "a"), kConsumeOk);
  ExpectAppCode(Ack(t, "a"), 404);  // already ended
  ExpectAppCode(Ack(t, "a", false), 404);
  EXPECT_EQ(StatusOf(t, "a"), kConsumeOk);
}

TEST_F(LifecycleTest, AckTimeoutMakesTheMessageReadyAgain) {
  std::string t = Topic();
  SendAndPull(t, "a", {}, 3000);
  Advance(2999);
  EXPECT_EQ(StatusOf(t, "a"), kConsuming);
  EXPECT_TRUE(PullOk(t).empty());
  Advance(1);
  json::object m = GetOk(t, "a");
  EXPECT_EQ(Int(m["status"]), kReady);
  EXPECT_EQ(Int(m["retry"]), 1);
  EXPECT_EQ(Counts(t), (Counts3{0, 1, 0}));
  std::vector<json::object> l = PullOk(t);
  ASSERT_EQ(l.size(), 1u);
  EXPECT_EQ(Int(l[0]["retry"]), 2);
  EXPECT_EQ(Int(l[0]["status"]), kConsuming);
}

TEST_F(LifecycleTest, DefaultAckTimeoutIs30Seconds) {
  std::string t = Topic();
  SendAndPull(t, "a", {}, /*ack_ms=*/0);  // 0 -> ack-timeout-millis
  Advance(29'999);
  EXPECT_EQ(StatusOf(t, "a"), kConsuming);
  Advance(1);
  EXPECT_EQ(StatusOf(t, "a"), kReady);
  SendOk(t, "m", 0, {{"msgId", "b"}});
  ASSERT_EQ(PullOk(t, 2, -5).size(), 2u);  // < 0 -> default too
  Advance(29'999);
  EXPECT_EQ(StatusOf(t, "b"), kConsuming);
  Advance(1);
  EXPECT_EQ(StatusOf(t, "b"), kReady);
}

TEST_F(LifecycleTest, LateAckAfterTimeoutStillWins) {
  std::string t = Topic();
  SendAndPull(t, "a", {}, 1000);
  Advance(1000);
  EXPECT_EQ(StatusOf(t, "a"), kReady);
  ExpectAppCode(Ack(t, "a"), 200);
  EXPECT_EQ(StatusOf(t, "a"), kConsumeOk);
  EXPECT_TRUE(PullOk(t).empty());
}

TEST_F(LifecycleTest, NackMakesTheMessageReadyAtOnce) {
  std::string t = Topic();
  SendAndPull(t, "a", {{"maxRetry", "3"}}, 60'000);
  ExpectAppCode(Ack(t, "a", false), 200);
  json::object m = GetOk(t, "a");
  EXPECT_EQ(Int(m["status"]), kReady);
  EXPECT_EQ(Int(m["retry"]), 1);
  std::vector<json::object> l = PullOk(t);
  ASSERT_EQ(l.size(), 1u);
  EXPECT_EQ(Int(l[0]["retry"]), 2);
}

TEST_F(LifecycleTest, NackOfTheLastDeliveryEndsAsRetryExhaust) {
  std::string t = Topic();
  SendAndPull(t, "a", {{"maxRetry", "1"}});
  ExpectAppCode(Ack(t, "a", false), 200);
  EXPECT_EQ(StatusOf(t, "a"), kReady);
  std::vector<json::object> l = PullOk(t);
  ASSERT_EQ(l.size(), 1u);
  EXPECT_EQ(Int(l[0]["retry"]), 2);
  ExpectAppCode(Ack(t, "a", false), 200);
  EXPECT_EQ(StatusOf(t, "a"), kRetryExhaust);
  EXPECT_TRUE(PullOk(t).empty());
  ExpectAppCode(Ack(t, "a"), 404);  // ended: a late ack does not revive it
  EXPECT_EQ(StatusOf(t, "a"), kRetryExhaust);
}

TEST_F(LifecycleTest, AtMostMaxRetryPlusOneDeliveriesByTimeout) {
  std::string t = Topic();
  SendOk(t, "m", 0, {{"msgId", "a"}, {"maxRetry", "2"}});
  int deliveries = 0;
  for (int i = 0; i < 6; ++i) {
    std::vector<json::object> l = PullOk(t, 1, 1000);
    if (l.empty()) break;
    ++deliveries;
    EXPECT_EQ(Int(l[0]["retry"]), deliveries);
    Advance(1000);
  }
  EXPECT_EQ(deliveries, 3);
  EXPECT_EQ(StatusOf(t, "a"), kRetryExhaust);
  json::object m = GetOk(t, "a");
  EXPECT_EQ(Int(m["retry"]), 3);
  ExpectAppCode(Ack(t, "a"), 404);  // too late after the last delivery timed out
}

TEST_F(LifecycleTest, MaxRetryZeroMeansOneDelivery) {
  std::string t = Topic();
  SendAndPull(t, "a", {{"maxRetry", "0"}}, 1000);
  Advance(999);
  EXPECT_EQ(StatusOf(t, "a"), kConsuming);
  Advance(1);
  EXPECT_EQ(StatusOf(t, "a"), kRetryExhaust);
  EXPECT_TRUE(PullOk(t).empty());

  SendAndPull(t, "b", {{"maxRetry", "0"}});
  ExpectAppCode(Ack(t, "b", false), 200);
  EXPECT_EQ(StatusOf(t, "b"), kRetryExhaust);
}

TEST_F(LifecycleTest, TtlCountsFromTriggerTimeAndEndsUndeliveredAsExpire) {
  std::string t = Topic();
  int64_t now = Now();
  json::object m = SendOk(t, "m", 10'000, {{"msgId", "a"}, {"ttlMillis", "5000"}});
  EXPECT_EQ(Int(m["expireTime"]), now + 15'000);
  Advance(14'999);
  EXPECT_EQ(StatusOf(t, "a"), kReady);
  Advance(2);
  EXPECT_EQ(StatusOf(t, "a"), kExpire);
  EXPECT_EQ(Counts(t), (Counts3{0, 0, 0}));
  EXPECT_TRUE(PullOk(t).empty());
  ExpectAppCode(Ack(t, "a"), 404);
  ExpectAppCode(Delete(t, "a"), 404);  // already ended
  EXPECT_EQ(StatusOf(t, "a"), kExpire);
}

TEST_F(LifecycleTest, TtlPassingAfterADeliveryIsRetryExhaust) {
  std::string t = Topic();
  SendAndPull(t, "a", {{"ttlMillis", "5000"}}, 60'000);
  Advance(4999);
  EXPECT_EQ(StatusOf(t, "a"), kConsuming);
  Advance(2);
  EXPECT_EQ(StatusOf(t, "a"), kRetryExhaust);
  ExpectAppCode(Ack(t, "a"), 404);
  EXPECT_EQ(StatusOf(t, "a"), kRetryExhaust);

  // Delivered, timed out (ready again), then ttl passes: also 6.
  SendAndPull(t, "b", {{"ttlMillis", "5000"}}, 1000);
  Advance(1000);
  EXPECT_EQ(StatusOf(t, "b"), kReady);
  Advance(4001);
  EXPECT_EQ(StatusOf(t, "b"), kRetryExhaust);
  EXPECT_TRUE(PullOk(t).empty());
}

TEST_F(LifecycleTest, PullSkipsEndedMessagesAndKeepsFillingTheBatch) {
  std::string t = Topic();
  SendOk(t, "m", 0, {{"msgId", "short1"}, {"ttlMillis", "1000"}});
  SendOk(t, "m", 0, {{"msgId", "short2"}, {"ttlMillis", "1000"}});
  Advance(500);
  SendOk(t, "m", 0, {{"msgId", "long1"}});
  SendOk(t, "m", 0, {{"msgId", "long2"}});
  Advance(600);  // short1/short2 ended by ttl
  std::vector<json::object> l = PullOk(t, 2);
  ASSERT_EQ(l.size(), 2u);
  EXPECT_EQ(MsgId(l[0]), "long1");
  EXPECT_EQ(MsgId(l[1]), "long2");
  EXPECT_EQ(StatusOf(t, "short1"), kExpire);
}

TEST_F(LifecycleTest, DeleteEndsAMessageInLifeInEachState) {
  std::string t = Topic();
  SendOk(t, "m", 5000, {{"msgId", "waiting"}});
  SendOk(t, "m", 0, {{"msgId", "consuming"}});
  ASSERT_EQ(PullOk(t).size(), 1u);
  SendOk(t, "m", 0, {{"msgId", "ready"}});
  EXPECT_EQ(Counts(t), (Counts3{1, 1, 1}));
  for (const char* id : {"waiting", "ready", "consuming"}) {
    SCOPED_TRACE(id);
    ExpectAppCode(Delete(t, id), 200);
    EXPECT_EQ(StatusOf(t, id), kDelete);
    ExpectAppCode(Delete(t, id), 404);  // already ended
    ExpectAppCode(Ack(t, id), 404);     // a later ack does not revive it
    ExpectAppCode(Ack(t, id, false), 404);
    EXPECT_EQ(StatusOf(t, id), kDelete);
  }
  EXPECT_EQ(Counts(t), (Counts3{0, 0, 0}));
  Advance(60'000);
  EXPECT_TRUE(PullOk(t, 10).empty());
}

TEST_F(LifecycleTest, DeleteWithReleaseForgetsTheRecordAtOnce) {
  std::string t = Topic();
  SendOk(t, "first", 0, {{"msgId", "a"}});
  ExpectAppCode(Delete(t, "a", /*release=*/true), 200);
  EXPECT_EQ(StatusOf(t, "a"), kGone);
  ExpectAppCode(Delete(t, "a", true), 404);
  EXPECT_TRUE(PullOk(t).empty());
  // The id is free again.
  json::object m = SendOk(t, "second", 0, {{"msgId", "a"}});
  EXPECT_EQ(Str(m["msg"]), "second");
  EXPECT_EQ(Int(m["retry"]), 0);
}

TEST_F(LifecycleTest, DeleteOfAnEndedMessageIs404AndChangesNothing) {
  std::string t = Topic();
  SendAndPull(t, "a");
  ExpectAppCode(Ack(t, "a"), 200);
  ExpectAppCode(Delete(t, "a"), 404);
  ExpectAppCode(Delete(t, "a", true), 404);
  EXPECT_EQ(StatusOf(t, "a"), kConsumeOk);
}

TEST_F(LifecycleTest, EndedMessagesAreRetainedThenForgotten) {
  std::string t = Topic();
  SendAndPull(t, "acked");
  ExpectAppCode(Ack(t, "acked"), 200);
  SendOk(t, "m", 0, {{"msgId", "deleted"}});
  ExpectAppCode(Delete(t, "deleted"), 200);
  Advance(kRetention - 1);
  EXPECT_EQ(StatusOf(t, "acked"), kConsumeOk);
  EXPECT_EQ(StatusOf(t, "deleted"), kDelete);
  Advance(2);
  EXPECT_EQ(StatusOf(t, "acked"), kGone);
  EXPECT_EQ(StatusOf(t, "deleted"), kGone);
  ExpectAppCode(Ack(t, "acked"), 404);
  ExpectAppCode(Delete(t, "deleted"), 404);
}

TEST_F(LifecycleTest, RetentionOfAnExpiredMessageCountsFromItsEnd) {
  std::string t = Topic();
  SendOk(t, "m", 0, {{"msgId", "a"}, {"ttlMillis", "1000"}});
  Advance(1000 + kRetention - 1);
  EXPECT_EQ(StatusOf(t, "a"), kExpire);
  Advance(2);
  EXPECT_EQ(StatusOf(t, "a"), kGone);
}

TEST_F(LifecycleTest, SendWithAnIdInLifeAnswersTheExistingMessage) {
  std::string t = Topic();
  json::object first = SendOk(t, "original", 5000, {{"msgId", "a"}, {"maxRetry", "4"}});
  Advance(10);
  // Waiting.
  ApiResponse r = Send(t, "replacement", 0, {{"msgId", "a"}, {"maxRetry", "1"}});
  ExpectAppCode(r, 200);
  EXPECT_EQ(r.at("delayMsg").as_object(), first);
  EXPECT_EQ(Counts(t), (Counts3{1, 0, 0}));
  // Ready.
  Advance(4990);
  r = Send(t, "replacement", 0, {{"msgId", "a"}});
  ExpectAppCode(r, 200);
  EXPECT_EQ(Str(r.at("delayMsg").at("msg")), "original");
  EXPECT_EQ(Int(r.at("delayMsg").at("status")), kReady);
  EXPECT_EQ(Int(r.at("delayMsg").at("produceTime")), Int(first["produceTime"]));
  EXPECT_EQ(Counts(t), (Counts3{0, 1, 0}));
  // Consuming.
  ASSERT_EQ(PullOk(t).size(), 1u);
  r = Send(t, "replacement", 0, {{"msgId", "a"}});
  ExpectAppCode(r, 200);
  EXPECT_EQ(Str(r.at("delayMsg").at("msg")), "original");
  EXPECT_EQ(Int(r.at("delayMsg").at("status")), kConsuming);
  EXPECT_EQ(Int(r.at("delayMsg").at("retry")), 1);
  EXPECT_EQ(Int(r.at("delayMsg").at("maxRetry")), 4);
  EXPECT_EQ(Counts(t), (Counts3{0, 0, 1}));
  EXPECT_TRUE(PullOk(t).empty());
}

TEST_F(LifecycleTest, SendWithTheIdOfAnEndedMessageReplacesIt) {
  std::string t = Topic();
  // 4: acked.
  SendAndPull(t, "ok");
  ExpectAppCode(Ack(t, "ok"), 200);
  // 6: retries exhausted.
  SendAndPull(t, "exh", {{"maxRetry", "0"}});
  ExpectAppCode(Ack(t, "exh", false), 200);
  // 5: expired.
  SendOk(t, "old", 0, {{"msgId", "exp"}, {"ttlMillis", "10"}});
  // 7: deleted, not released.
  SendOk(t, "old", 0, {{"msgId", "del"}});
  ExpectAppCode(Delete(t, "del"), 200);
  Advance(11);
  EXPECT_EQ(StatusOf(t, "ok"), kConsumeOk);
  EXPECT_EQ(StatusOf(t, "exp"), kExpire);
  EXPECT_EQ(StatusOf(t, "exh"), kRetryExhaust);
  EXPECT_EQ(StatusOf(t, "del"), kDelete);

  int64_t now = Now();
  for (const char* id : {"ok", "exp", "exh", "del"}) {
    SCOPED_TRACE(id);
    json::object m = SendOk(t, std::string("new-") + id, 1000, {{"msgId", id}, {"maxRetry", "5"}});
    EXPECT_EQ(Str(m["msg"]), std::string("new-") + id);
    EXPECT_EQ(Int(m["status"]), kWaiting);
    EXPECT_EQ(Int(m["retry"]), 0);
    EXPECT_EQ(Int(m["maxRetry"]), 5);
    EXPECT_EQ(Int(m["produceTime"]), now);
    EXPECT_EQ(StatusOf(t, id), kWaiting);
  }
  Advance(1000);
  EXPECT_EQ(PullOk(t, 10).size(), 4u);
}

TEST_F(LifecycleTest, AckOfAMessageNeverDeliveredIs404AndChangesNothing) {
  std::string t = Topic();
  SendOk(t, "m", 5000, {{"msgId", "waiting"}});
  SendOk(t, "m", 0, {{"msgId", "ready"}});
  for (bool ack : {true, false}) {
    SCOPED_TRACE(ack ? "ack" : "nack");
    ApiResponse r = Ack(t, "waiting", ack);
    ExpectAppCode(r, 404);
    r = Ack(t, "ready", ack);
    ExpectAppCode(r, 404);
  }
  EXPECT_EQ(StatusOf(t, "waiting"), kWaiting);
  json::object m = GetOk(t, "ready");
  EXPECT_EQ(Int(m["status"]), kReady);
  EXPECT_EQ(Int(m["retry"]), 0);
  // Nack of a not-delivered message does not deliver it early.
  Advance(4999);
  EXPECT_EQ(StatusOf(t, "waiting"), kWaiting);
  std::vector<json::object> l = PullOk(t, 10);
  ASSERT_EQ(l.size(), 1u);
  EXPECT_EQ(MsgId(l[0]), "ready");
  EXPECT_EQ(Int(l[0]["retry"]), 1);
}

TEST_F(LifecycleTest, NackAppliesOnlyToConsumingMessages) {
  std::string t = Topic();
  SendAndPull(t, "a", {}, 1000);
  Advance(1000);  // ack timeout passed: status 2 with retry 1
  ApiResponse r = Ack(t, "a", false);
  ExpectAppCode(r, 404);
  json::object m = GetOk(t, "a");
  EXPECT_EQ(Int(m["status"]), kReady);
  EXPECT_EQ(Int(m["retry"]), 1);
}

TEST_F(LifecycleTest, NotFoundMessagesSaySo) {
  std::string t = Topic();
  ApiResponse r = Ack(t, "nope");
  ExpectAppCode(r, 404);
  std::string unknown_msg = r.msg();
  SendOk(t, "m", 0, {{"msgId", "ready"}});
  r = Ack(t, "ready");
  ExpectAppCode(r, 404);
  // "a sentence saying which": not found and not delivered read differently.
  EXPECT_NE(r.msg(), unknown_msg);
}

TEST_F(LifecycleTest, TheSameIdInTwoTopicsAreTwoMessages) {
  std::string t1 = Topic("one");
  std::string t2 = Topic("two");
  SendOk(t1, "first", 0, {{"msgId", "same"}});
  json::object m = SendOk(t2, "second", 5000, {{"msgId", "same"}});
  EXPECT_EQ(Str(m["msg"]), "second");
  EXPECT_EQ(Int(m["status"]), kWaiting);
  ASSERT_EQ(PullOk(t1).size(), 1u);
  ExpectAppCode(Ack(t1, "same"), 200);
  EXPECT_EQ(StatusOf(t1, "same"), kConsumeOk);
  EXPECT_EQ(StatusOf(t2, "same"), kWaiting);
  ExpectAppCode(Delete(t2, "same", true), 200);
  EXPECT_EQ(StatusOf(t1, "same"), kConsumeOk);
}

TEST_F(LifecycleTest, HugeAckTimeoutSaturates) {
  std::string t = Topic();
  SendAndPull(t, "a", {{"ttlMillis", "100000"}}, INT64_MAX);
  json::object m = GetOk(t, "a");
  EXPECT_EQ(Int(m["status"]), kConsuming);
  Advance(99'999);
  EXPECT_EQ(StatusOf(t, "a"), kConsuming);
  Advance(1);  // the ttl still ends it
  EXPECT_EQ(StatusOf(t, "a"), kRetryExhaust);
}

TEST_F(LifecycleTest, EmptyReleaseMeansFalse) {
  std::string t = Topic();
  SendOk(t, "m", 0, {{"msgId", "a"}});
  ExpectAppCode(api().Queue("deleteMsg", {{"topic", t}, {"msgId", "a"}, {"release", ""}}), 200);
  EXPECT_EQ(StatusOf(t, "a"), kDelete);  // kept for the retention period
  SendOk(t, "m", 0, {{"msgId", "b"}});
  ExpectAppCode(api().Queue("deleteMsg", {{"topic", t}, {"msgId", "b"}}), 200);
  EXPECT_EQ(StatusOf(t, "b"), kDelete);
}

TEST_F(LifecycleTest, TopicInfoCountsFollowTheClock) {
  std::string t = Topic();
  SendOk(t, "m", 1000, {{"msgId", "a"}});
  SendOk(t, "m", 2000, {{"msgId", "b"}});
  SendOk(t, "m", 0, {{"msgId", "c"}});
  EXPECT_EQ(Counts(t), (Counts3{2, 1, 0}));
  ASSERT_EQ(PullOk(t, 1, 5000).size(), 1u);
  EXPECT_EQ(Counts(t), (Counts3{2, 0, 1}));
  Advance(1000);
  EXPECT_EQ(Counts(t), (Counts3{1, 1, 1}));
  Advance(1000);
  EXPECT_EQ(Counts(t), (Counts3{0, 2, 1}));
  Advance(3000);  // c's ack timeout
  EXPECT_EQ(Counts(t), (Counts3{0, 3, 0}));
}

}  // namespace
}  // namespace chronoq::it
