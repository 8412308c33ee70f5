// `chronoq send|pull|ack|nack|get|delete` against a real server: readable output, --json output
// (the server's answer, one document) and exit codes 0 and 1. Time moves with the test clock.
#include <regex>
#include <thread>

#include "cli/format.h"
#include "tests/cli/cli_util.h"

namespace chronoq::it {
namespace {

TEST_F(CliTest, SendMapsOptionsAndPrintsIdAndTimes) {
  std::string t = Topic();
  std::string out = CliOk({"send", "--topic=" + t, "--msg={\"orderId\":42}", "--delay=30s",
                           "--ttl=1h", "--max-retry=3", "--msg-id=order-42"});
  json::object m = GetOk(t, "order-42");
  EXPECT_EQ(Str(m["msg"]), "{\"orderId\":42}");
  EXPECT_EQ(Int(m["triggerTime"]) - Int(m["produceTime"]), 30'000);
  EXPECT_EQ(Int(m["expireTime"]) - Int(m["triggerTime"]), kHour);
  EXPECT_EQ(Int(m["maxRetry"]), 3);
  EXPECT_EQ(Int(m["status"]), 1);
  EXPECT_EQ(out, "sent order-42 to topic " + t + ": WAITING, triggers at " +
                     cli::IsoUtc(Int(m["triggerTime"])) + ", expires at " +
                     cli::IsoUtc(Int(m["expireTime"])) + "\n");
}

TEST_F(CliTest, SendSaysWhenAnExistingMessageAnsweredInsteadOfANewOne) {
  std::string t = Topic();
  CliOk({"send", "--topic=" + t, "--msg=first", "--delay=30s", "--msg-id=order-42"});
  json::object m = GetOk(t, "order-42");
  std::string out =
      CliOk({"send", "--topic=" + t, "--msg=second", "--delay=1s", "--msg-id=order-42"});
  EXPECT_EQ(out, "not sent: order-42 is already in topic " + t +
                     " (WAITING); nothing was stored. The existing message triggers at " +
                     cli::IsoUtc(Int(m["triggerTime"])) + ", expires at " +
                     cli::IsoUtc(Int(m["expireTime"])) + "\n");
  EXPECT_EQ(Str(GetOk(t, "order-42")["msg"]), "first");
  // Once it has ended, the same id is a new message again.
  CliOk({"delete", "--topic=" + t, "--msg-id=order-42"});
  out = CliOk({"send", "--topic=" + t, "--msg=third", "--msg-id=order-42"});
  EXPECT_TRUE(out.starts_with("sent order-42 to topic " + t + ": READY")) << out;
}

TEST_F(CliTest, SendAcceptsPlainMillisecondsAndCompoundDurations) {
  std::string t = Topic();
  CliOk({"send", "--topic", t, "--msg", "a", "--delay", "1500", "--msg-id", "a"});
  CliOk({"send", "--topic=" + t, "--msg=b", "--delay=1h30m", "--ttl=250ms", "--msg-id=b"});
  json::object a = GetOk(t, "a");
  EXPECT_EQ(Int(a["triggerTime"]) - Int(a["produceTime"]), 1500);
  json::object b = GetOk(t, "b");
  EXPECT_EQ(Int(b["triggerTime"]) - Int(b["produceTime"]), 90 * kMinute);
  EXPECT_EQ(Int(b["expireTime"]) - Int(b["triggerTime"]), 250);
}

TEST_F(CliTest, SendJsonIsTheServersAnswer) {
  std::string t = Topic();
  json::object doc = CliJson({"send", "--topic=" + t, "--msg=hello"});
  EXPECT_EQ(Int(doc["code"]), 200);
  EXPECT_EQ(Str(doc["msg"]), "success");
  ExpectMessageShape(doc["delayMsg"]);
  std::string id = Str(doc["delayMsg"].as_object().at("msgId"));
  EXPECT_TRUE(std::regex_match(id, std::regex("[0-9a-f]{32}"))) << id;  // generated
  EXPECT_EQ(Int(doc["delayMsg"].as_object().at("status")), 2);          // no delay: ready
  EXPECT_EQ(StatusOf(t, id), 2);
}

TEST_F(CliTest, PullShowsMessagesAndAckEndsThem) {
  std::string t = Topic();
  SendOk(t, "first\nline", 0, {{"msgId", "a"}, {"maxRetry", "2"}});
  SendOk(t, "second", 2 * kMinute, {{"msgId", "b"}});
  std::string out = CliOk({"pull", "--topic=" + t, "--batch=10", "--ack-timeout=1m"});
  EXPECT_TRUE(Contains(out, "msgId        a\n")) << out;
  EXPECT_TRUE(Contains(out, "status       CONSUMING (3)\n")) << out;
  EXPECT_TRUE(Contains(out, "msg          first\\nline\n")) << out;  // one line per field
  EXPECT_TRUE(Contains(out, "deliveries   1 of at most 3 (maxRetry 2)\n")) << out;
  EXPECT_FALSE(Contains(out, "msgId        b")) << out;  // not due yet
  EXPECT_EQ(StatusOf(t, "a"), 3);

  Advance(59'000);  // the ack timeout of one minute has not passed
  EXPECT_EQ(CliOk({"ack", "--topic=" + t, "--msg-id=a"}), "acked a in topic " + t + "\n");
  EXPECT_EQ(StatusOf(t, "a"), 4);
  EXPECT_EQ(CliOk({"pull", "--topic=" + t}), "no message ready in topic " + t + "\n");
}

TEST_F(CliTest, PullJsonListsTheDeliveredMessages) {
  std::string t = Topic();
  for (const char* id : {"a", "b", "c"}) SendOk(t, "m", 0, {{"msgId", id}});
  json::object doc = CliJson({"pull", "--topic=" + t, "--batch=2"});
  EXPECT_EQ(Int(doc["code"]), 200);
  ASSERT_TRUE(doc["delayMsgList"].is_array());
  const json::array& list = doc["delayMsgList"].as_array();
  ASSERT_EQ(list.size(), 2u);
  for (const auto& m : list) ExpectMessageShape(m);
  EXPECT_EQ(Str(list[0].at("msgId")), "a");
  EXPECT_EQ(Str(list[1].at("msgId")), "b");

  doc = CliJson({"pull", "--topic=" + Topic("empty")});
  EXPECT_TRUE(doc["delayMsgList"].is_array() && doc["delayMsgList"].as_array().empty());
}

TEST_F(CliTest, AckTimeoutOptionIsSent) {
  std::string t = Topic();
  SendOk(t, "m", 0, {{"msgId", "a"}});
  CliOk({"pull", "--topic=" + t, "--ack-timeout=2s"});
  Advance(1'999);
  EXPECT_EQ(StatusOf(t, "a"), 3);
  Advance(1);
  EXPECT_EQ(StatusOf(t, "a"), 2);  // delivered again after exactly 2 s
}

TEST_F(CliTest, LongPollWaitsForAMessage) {
  std::string t = Topic();
  ExitResult r;
  std::thread poll([&] { r = Cli({"pull", "--topic=" + t, "--long-poll=1m"}); });
  bool parked = api().WaitParked(1, std::chrono::seconds(10));
  SendOk(t, "wake", 0, {{"msgId", "w"}});
  poll.join();
  ASSERT_TRUE(parked) << "the CLI's long poll was never parked";
  EXPECT_EQ(r.exit_code, kOk) << Describe(r);
  EXPECT_TRUE(Contains(r.out, "msgId        w\n")) << r.out;
  EXPECT_TRUE(Contains(r.out, "msg          wake\n")) << r.out;
}

TEST_F(CliTest, NackDeliversAgainAndRefusesWhatIsNotConsuming) {
  std::string t = Topic();
  SendOk(t, "m", 0, {{"msgId", "a"}});
  ExitResult r = Cli({"nack", "--topic=" + t, "--msg-id=a"});  // not delivered yet
  EXPECT_EQ(r.exit_code, kRefused) << Describe(r);
  EXPECT_TRUE(Contains(r.err, "code 404")) << r.err;
  EXPECT_EQ(r.out, "");

  CliOk({"pull", "--topic=" + t});
  EXPECT_TRUE(Contains(CliOk({"nack", "--topic=" + t, "--msg-id=a"}), "nacked a")) << t;
  EXPECT_EQ(StatusOf(t, "a"), 2);
}

TEST_F(CliTest, AckOfUnknownMessageExits1WithTheServersMessage) {
  std::string t = Topic();
  ExitResult r = Cli({"ack", "--topic=" + t, "--msg-id=nope"});
  EXPECT_EQ(r.exit_code, kRefused) << Describe(r);
  EXPECT_EQ(r.out, "");
  ApiResponse direct = Ack(t, "nope");
  EXPECT_TRUE(Contains(r.err, direct.msg())) << r.err << "\nserver: " << direct.Describe();

  json::object doc = CliJson({"ack", "--topic=" + t, "--msg-id=nope"}, kRefused);
  EXPECT_EQ(Int(doc["code"]), 404);
  EXPECT_EQ(Str(doc["msg"]), direct.msg());
}

TEST_F(CliTest, GetShowsTheMessageOrExits1) {
  std::string t = Topic();
  SendOk(t, "payload", 5'000, {{"msgId", "a"}, {"ttlMillis", "60000"}, {"maxRetry", "0"}});
  json::object m = GetOk(t, "a");
  std::string out = CliOk({"get", "--topic=" + t, "--msg-id=a"});
  EXPECT_EQ(out,
            "msgId        a\n"
            "topic        " +
                t +
                "\n"
                "status       WAITING (1)\n"
                "msg          payload\n"
                "produced     " +
                cli::IsoUtc(Int(m["produceTime"])) +
                "\n"
                "trigger      " +
                cli::IsoUtc(Int(m["triggerTime"])) +
                "\n"
                "expire       " +
                cli::IsoUtc(Int(m["expireTime"])) +
                "\n"
                "deliveries   0 of at most 1 (maxRetry 0)\n");

  json::object doc = CliJson({"get", "--topic=" + t, "--msg-id=a"});
  EXPECT_EQ(json::serialize(doc["delayMsg"]), json::serialize(json::value(m)));

  ExitResult r = Cli({"get", "--topic=" + t, "--msg-id=missing"});
  EXPECT_EQ(r.exit_code, kRefused) << Describe(r);
  EXPECT_TRUE(Contains(r.err, "chronoq get: ")) << r.err;
  EXPECT_TRUE(Contains(r.err, "(code 404)")) << r.err;
}

TEST_F(CliTest, DeleteEndsTheMessageAndRelease) {
  std::string t = Topic();
  SendOk(t, "m", 60'000, {{"msgId", "a"}});
  SendOk(t, "m", 60'000, {{"msgId", "b"}});
  EXPECT_EQ(CliOk({"delete", "--topic=" + t, "--msg-id=a"}), "deleted a in topic " + t + "\n");
  EXPECT_EQ(StatusOf(t, "a"), 7);
  ExitResult again = Cli({"delete", "--topic=" + t, "--msg-id=a"});
  EXPECT_EQ(again.exit_code, kRefused) << Describe(again);

  CliOk({"delete", "--topic=" + t, "--msg-id=b", "--release"});
  EXPECT_EQ(StatusOf(t, "b"), 0);  // forgotten at once
  EXPECT_EQ(Cli({"get", "--topic=" + t, "--msg-id=b"}).exit_code, kRefused);
}

TEST_F(CliTest, ServerSideValidationExits1) {
  std::string t = Topic();
  ExitResult r = Cli({"send", "--topic=" + t, "--msg="});
  EXPECT_EQ(r.exit_code, kRefused) << Describe(r);
  EXPECT_TRUE(Contains(r.err, "msg")) << r.err;
  r = Cli({"send", "--topic=" + std::string(256, 'x'), "--msg=m"});
  EXPECT_EQ(r.exit_code, kRefused) << Describe(r);
  EXPECT_TRUE(Contains(r.err, "code 400")) << r.err;
}

}  // namespace
}  // namespace chronoq::it
