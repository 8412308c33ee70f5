// Push delivery (issue 16, docs/push.md) through the real binary, on every storage and on two
// nodes sharing one Redis: chronoq calls real HTTP receivers on loopback at the trigger time,
// acks on 2xx, retries failures after the retry interval, ends them as status 6 and dead
// letters, never hands push-lane messages to pullers, keeps a hanging target from slowing a
// healthy one, and stops pushing a paused topic. Time moves only through the test clock; the
// waits below are for real network I/O and have bounds.
#include <fmt/format.h>

#include <chrono>
#include <set>

#include "tests/integration/push/push_it.h"

namespace chronoq::it {
namespace {

using PushDeliveryTest = PushTest;

TEST_F(PushDeliveryTest, AMessageIsPostedToItsUrlAtItsTriggerTimeAndAcked) {
  HttpReceiver target(Answering(200));
  const std::string t = Topic();
  json::object sent = SendOk(t, R"({"order":42})", 60'000,
                             {{"msgId", "order-42"}, {"callback", HttpCallback(target, "/hook")}});
  EXPECT_EQ(Int(sent.at("status")), 1);
  EXPECT_FALSE(target.WaitForRequests(1, 200ms)) << "pushed before its trigger time";
  Advance(60'000);
  ASSERT_TRUE(target.WaitForRequests(1, 10s));
  json::object m = WaitForStatus(t, "order-42", 4);
  EXPECT_EQ(Int(m.at("attempts")), 1);
  EXPECT_TRUE(m.at("push").as_bool());
  EXPECT_EQ(Str(m.at("callback").at("url")), target.Url("/hook"));

  const push::testing::ReceivedRequest r = target.Requests().at(0);
  EXPECT_EQ(r.method, "POST");
  EXPECT_EQ(r.target, "/hook");
  EXPECT_EQ(r.Header("X-Chronoq-Msg-Id"), "order-42");
  EXPECT_EQ(r.Header("X-Chronoq-Topic"), t);
  EXPECT_EQ(r.Header("X-Chronoq-Attempt"), "1");
  EXPECT_EQ(r.Header("Content-Type"), "application/json");
  json::value body = json::parse(r.body);
  EXPECT_EQ(Str(body.at("msgId")), "order-42");
  EXPECT_EQ(Str(body.at("msg")), R"({"order":42})");
  EXPECT_EQ(Str(body.at("topic")), t);
  EXPECT_EQ(target.RequestCount(), 1u);  // acked: never again
}

TEST_F(PushDeliveryTest, ARawBodyCarriesThePayloadAloneWithTheRequestedMethodAndHeaders) {
  HttpReceiver target(Answering(204));
  const std::string t = Topic();
  SendOk(t, "plain text", 0,
         {{"msgId", "r"},
          {"callback", HttpCallback(target, "/raw?x=1",
                                    R"(,"method":"PUT","body":"raw","headers":{"X-Key":"k1"})")}});
  ASSERT_TRUE(target.WaitForRequests(1, 10s));
  const push::testing::ReceivedRequest r = target.Requests().at(0);
  EXPECT_EQ(r.method, "PUT");
  EXPECT_EQ(r.target, "/raw?x=1");
  EXPECT_EQ(r.body, "plain text");
  EXPECT_EQ(r.Header("X-Key"), "k1");
  WaitForStatus(t, "r", 4);
}

TEST_F(PushDeliveryTest, ReadersSeeHeaderNamesOnlyWhileTheTargetAndAnExportGetTheValues) {
  HttpReceiver target(Answering(204));
  const std::string t = Topic();
  const std::string extra = R"(,"headers":{"Authorization":"Bearer s3cret","X-Key":"k1"})";
  json::object sent =
      SendOk(t, "m", 60'000, {{"msgId", "h"}, {"callback", HttpCallback(target, "/h", extra)}});
  const json::value masked = json::parse(R"({"Authorization":"***","X-Key":"***"})");
  const json::value real = json::parse(R"({"Authorization":"Bearer s3cret","X-Key":"k1"})");
  EXPECT_EQ(sent.at("callback").at("headers"), masked);             // the send answer echoes masked
  EXPECT_EQ(Message(t, "h").at("callback").at("headers"), masked);  // getMsg
  ApiResponse list = api().Monitor("listMsg", {{"topic", t}});
  ASSERT_EQ(list.code(), 200) << list.Describe();
  EXPECT_EQ(list.at("delayMsgList").at(0).at("callback").at("headers"), masked);
  // export=true (admin; chronoq export): the real values, for chronoq import to restore.
  ApiResponse exported = api().Monitor("listMsg", {{"topic", t}, {"export", "true"}});
  ASSERT_EQ(exported.code(), 200) << exported.Describe();
  EXPECT_EQ(exported.at("delayMsgList").at(0).at("callback").at("headers"), real);
  // A callback read back and sent again is refused: the mask is not a value to store.
  ApiResponse resend =
      api().Queue("sendMsg", {{"topic", t},
                              {"msgId", "h2"},
                              {"msg", "m"},
                              {"delayMillis", "60000"},
                              {"callback", json::serialize(Message(t, "h").at("callback"))}});
  EXPECT_EQ(resend.code(), 400) << resend.Describe();
  EXPECT_NE(resend.msg().find("callback.headers.Authorization is '***'"), std::string::npos)
      << resend.msg();
  EXPECT_EQ(api().Queue("getMsg", {{"topic", t}, {"msgId", "h2"}}).code(), 404);  // nothing stored
  // The target gets the real values.
  Advance(60'000);
  ASSERT_TRUE(target.WaitForRequests(1, 10s));
  const push::testing::ReceivedRequest r = target.Requests().at(0);
  EXPECT_EQ(r.Header("Authorization"), "Bearer s3cret");
  EXPECT_EQ(r.Header("X-Key"), "k1");
  // The message object in the pushed body carries them too: the target is who they are for.
  EXPECT_EQ(json::parse(r.body).at("callback").at("headers"), real);
  WaitForStatus(t, "h", 4);
}

TEST_F(PushDeliveryTest, FailuresRetryAfterTheIntervalThenEndAsDeadLetters) {
  HttpReceiver target(Answering(500, "database down"));
  const std::string t = Topic();
  const std::string dlq = Topic("dlq");
  ASSERT_EQ(api()
                .Queue("setTopicConfig",
                       {{"topic", t}, {"deadLetterTopic", dlq}, {"retryIntervalMillis", "10000"}})
                .code(),
            200);
  SendOk(t, "m", 0, {{"msgId", "f"}, {"maxRetry", "1"}, {"callback", HttpCallback(target, "/")}});
  ASSERT_TRUE(target.WaitForRequests(1, 10s));
  // The failure is recorded, and the message waits out the topic's retry interval.
  json::object m = WaitForStatus(t, "f", 1);
  EXPECT_EQ(Int(m.at("attempts")), 1);
  EXPECT_EQ(Str(m.at("lastError")).rfind("HTTP 500", 0), 0u) << Str(m.at("lastError"));
  EXPECT_NE(Str(m.at("lastError")).find("database down"), std::string::npos);
  EXPECT_FALSE(target.WaitForRequests(2, 200ms)) << "retried before the retry interval";
  Advance(10'000);
  ASSERT_TRUE(target.WaitForRequests(2, 10s));
  EXPECT_EQ(target.Requests().at(1).Header("X-Chronoq-Attempt"), "2");
  // maxRetry 1: two attempts, then status 6 and a dead letter that pullers can take.
  m = WaitForStatus(t, "f", 6);
  EXPECT_EQ(Int(m.at("attempts")), 2);
  // (On Redis the dead letter moves through the source's outbox, just after the end.)
  std::vector<json::object> dead;
  for (const auto until = std::chrono::steady_clock::now() + 10s;
       dead.empty() && std::chrono::steady_clock::now() < until;) {
    dead = PullOk(dlq, 10, 60'000);
    if (dead.empty()) std::this_thread::sleep_for(5ms);  // another process's progress
  }
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(Str(dead[0].at("msgId")), "f");
  EXPECT_EQ(Str(dead[0].at("deadLetter").at("topic")), t);
  EXPECT_EQ(Int(dead[0].at("deadLetter").at("status")), 6);
  EXPECT_EQ(target.RequestCount(), 2u);
}

// Each attempt is one request, on one node or two: N messages that fail make N requests per
// attempt, each msgId once with its attempt number.
TEST_F(PushDeliveryTest, EachMessageIsPushedOncePerAttempt) {
  HttpReceiver target(Answering(500, "no"));
  const std::string t = Topic();
  constexpr int kMessages = 40;
  const std::string cb = HttpCallback(target, "/", R"(,"retryIntervalMillis":5000)");
  for (int i = 0; i < kMessages; ++i) {
    SendOk(t, "m", 0, {{"msgId", fmt::format("n{}", i)}, {"maxRetry", "1"}, {"callback", cb}});
  }
  ASSERT_TRUE(target.WaitForRequests(kMessages, 10s)) << target.RequestCount();
  for (int i = 0; i < kMessages; ++i) WaitForStatus(t, fmt::format("n{}", i), 1);
  EXPECT_EQ(target.RequestCount(), static_cast<size_t>(kMessages));
  Advance(5'000);
  ASSERT_TRUE(target.WaitForRequests(2 * kMessages, 10s)) << target.RequestCount();
  for (int i = 0; i < kMessages; ++i) WaitForStatus(t, fmt::format("n{}", i), 6);
  std::set<std::pair<std::string, std::string>> seen;  // (msgId, attempt)
  for (const auto& r : target.Requests()) {
    EXPECT_TRUE(seen.emplace(r.Header("X-Chronoq-Msg-Id"), r.Header("X-Chronoq-Attempt")).second)
        << "pushed twice: " << r.Header("X-Chronoq-Msg-Id") << " attempt "
        << r.Header("X-Chronoq-Attempt");
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(2 * kMessages));
  EXPECT_EQ(target.RequestCount(), static_cast<size_t>(2 * kMessages));
}

TEST_F(PushDeliveryTest, TheCallbacksOwnRetryIntervalBeatsTheTopics) {
  HttpReceiver target(Answering(503));
  const std::string t = Topic();
  ASSERT_EQ(api().Queue("setTopicConfig", {{"topic", t}, {"retryIntervalMillis", "600000"}}).code(),
            200);
  SendOk(t, "m", 0,
         {{"msgId", "i"},
          {"maxRetry", "3"},
          {"callback", HttpCallback(target, "/", R"(,"retryIntervalMillis":2000)")}});
  ASSERT_TRUE(target.WaitForRequests(1, 10s));
  WaitForStatus(t, "i", 1);
  Advance(2'000);
  ASSERT_TRUE(target.WaitForRequests(2, 10s));
}

TEST_F(PushDeliveryTest, ATopicsCallbackTakesItsMessagesAndOthersStayPullable) {
  HttpReceiver target(Answering(200));
  const std::string pushed = Topic("pushed");
  const std::string pulled = Topic("pulled");
  ASSERT_EQ(
      api()
          .Queue("setTopicConfig", {{"topic", pushed}, {"callback", HttpCallback(target, "/t")}})
          .code(),
      200);
  SendOk(pushed, "a", 0, {{"msgId", "a"}});
  SendOk(pulled, "b", 0, {{"msgId", "b"}});
  ASSERT_TRUE(target.WaitForRequests(1, 10s));
  WaitForStatus(pushed, "a", 4);
  EXPECT_EQ(target.Requests().at(0).target, "/t");
  std::vector<json::object> got = PullOk(pulled, 10, 60'000);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(Str(got[0].at("msgId")), "b");
  EXPECT_EQ(target.RequestCount(), 1u);
}

TEST_F(PushDeliveryTest, PushLaneMessagesAreNeverPulledButCountInTheTopic) {
  HttpReceiver target(Hanging());
  const std::string t = Topic();
  SendOk(t, "m", 0,
         {{"msgId", "h"}, {"callback", HttpCallback(target, "/", R"(,"timeoutMillis":60000)")}});
  ASSERT_TRUE(target.WaitForRequests(1, 10s));
  EXPECT_TRUE(PullOk(t, 10, 60'000).empty());
  json::object m = WaitForStatus(t, "h", 3);  // leased for its attempt
  EXPECT_EQ(Int(m.at("attempts")), 1);
  json::object info = TopicInfo(t);
  EXPECT_EQ(Int(info["ackQueueSize"]), 1) << json::serialize(info);
}

TEST_F(PushDeliveryTest, AHangingTargetSlowsOnlyItsOwnMessages) {
  HttpReceiver stuck(Hanging());
  HttpReceiver healthy(Answering(200));
  const std::string slow = Topic("slow");
  const std::string fast = Topic("fast");
  const std::string other = Topic("other");
  constexpr int kEach = 200;
  const std::string stuck_cb = HttpCallback(stuck, "/", R"(,"timeoutMillis":60000)");
  const std::string healthy_cb = HttpCallback(healthy, "/");
  for (int i = 0; i < kEach; ++i) {
    SendOk(slow, "s", 0, {{"msgId", fmt::format("s{}", i)}, {"callback", stuck_cb}});
    SendOk(fast, "f", 0, {{"msgId", fmt::format("f{}", i)}, {"callback", healthy_cb}});
  }
  ASSERT_TRUE(healthy.WaitForRequests(kEach, 20s)) << healthy.RequestCount();
  // Sends and pulls of another topic are answered at once meanwhile.
  const auto start = std::chrono::steady_clock::now();
  SendOk(other, "x", 0, {{"msgId", "x"}});
  EXPECT_EQ(PullOk(other, 1, 60'000).size(), 1u);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);
  // The stuck target holds only its own bounded number of attempts (64 per node).
  const size_t nodes = server().peer() != nullptr ? 2 : 1;
  EXPECT_LE(stuck.RequestCount(), 64u * nodes);
  EXPECT_GE(stuck.RequestCount(), 1u);
}

TEST_F(PushDeliveryTest, APausedTopicPushesNothingUntilResumed) {
  HttpReceiver target(Answering(200));
  const std::string t = Topic();
  ASSERT_EQ(api().Queue("pauseTopic", {{"topic", t}}).code(), 200);
  SendOk(t, "m", 0, {{"msgId", "p"}, {"callback", HttpCallback(target, "/")}});
  EXPECT_FALSE(target.WaitForRequests(1, 300ms)) << "a paused topic pushed";
  EXPECT_EQ(StatusOf(t, "p"), 2);
  ASSERT_EQ(api().Queue("resumeTopic", {{"topic", t}}).code(), 200);
  ASSERT_TRUE(target.WaitForRequests(1, 10s));
  WaitForStatus(t, "p", 4);
}

TEST_F(PushDeliveryTest, ADeletedMessageIsNeverPushed) {
  HttpReceiver target(Answering(200));
  const std::string t = Topic();
  SendOk(t, "m", 30'000, {{"msgId", "d"}, {"callback", HttpCallback(target, "/")}});
  ASSERT_EQ(api().Queue("deleteMsg", {{"topic", t}, {"msgId", "d"}}).code(), 200);
  Advance(30'000);
  SendOk(t, "m", 0, {{"msgId", "after"}, {"callback", HttpCallback(target, "/")}});
  ASSERT_TRUE(target.WaitForRequests(1, 10s));
  WaitForStatus(t, "after", 4);
  ASSERT_EQ(target.RequestCount(), 1u);
  EXPECT_EQ(target.Requests().at(0).Header("X-Chronoq-Msg-Id"), "after");
}

TEST_F(PushDeliveryTest, ARestartKeepsThePushLane) {
  HttpReceiver target(Answering(200));
  const std::string t = Topic();
  json::object sent =
      SendOk(t, "m", 60'000, {{"msgId", "k"}, {"callback", HttpCallback(target, "/")}});
  // Memory storage keeps nothing across a restart by design: there the lane is checked as is.
  if (testutil::StorageUnderTest() != "memory") {
    ASSERT_TRUE(RestartServer().ok());
  }
  EXPECT_TRUE(PullOk(t, 10, 60'000).empty());
  // The new process's test clock starts afresh: move it to the trigger time.
  const int64_t trigger = Int(sent.at("triggerTime"));
  Advance(std::max<int64_t>(trigger - Now(), 0));
  ASSERT_TRUE(target.WaitForRequests(1, 10s));
  WaitForStatus(t, "k", 4);
}

TEST_F(PushDeliveryTest, TargetsOutsideTheAllowlistAreRefusedAndNothingIsStored) {
  const std::string t = Topic();
  ApiResponse r = Send(
      t, "m", 0, {{"msgId", "x"}, {"callback", R"({"type":"http","url":"http://10.1.2.3/"})"}});
  ExpectAppCode(r, 400, "callback target '10.1.2.3:80' is not allowed by push-allowed-targets");
  EXPECT_EQ(StatusOf(t, "x"), 0);
}

}  // namespace
}  // namespace chronoq::it
