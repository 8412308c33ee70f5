// The issue-15 subcommands against a real server: topic-config get|set|delete, pause, resume,
// purge and redrive; their text, --json and exit codes, including the server's refusals printed
// as they came.
#include "tests/cli/cli_util.h"

namespace chronoq::it {
namespace {

using CliTopicsTest = CliTest;

TEST_F(CliTopicsTest, TopicConfigSetGetDelete) {
  std::string t = Topic();
  std::string out = CliOk({"topic-config", "set", "--topic=" + t, "--capacity=5",
                           "--retry-interval-millis=2s", "--dead-letter-topic=" + t + ".dlq"});
  EXPECT_TRUE(Contains(out, "topic " + t + "\n")) << out;
  EXPECT_TRUE(Contains(out, "retryIntervalMillis")) << out;
  EXPECT_TRUE(Contains(out, "2000")) << out;
  json::object got = CliJson({"topic-config", "get", "--topic=" + t});
  const json::object& c = got["topicConfig"].as_object();
  EXPECT_EQ(Int(c.at("capacity")), 5);
  EXPECT_EQ(Str(c.at("sources").as_object().at("capacity")), "topic");
  EXPECT_EQ(CliOk({"topic-config", "delete", "--topic=" + t}),
            "topic " + t +
                ": stored configuration deleted (the config file's and the server's defaults "
                "apply)\n");
  EXPECT_EQ(Int(CliJson({"topic-config", "get", "--topic=" + t})["topicConfig"].as_object().at(
                "capacity")),
            0);
}

TEST_F(CliTopicsTest, ARefusedValuePrintsTheServersMessage) {
  std::string t = Topic();
  ExitResult r = Cli({"topic-config", "set", "--topic=" + t, "--dead-letter-topic=" + t});
  EXPECT_EQ(r.exit_code, kRefused) << Describe(r);
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(Contains(r.err, "cannot be its own dead-letter topic")) << r.err;
  EXPECT_TRUE(Contains(r.err, "(code 400)")) << r.err;
}

TEST_F(CliTopicsTest, PauseResumePurgeRedrive) {
  std::string t = Topic();
  EXPECT_EQ(CliOk({"pause", "--topic=" + t}),
            "topic " + t + " paused: sends are stored, pulls get nothing\n");
  SendOk(t, "m", 0, {{"msgId", "a"}});
  SendOk(t, "m", 60'000, {{"msgId", "b"}});
  EXPECT_TRUE(PullOk(t, 10).empty());
  EXPECT_EQ(CliOk({"resume", "--topic=" + t}),
            "topic " + t + " resumed: pulls get its messages again\n");
  EXPECT_EQ(CliOk({"purge", "--topic=" + t, "--status=2"}),
            "purged 1 message from topic " + t + "\n");
  EXPECT_EQ(CliOk({"purge", "--topic=" + t}), "purged 1 message from topic " + t + "\n");
  EXPECT_EQ(CliOk({"redrive", "--topic=" + t + ".dlq"}),
            "redriven 0 messages from dead-letter topic " + t + ".dlq\n");
}

}  // namespace
}  // namespace chronoq::it
