// The issue-14 subcommands against a real server: send's extension options, send-batch (file and
// stdin, several requests), ack/nack --batch and --reason, update, trigger-now, touch, count, list
// and peek; their text, --json and exit codes, including the server's refusals printed as they
// came. Time moves with the test clock.
#include <fstream>

#include "cli/format.h"
#include "tests/cli/cli_util.h"
#include "tests/testutil/temp_dir.h"

namespace chronoq::it {
namespace {

// `n` JSON lines {"msg":"m<i>","delayMillis":0,"msgId":"<prefix><i>"}.
std::string JsonLines(int n, const std::string& prefix) {
  std::string out;
  for (int i = 0; i < n; ++i) {
    out += "{\"msg\":\"m" + std::to_string(i) + "\",\"delayMillis\":0,\"msgId\":\"" + prefix +
           std::to_string(i) + "\"}\n";
  }
  return out;
}

int Count(const std::string& haystack, std::string_view needle) {
  int n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos;
       at = haystack.find(needle, at + needle.size())) {
    ++n;
  }
  return n;
}

class CliManageTest : public CliTest {
 protected:
  // The server's msg for a request made directly, to compare with what the CLI printed.
  std::string ServerMsg(const std::string& op, const Form& form) {
    return api().Queue(op, form).msg();
  }
};

TEST_F(CliManageTest, SendTakesPriorityTriggerTimeAndCountTrigger) {
  std::string t = Topic();
  int64_t at = Now() + 90'000;
  std::string out =
      CliOk({"send", "--topic=" + t, "--msg=m", "--priority=7",
             "--trigger-time=" + std::to_string(at), "--count-trigger=2", "--msg-id=a"});
  json::object m = GetOk(t, "a");
  EXPECT_EQ(Int(m["triggerTime"]), at);
  EXPECT_EQ(Int(m["priority"]), 7);
  EXPECT_EQ(Int(m["countTrigger"]), 2);
  EXPECT_EQ(Int(m["status"]), 1);
  EXPECT_EQ(out, "sent a to topic " + t + ": WAITING, triggers at " + cli::IsoUtc(at) +
                     ", expires at " + cli::IsoUtc(Int(m["expireTime"])) +
                     ", priority 7, count 0 of 2\n");
  // A message without extension options reads as before: no priority, no count.
  out = CliOk({"send", "--topic=" + t, "--msg=m", "--msg-id=b"});
  EXPECT_FALSE(Contains(out, "priority")) << out;
  EXPECT_FALSE(GetOk(t, "b").contains("priority"));
}

TEST_F(CliManageTest, BadPriorityPrintsTheServersMessage) {
  std::string t = Topic();
  std::string direct =
      ServerMsg("sendMsg", {{"topic", t}, {"msg", "m"}, {"delayMillis", "0"}, {"priority", "10"}});
  ExitResult r = Cli({"send", "--topic=" + t, "--msg=m", "--priority=10", "--msg-id=a"});
  EXPECT_EQ(r.exit_code, kRefused) << Describe(r);
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(Contains(direct, "priority")) << direct;
  EXPECT_EQ(r.err, "chronoq send: " + direct + " (code 400)\n");
  EXPECT_EQ(StatusOf(t, "a"), 0);  // nothing stored

  json::object doc =
      CliJson({"send", "--topic=" + t, "--msg=m", "--priority=-1", "--msg-id=a"}, kRefused);
  EXPECT_EQ(Int(doc["code"]), 400);
  EXPECT_TRUE(Contains(Str(doc["msg"]), "priority")) << Str(doc["msg"]);

  // --delay and --trigger-time both: the server names both.
  r = Cli({"send", "--topic=" + t, "--msg=m", "--delay=1s", "--trigger-time=1", "--msg-id=a"});
  EXPECT_EQ(r.exit_code, kRefused) << Describe(r);
  EXPECT_TRUE(Contains(r.err, "delayMillis") && Contains(r.err, "triggerTime")) << r.err;
  EXPECT_EQ(StatusOf(t, "a"), 0);
}

TEST_F(CliManageTest, SendBatchFromStdinInRequestsOfAThousand) {
  std::string t = Topic();
  ExitResult r = CliWithInput({"send-batch", "--topic=" + t}, JsonLines(2500, "s"));
  EXPECT_EQ(r.exit_code, kOk) << Describe(r).substr(0, 2000);
  EXPECT_EQ(Count(r.out, ": sent s"), 2500);
  EXPECT_TRUE(Contains(r.out, "line 1: sent s0: READY, triggers at ")) << r.out.substr(0, 300);
  EXPECT_TRUE(Contains(r.out, "\nline 2500: sent s2499: READY"))
      << r.out.substr(r.out.size() - 300);
  EXPECT_EQ(Int(TopicInfo(t)["readyQueueSize"]), 2500);
  EXPECT_EQ(Str(GetOk(t, "s1234")["msg"]), "m1234");

  // --json: the server's answer to each request, one per line.
  ExitResult j =
      CliWithInput({"send-batch", "--topic=" + Topic("json"), "--json"}, JsonLines(1001, "j"));
  EXPECT_EQ(j.exit_code, kOk) << Describe(j).substr(0, 2000);
  std::vector<json::object> docs = ParseLines(j.out);
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(docs[0]["results"].as_array().size(), 1000u);
  EXPECT_EQ(docs[1]["results"].as_array().size(), 1u);
  EXPECT_EQ(Str(docs[1]["results"].as_array()[0].at("delayMsg").at("msgId")), "j1000");
}

TEST_F(CliManageTest, SendBatchReportsEachLineAndExits1WhenOneFailed) {
  std::string t = Topic();
  SendOk(t, "old", 60'000, {{"msgId", "dup"}});
  std::string input =
      "{\"msg\":\"a\",\"delayMillis\":0,\"msgId\":\"a\",\"priority\":3}\n"
      "\n"
      "{\"msg\":\"b\",\"delayMillis\":0,\"msgId\":\"b\",\"priority\":12}\n"
      "{\"msg\":\"new\",\"delayMillis\":0,\"msgId\":\"dup\"}\n";
  testutil::TempDir dir;
  std::string path = dir.path() + "/batch.jsonl";
  std::ofstream(path) << input;
  ExitResult r = Cli({"send-batch", "--topic=" + t, "--file=" + path});
  EXPECT_EQ(r.exit_code, kRefused) << Describe(r);
  json::object a = GetOk(t, "a");
  EXPECT_EQ(r.out, "line 1: sent a: READY, triggers at " + cli::IsoUtc(Int(a["triggerTime"])) +
                       ", expires at " + cli::IsoUtc(Int(a["expireTime"])) +
                       ", priority 3\n"
                       "line 3: not sent: priority must be between 0 and 9, got 12 (code 400)\n"
                       "line 4: not sent: dup is already in the topic (WAITING); nothing was "
                       "stored\n");
  EXPECT_EQ(r.err, "chronoq send-batch: 1 item failed (see above)\n");
  EXPECT_EQ(StatusOf(t, "b"), 0);
  EXPECT_EQ(Str(GetOk(t, "dup")["msg"]), "old");
}

TEST_F(CliManageTest, SendBatchChecksEveryLineBeforeSendingAny) {
  std::string t = Topic();
  ExitResult r = CliWithInput({"send-batch", "--topic=" + t},
                              JsonLines(3, "x") + "{\"msg\":\"broken\"\n" + JsonLines(2, "y"));
  EXPECT_EQ(r.exit_code, kUsage) << Describe(r);
  EXPECT_TRUE(Contains(r.err, "chronoq send-batch: line 4: not JSON")) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(StatusOf(t, "x0"), 0);

  r = CliWithInput({"send-batch", "--topic=" + t}, "");
  EXPECT_EQ(r.exit_code, kUsage) << Describe(r);
  EXPECT_TRUE(Contains(r.err, "no messages in stdin")) << r.err;
}

TEST_F(CliManageTest, AckBatchFromArgumentsAndStdin) {
  std::string t = Topic();
  for (const char* id : {"a", "b", "c", "d"}) SendOk(t, "m", 0, {{"msgId", id}});
  ASSERT_EQ(PullOk(t, 10).size(), 4u);

  ExitResult r = Cli({"ack", "--topic=" + t, "--batch", "a", "b"});
  EXPECT_EQ(r.exit_code, kOk) << Describe(r);
  EXPECT_EQ(r.out, "acked a in topic " + t + "\nacked b in topic " + t + "\n");
  EXPECT_EQ(StatusOf(t, "a"), 4);
  EXPECT_EQ(StatusOf(t, "b"), 4);

  r = CliWithInput({"ack", "--topic=" + t, "--batch", "--nack", "--reason=db down"}, "c\nd\n");
  EXPECT_EQ(r.exit_code, kOk) << Describe(r);
  EXPECT_EQ(r.out, "nacked c in topic " + t + "\nnacked d in topic " + t + "\n");
  json::object c = GetOk(t, "c");
  EXPECT_EQ(Int(c["status"]), 2);
  EXPECT_EQ(Str(c["lastError"]), "db down");

  // An id that fails is reported on its line; the others are done; exit 1.
  ASSERT_EQ(PullOk(t, 10).size(), 2u);
  r = Cli({"ack", "--topic=" + t, "--batch", "c", "nope", "--json"});
  EXPECT_EQ(r.exit_code, kRefused) << Describe(r);
  json::object doc = ParseObject(r.out);
  const json::array& results = doc["results"].as_array();
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(Int(results[0].at("code")), 200);
  EXPECT_EQ(Int(results[1].at("code")), 404);
  r = Cli({"nack", "--topic=" + t, "--batch", "d", "nope"});
  EXPECT_EQ(r.exit_code, kRefused) << Describe(r);
  EXPECT_TRUE(r.out.starts_with("nacked d in topic " + t + "\nnot nacked nope: ")) << r.out;
  EXPECT_TRUE(Contains(r.out, "(code 404)\n")) << r.out;
  EXPECT_EQ(r.err, "chronoq nack: 1 item failed (see above)\n");
  EXPECT_EQ(StatusOf(t, "c"), 4);
}

TEST_F(CliManageTest, NackKeepsItsReason) {
  std::string t = Topic();
  SendOk(t, "m", 0, {{"msgId", "a"}});
  ASSERT_EQ(PullOk(t).size(), 1u);
  CliOk({"nack", "--topic=" + t, "--msg-id=a", "--reason=payment service timed out"});
  json::object m = GetOk(t, "a");
  EXPECT_EQ(Int(m["status"]), 2);
  EXPECT_EQ(Str(m["lastError"]), "payment service timed out");
  EXPECT_TRUE(Contains(CliOk({"get", "--topic=" + t, "--msg-id=a"}),
                       "lastError    payment service timed out\n"));
}

TEST_F(CliManageTest, UpdateChangesAWaitingMessage) {
  std::string t = Topic();
  SendOk(t, "old", 60'000, {{"msgId", "a"}});
  int64_t now = Now();
  std::string out = CliOk({"update", "--topic=" + t, "--msg-id=a", "--delay=2m", "--msg=new",
                           "--priority=4", "--ttl=10m", "--max-retry=1"});
  json::object m = GetOk(t, "a");
  EXPECT_EQ(Int(m["triggerTime"]), now + 2 * kMinute);
  EXPECT_EQ(Int(m["expireTime"]), now + 12 * kMinute);
  EXPECT_EQ(Str(m["msg"]), "new");
  EXPECT_EQ(Int(m["priority"]), 4);
  EXPECT_EQ(Int(m["maxRetry"]), 1);
  EXPECT_EQ(out, "updated a in topic " + t + ": WAITING, triggers at " +
                     cli::IsoUtc(now + 2 * kMinute) + ", expires at " +
                     cli::IsoUtc(now + 12 * kMinute) + ", priority 4\n");

  json::object doc = CliJson(
      {"update", "--topic=" + t, "--msg-id=a", "--trigger-time=" + std::to_string(now + 5)});
  EXPECT_EQ(Int(doc["delayMsg"].as_object()["triggerTime"]), now + 5);
}

TEST_F(CliManageTest, UpdateRefusalsExit1WithTheServersMessage) {
  std::string t = Topic();
  ExitResult r = Cli({"update", "--topic=" + t, "--msg-id=nope", "--priority=1"});
  EXPECT_EQ(r.exit_code, kRefused) << Describe(r);
  EXPECT_TRUE(Contains(r.err, "(code 404)")) << r.err;

  SendOk(t, "m", 0, {{"msgId", "a"}});
  ASSERT_EQ(PullOk(t).size(), 1u);  // consuming: not updatable
  std::string direct = ServerMsg("updateMsg", {{"topic", t}, {"msgId", "a"}, {"priority", "1"}});
  r = Cli({"update", "--topic=" + t, "--msg-id=a", "--priority=1"});
  EXPECT_EQ(r.exit_code, kRefused) << Describe(r);
  EXPECT_EQ(r.err, "chronoq update: " + direct + " (code 404)\n");

  SendOk(t, "m", 60'000, {{"msgId", "b"}});
  r = Cli({"update", "--topic=" + t, "--msg-id=b", "--priority=10"});
  EXPECT_EQ(r.exit_code, kRefused) << Describe(r);
  EXPECT_TRUE(Contains(r.err, "priority must be between 0 and 9")) << r.err;
  EXPECT_FALSE(GetOk(t, "b").contains("priority"));
}

TEST_F(CliManageTest, TriggerNowMakesAWaitingMessageConsumable) {
  std::string t = Topic();
  SendOk(t, "m", kHour, {{"msgId", "a"}});
  int64_t now = Now();
  std::string out = CliOk({"trigger-now", "--topic=" + t, "--msg-id=a"});
  EXPECT_TRUE(out.starts_with("triggered a in topic " + t + ": READY, triggers at " +
                              cli::IsoUtc(now) + ", "))
      << out;
  EXPECT_EQ(StatusOf(t, "a"), 2);
  std::vector<json::object> pulled = PullOk(t);
  ASSERT_EQ(pulled.size(), 1u);
  EXPECT_EQ(Str(pulled[0]["msgId"]), "a");
  ExitResult r = Cli({"trigger-now", "--topic=" + t, "--msg-id=a"});  // consuming now
  EXPECT_EQ(r.exit_code, kRefused) << Describe(r);
}

TEST_F(CliManageTest, TouchRestartsTheAckTimeout) {
  std::string t = Topic();
  SendOk(t, "m", 0, {{"msgId", "a"}});
  ASSERT_EQ(PullOk(t, 1, 2'000).size(), 1u);
  Advance(1'500);
  EXPECT_EQ(CliOk({"touch", "--topic=" + t, "--msg-id=a", "--ack-timeout=10s"}),
            "touched a in topic " + t + ": CONSUMING, to be acked within 10s from now\n");
  Advance(9'999);  // 11.5 s after the pull: the old deadline (2 s) is long gone
  EXPECT_EQ(StatusOf(t, "a"), 3);
  Advance(1);
  EXPECT_EQ(StatusOf(t, "a"), 2);

  ExitResult r = Cli({"touch", "--topic=" + t, "--msg-id=a"});  // ready, not consuming
  EXPECT_EQ(r.exit_code, kRefused) << Describe(r);
  EXPECT_TRUE(Contains(r.err, "(code 404)")) << r.err;
}

TEST_F(CliManageTest, CountReachesTheCountTrigger) {
  std::string t = Topic();
  CliOk({"send", "--topic=" + t, "--msg=m", "--delay=1h", "--count-trigger=3", "--msg-id=a"});
  std::string out = CliOk({"count", "--topic=" + t, "--msg-id=a"});
  EXPECT_TRUE(out.starts_with("counted a in topic " + t + ": WAITING, ")) << out;
  EXPECT_TRUE(out.ends_with(", count 1 of 3\n")) << out;
  out = CliOk({"count", "--topic=" + t, "--msg-id=a", "--count=2"});
  EXPECT_TRUE(out.starts_with("counted a in topic " + t + ": READY, ")) << out;
  EXPECT_TRUE(out.ends_with(", count 3 of 3\n")) << out;
  EXPECT_EQ(StatusOf(t, "a"), 2);
  ExitResult r = Cli({"count", "--topic=" + t, "--msg-id=a"});  // no longer waiting
  EXPECT_EQ(r.exit_code, kRefused) << Describe(r);
  EXPECT_TRUE(Contains(r.err, "(code 404)")) << r.err;
}

TEST_F(CliManageTest, PeekShowsThePullOrderWithoutDelivering) {
  std::string t = Topic();
  SendOk(t, "m", 0, {{"msgId", "low"}});
  SendOk(t, "m", 0, {{"msgId", "high"}, {"priority", "9"}});
  SendOk(t, "m", 0, {{"msgId", "mid"}, {"priority", "5"}});
  SendOk(t, "m", kHour, {{"msgId", "later"}, {"priority", "9"}});
  std::string out = CliOk({"peek", "--topic=" + t});
  size_t high = out.find("msgId        high\n");
  size_t mid = out.find("msgId        mid\n");
  size_t low = out.find("msgId        low\n");
  ASSERT_NE(high, std::string::npos) << out;
  EXPECT_LT(high, mid) << out;
  EXPECT_LT(mid, low) << out;
  EXPECT_FALSE(Contains(out, "later")) << out;
  EXPECT_TRUE(Contains(out, "priority     9\n")) << out;
  EXPECT_EQ(StatusOf(t, "high"), 2);  // not delivered
  EXPECT_EQ(CliOk({"peek", "--topic=" + Topic("empty")}),
            "no message ready in topic " + Topic("empty") + "\n");
}

TEST_F(CliManageTest, ListPagesAndAllFollowsTheCursor) {
  std::string t = Topic();
  for (int i = 0; i < 5; ++i) {
    SendOk(t, "m", (i + 1) * kMinute, {{"msgId", "w" + std::to_string(i)}});
  }
  std::string out = CliOk({"list", "--topic=" + t, "--status=waiting", "--limit=2"});
  EXPECT_EQ(Count(out, "msgId "), 2) << out;
  EXPECT_TRUE(Contains(out, "msgId        w0\n") && Contains(out, "msgId        w1\n")) << out;
  size_t at = out.find("(more: the next page is --cursor=");
  ASSERT_NE(at, std::string::npos) << out;
  std::string cursor = out.substr(at + 33, out.find(", or give --all)") - at - 33);
  out = CliOk({"list", "--topic=" + t, "--status=1", "--limit=2", "--cursor", cursor});
  EXPECT_TRUE(out.starts_with("msgId        w2\n")) << out;

  out = CliOk({"list", "--topic=" + t, "--limit=2", "--all"});
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(Count(out, "msgId        w" + std::to_string(i) + "\n"), 1) << out;
  }
  EXPECT_FALSE(Contains(out, "(more")) << out;
  EXPECT_FALSE(Contains(out, "\n\n\n")) << out;

  ExitResult r = Cli({"list", "--topic=" + t, "--limit=2", "--all", "--json"});
  EXPECT_EQ(r.exit_code, kOk) << Describe(r);
  std::vector<json::object> pages = ParseLines(r.out);
  ASSERT_EQ(pages.size(), 3u) << r.out;
  EXPECT_TRUE(pages[2]["nextCursor"].is_null());
  EXPECT_EQ(pages[2]["delayMsgList"].as_array().size(), 1u);

  EXPECT_EQ(CliOk({"list", "--topic=" + Topic("empty")}),
            "no message waiting, ready or being consumed in topic " + Topic("empty") + "\n");
}

TEST_F(CliManageTest, ListRefusalsPrintTheServersMessage) {
  std::string t = Topic();
  ExitResult r = Cli({"list", "--topic=" + t, "--cursor=not-a-cursor"});
  EXPECT_EQ(r.exit_code, kRefused) << Describe(r);
  EXPECT_TRUE(Contains(r.err, "cursor is not valid")) << r.err;
  r = Cli({"list", "--topic=" + t, "--status=9"});
  EXPECT_EQ(r.exit_code, kRefused) << Describe(r);
  EXPECT_TRUE(Contains(r.err, "status")) << r.err;
}

}  // namespace
}  // namespace chronoq::it
