// The CLI's decisions that need no server: usage errors (exit 2, before any request), help, and
// how answers map to exit codes. tests/cli/ runs the binary against a real server.
#include "cli/cli.h"

#include <gtest/gtest.h>

#include "cli/call.h"

namespace chronoq::cli {
namespace {

// A server URL nothing listens on: a usage error must be found before it is tried (exit 2, not 3).
constexpr const char* kNowhere = "--server=http://127.0.0.1:1";

int Run(std::string_view cmd, std::vector<std::string> args, Output* out) {
  bool has_server = false;
  for (const std::string& a : args) has_server |= a.rfind("--server", 0) == 0;
  if (!has_server) args.push_back(kNowhere);
  return RunCliCaptured(cmd, args, out);
}

void ExpectUsage(std::string_view cmd, std::vector<std::string> args, std::string_view mentions) {
  Output out;
  EXPECT_EQ(Run(cmd, args, &out), kExitUsage) << out.err;
  EXPECT_NE(out.err.find(mentions), std::string::npos)
      << "stderr should mention " << mentions << ":\n"
      << out.err;
  EXPECT_EQ(out.out, "");
}

TEST(CliTest, KnowsItsSubcommands) {
  for (const char* c : {"send", "send-batch", "pull", "ack", "nack", "touch", "get", "list", "peek",
                        "update", "trigger-now", "count", "delete", "topics", "topic", "monitor"}) {
    EXPECT_TRUE(IsCliCommand(c)) << c;
    EXPECT_NE(CommandsUsage().find(std::string("  ") + c + " "), std::string::npos) << c;
  }
  EXPECT_FALSE(IsCliCommand("serve"));
  EXPECT_FALSE(IsCliCommand("bench"));
}

TEST(CliTest, UsageErrorsExit2BeforeContactingTheServer) {
  ExpectUsage("send", {"--msg=m"}, "missing required option '--topic'");
  ExpectUsage("send", {"--topic=t"}, "missing required option '--msg'");
  ExpectUsage("send", {"--topic=t", "--msg=m", "--delay=soon"}, "--delay");
  ExpectUsage("send", {"--topic=t", "--msg=m", "--ttl=0"}, "--ttl");
  ExpectUsage("send", {"--topic=t", "--msg=m", "--max-retry=-1"}, "--max-retry");
  ExpectUsage("send", {"--topic=t", "--msg=m", "--colour=red"}, "unknown option '--colour'");
  ExpectUsage("pull", {"--topic=t", "--batch=0"}, "--batch");
  ExpectUsage("pull", {"--topic=t", "--long-poll=0"}, "--long-poll");
  ExpectUsage("pull", {"--topic=t", "--ack-timeout=1.5s"}, "--ack-timeout");
  ExpectUsage("ack", {"--topic=t"}, "missing required option '--msg-id'");
  ExpectUsage("nack", {"--msg-id=x"}, "missing required option '--topic'");
  ExpectUsage("get", {"--topic=t", "--msg-id=x", "extra"}, "unexpected argument 'extra'");
  ExpectUsage("delete", {"--topic=t", "--msg-id=x", "--release=perhaps"}, "--release");
  ExpectUsage("topic", {}, "--topic");
  ExpectUsage("topics", {"--timeout=0"}, "--timeout");
  ExpectUsage("topics", {"--timeout=2d"}, "--timeout");
  ExpectUsage("monitor", {"--server=http://127.0.0.1:99999"}, "option '--server'");
  ExpectUsage("send", {"--topic=t", "--msg=m", "--priority=1.5"}, "--priority");
  ExpectUsage("send-batch", {"--msg=m"}, "unknown option '--msg'");
  ExpectUsage("send-batch", {"--topic=t", "--file=/nonexistent"}, "cannot open '/nonexistent'");
  ExpectUsage("ack", {"--topic=t", "--batch", "--reason=r", "a"}, "--reason");
  ExpectUsage("nack", {"--topic=t", "a"}, "unexpected argument 'a'");
  ExpectUsage("update", {"--topic=t", "--msg-id=a"}, "nothing to update");
  ExpectUsage("update", {"--topic=t", "--msg-id=a", "--ttl=0"}, "--ttl");
  ExpectUsage("trigger-now", {"--topic=t"}, "missing required option '--msg-id'");
  ExpectUsage("touch", {"--topic=t", "--msg-id=a", "--ack-timeout=soon"}, "--ack-timeout");
  ExpectUsage("count", {"--topic=t", "--msg-id=a", "--count=-2"}, "--count");
  ExpectUsage("list", {"--topic=t", "--status=gone"}, "--status");
  ExpectUsage("list", {"--topic=t", "--all=maybe"}, "--all");
  ExpectUsage("peek", {"--topic=t", "--status=2"}, "unknown option '--status'");
}

TEST(CliTest, OutputOfEveryRequestOfARun) {
  // Nothing listens: the first request of a run fails and the run stops there (exit 3).
  Output out;
  EXPECT_EQ(cli::Run("ack", {"--topic=t", "--batch", "a", "b"}, &out), kExitUnreachable);
  EXPECT_NE(out.err.find("chronoq ack: cannot reach the server"), std::string::npos) << out.err;
  EXPECT_EQ(out.err.find("after"), std::string::npos) << out.err;
}

TEST(CliTest, HelpPerSubcommand) {
  Output out;
  EXPECT_EQ(RunCliCaptured("pull", {"--help"}, &out), kExitOk);
  EXPECT_NE(out.out.find("Usage: chronoq pull"), std::string::npos) << out.out;
  EXPECT_NE(out.out.find("--long-poll=DURATION"), std::string::npos) << out.out;
  EXPECT_EQ(out.err, "");
}

TEST(ClassifyTest, AnswersMapToExitCodes) {
  EXPECT_EQ(Classify(200, R"({"code":200,"msg":"success"})").exit, kExitOk);

  Answer not_found = Classify(200, R"({"code":404,"msg":"message 'x' not found"})");
  EXPECT_EQ(not_found.exit, kExitRefused);
  EXPECT_EQ(not_found.error, "message 'x' not found (code 404)");

  Answer bad = Classify(400, R"({"code":400,"msg":"topic is empty","status":400})");
  EXPECT_EQ(bad.exit, kExitRefused);
  EXPECT_EQ(Classify(500, R"({"code":500,"msg":"storage failed"})").exit, kExitRefused);

  for (const auto& [status, body] :
       std::vector<std::pair<int, std::string>>{{502, "<html>Bad Gateway</html>"},
                                                {200, ""},
                                                {200, "[1,2]"},
                                                {200, R"({"msg":"no code"})"},
                                                {200, R"({"code":"200"})"},
                                                {503, "Service Unavailable"}}) {
    Answer a = Classify(status, body);
    EXPECT_EQ(a.exit, kExitUnreachable) << status << " " << body;
    EXPECT_NE(a.error.find("HTTP " + std::to_string(status)), std::string::npos) << a.error;
  }
}

}  // namespace
}  // namespace chronoq::cli
