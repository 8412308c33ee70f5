// The subcommands of issues 14 and 15 without a server: how their options and input become requests
// (params, JSON bodies, parts of at most kMaxBatchItems), their usage errors, and how answers
// read. tests/cli/ runs them against a real server.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "cli/command.h"
#include "cli/input.h"
#include "tests/testutil/temp_dir.h"

namespace chronoq::cli {
namespace {

const Command& Cmd(std::string_view name) {
  for (const Command& c : Commands()) {
    if (c.spec.name == name) return c;
  }
  ADD_FAILURE() << "no command " << name;
  return Commands().front();
}

ParsedArgs Args(std::string_view cmd, const std::vector<std::string>& args) {
  Result<ParsedArgs> parsed = ParseArgs(Cmd(cmd).spec, args);
  EXPECT_TRUE(parsed.has_value()) << parsed.error().message();
  return parsed.has_value() ? *parsed : ParsedArgs();
}

Result<std::vector<Request>> Build(std::string_view cmd, const std::vector<std::string>& args) {
  return Cmd(cmd).build(Args(cmd, args));
}

// The one request `args` build into.
Request BuildOne(std::string_view cmd, const std::vector<std::string>& args) {
  Result<std::vector<Request>> r = Build(cmd, args);
  EXPECT_TRUE(r.has_value()) << r.error().message();
  EXPECT_EQ(r.has_value() ? r->size() : 0u, 1u);
  return r.has_value() && !r->empty() ? r->front() : Request();
}

std::string BuildError(std::string_view cmd, const std::vector<std::string>& args) {
  Result<std::vector<Request>> r = Build(cmd, args);
  EXPECT_FALSE(r.has_value()) << cmd;
  return r.has_value() ? "" : r.error().message();
}

Params P(std::initializer_list<std::pair<std::string, std::string>> p) { return Params(p); }

client::Json J(std::string_view text) {
  Result<client::Json> j = client::Json::Parse(text);
  EXPECT_TRUE(j.has_value()) << text;
  return j.has_value() ? *j : client::Json();
}

// A file holding `text`, removed with the object.
class TempInput {
 public:
  explicit TempInput(std::string_view text) {
    std::string name = testutil::TempTemplate("cli_input_");
    int fd = ::mkstemp(name.data());
    EXPECT_GE(fd, 0);
    ::close(fd);
    path_ = name;
    std::ofstream(path_, std::ios::binary) << text;
  }
  ~TempInput() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(SendTest, ExtensionOptionsBecomeParams) {
  Request r = BuildOne("send", {"--topic=t", "--msg=m", "--priority=7", "--count-trigger=3",
                                "--delay=1m", "--msg-id=a"});
  EXPECT_EQ(r.op, "sendMsg");
  EXPECT_EQ(r.params, P({{"topic", "t"},
                         {"msg", "m"},
                         {"delayMillis", "60000"},
                         {"priority", "7"},
                         {"countTrigger", "3"},
                         {"msgId", "a"}}));
  EXPECT_TRUE(r.json.empty());
}

TEST(SendTest, CallbackOptionsBecomeTheCallbackObject) {
  auto callback = [](std::vector<std::string> extra) {
    std::vector<std::string> args = {"--topic=t", "--msg=m"};
    args.insert(args.end(), extra.begin(), extra.end());
    return BuildOne("send", args).params.back();
  };
  EXPECT_EQ(callback({"--callback-url=http://h:8080/x?a=\"1\""}),
            (std::pair<std::string, std::string>{
                "callback", R"({"type":"http","url":"http://h:8080/x?a=\"1\""})"}));
  EXPECT_EQ(callback({"--callback-grpc=127.0.0.1:50051/pkg.Orders/Cancel", "--callback-timeout=2s"})
                .second,
            R"({"type":"grpc","target":"127.0.0.1:50051","method":"/pkg.Orders/Cancel",)"
            R"("timeoutMillis":2000})");
  EXPECT_EQ(callback({"--callback-kafka=k1:9092,k2:9092/orders"}).second,
            R"({"type":"kafka","brokers":"k1:9092,k2:9092","topic":"orders"})");
  EXPECT_EQ(BuildError("send", {"--topic=t", "--msg=m", "--callback-url=http://a/",
                                "--callback-kafka=k:1/t"}),
            "give at most one of --callback-url, --callback-grpc, --callback-kafka");
  EXPECT_EQ(BuildError("send", {"--topic=t", "--msg=m", "--callback-grpc=h:1"}),
            "--callback-grpc must be HOST:PORT/package.Service/Method");
  EXPECT_EQ(BuildError("send", {"--topic=t", "--msg=m", "--callback-timeout=1s"}),
            "--callback-timeout needs one of --callback-url, --callback-grpc, --callback-kafka");
}

TEST(SendTest, TriggerTimeReplacesTheDefaultDelay) {
  Request r = BuildOne("send", {"--topic=t", "--msg=m", "--trigger-time=1795290983503"});
  EXPECT_EQ(r.params, P({{"topic", "t"}, {"msg", "m"}, {"triggerTime", "1795290983503"}}));
  EXPECT_EQ(BuildOne("send", {"--topic=t", "--msg=m"}).params,
            P({{"topic", "t"}, {"msg", "m"}, {"delayMillis", "0"}}));
  // Both go to the server, whose answer names both.
  r = BuildOne("send", {"--topic=t", "--msg=m", "--delay=5s", "--trigger-time=1"});
  EXPECT_EQ(r.params,
            P({{"topic", "t"}, {"msg", "m"}, {"delayMillis", "5000"}, {"triggerTime", "1"}}));
}

TEST(SendTest, PriorityRangeIsTheServers) {
  EXPECT_EQ(BuildOne("send", {"--topic=t", "--msg=m", "--priority=10"}).params.back(),
            std::make_pair(std::string("priority"), std::string("10")));
  EXPECT_EQ(BuildOne("send", {"--topic=t", "--msg=m", "--priority", "-1"}).params.back(),
            std::make_pair(std::string("priority"), std::string("-1")));
  EXPECT_NE(BuildError("send", {"--topic=t", "--msg=m", "--priority=high"})
                .find("option '--priority': 'high' is not a whole number"),
            std::string::npos);
  EXPECT_NE(BuildError("send", {"--topic=t", "--msg=m", "--trigger-time=-5"})
                .find("option '--trigger-time'"),
            std::string::npos);
  EXPECT_NE(BuildError("send", {"--topic=t", "--msg=m", "--count-trigger=-1"})
                .find("option '--count-trigger'"),
            std::string::npos);
}

TEST(SendBatchTest, LinesBecomeOneJsonBody) {
  TempInput in("{\"msg\":\"a\",\"delayMillis\":0}\n\n  \r\n{\"msg\":\"b\",\"priority\":9}\r\n");
  Request r = BuildOne("send-batch", {"--topic=or\"ders", "--file=" + in.path()});
  EXPECT_EQ(r.op, "sendMsgBatch");
  EXPECT_EQ(r.method, Request::Method::kPost);
  EXPECT_EQ(r.json,
            "{\"topic\":\"or\\\"ders\",\"msgs\":[{\"msg\":\"a\",\"delayMillis\":0},"
            "{\"msg\":\"b\",\"priority\":9}]}");
  EXPECT_EQ(r.lines, (std::vector<int64_t>{1, 4}));
  EXPECT_TRUE(J(r.json).is_object());
}

TEST(SendBatchTest, SplitsIntoRequestsOfAtMostAThousand) {
  std::string text;
  for (int i = 0; i < 2500; ++i) text += "{\"msg\":\"m" + std::to_string(i) + "\"}\n";
  TempInput in(text);
  Result<std::vector<Request>> r = Build("send-batch", {"--topic=t", "--file", in.path()});
  ASSERT_TRUE(r.has_value()) << r.error().message();
  ASSERT_EQ(r->size(), 3u);
  size_t sizes[] = {1000, 1000, 500};
  for (size_t i = 0; i < 3; ++i) {
    const Request& part = (*r)[i];
    EXPECT_EQ(J(part.json)["msgs"].items().size(), sizes[i]);
    ASSERT_EQ(part.lines.size(), sizes[i]);
    EXPECT_EQ(part.lines.front(), static_cast<int64_t>(i * 1000 + 1));
    EXPECT_EQ(J(part.json)["msgs"].items().front()["msg"].AsString(),
              "m" + std::to_string(i * 1000));
  }
  EXPECT_EQ((*r)[2].lines.back(), 2500);
}

TEST(SendBatchTest, ALineMayNameTheBatchsTopic) {
  TempInput in("{\"topic\":\"t\",\"msg\":\"a\"}\n");
  EXPECT_EQ(BuildOne("send-batch", {"--topic=t", "--file=" + in.path()}).json,
            R"({"topic":"t","msgs":[{"topic":"t","msg":"a"}]})");
}

TEST(SendBatchTest, BadLinesAreUsageErrorsNamingTheLine) {
  struct Case {
    std::string text;
    std::string mentions;
  };
  for (const Case& c : std::vector<Case>{
           {"{\"msg\":\"a\"}\n{\"msg\":\n", "line 2: not JSON"},
           {"{\"msg\":\"a\"}\n\n[1,2]\n", "line 3: not a JSON object"},
           {"\"just a string\"", "line 1: not a JSON object"},
           {"{\"msg\":\"a\"} trailing", "line 1: not JSON"},
           {"{\"msg\":\"a\"}\n{\"topic\":\"other\",\"msg\":\"a\"}", "line 2: has another topic"},
           {"\n  \n", "no messages in '"},
           {"", "no messages in '"},
       }) {
    TempInput in(c.text);
    std::string err = BuildError("send-batch", {"--topic=t", "--file=" + in.path()});
    EXPECT_NE(err.find(c.mentions), std::string::npos) << c.text << " -> " << err;
  }
  EXPECT_NE(BuildError("send-batch", {"--topic=t", "--file=/nonexistent/x.jsonl"})
                .find("--file: cannot open '/nonexistent/x.jsonl'"),
            std::string::npos);
}

TEST(SendBatchTest, RendersEachLinesResult) {
  Request sent{.op = "sendMsgBatch", .lines = {3, 7, 8}};
  client::Json answer =
      J(R"({"code":200,"msg":"success","results":[)"
        R"({"code":200,"msg":"success","delayMsg":{"topic":"t","msgId":"a","status":1,)"
        R"("triggerTime":1000,"expireTime":2000,"priority":4}},)"
        R"({"code":400,"msg":"msgs[1]: priority must be 0..9"},)"
        R"({"code":200,"msg":"success","existing":true,"delayMsg":{"topic":"t","msgId":"b",)"
        R"("status":3}}]})");
  EXPECT_EQ(Cmd("send-batch").render(answer, sent, Args("send-batch", {"--topic=t"})),
            "line 3: sent a: WAITING, triggers at 1970-01-01T00:00:01.000Z, expires at "
            "1970-01-01T00:00:02.000Z, priority 4\n"
            "line 7: not sent: priority must be 0..9 (code 400)\n"
            "line 8: not sent: b is already in the topic (CONSUMING); nothing was stored\n");
  EXPECT_EQ(Cmd("send-batch").failed_items(answer), 1);
}

TEST(AckBatchTest, IdsFromArgumentsBecomeAckMsgBatch) {
  Request r = BuildOne("ack", {"--topic=t", "--batch", "a", "b\"c"});
  EXPECT_EQ(r.op, "ackMsgBatch");
  EXPECT_EQ(r.json, R"({"topic":"t","ack":["a","b\"c"]})");
  r = BuildOne("ack", {"--topic=t", "--batch", "--nack", "--reason=db down", "a"});
  EXPECT_EQ(r.json, R"({"topic":"t","nack":["a"],"reason":"db down"})");
  r = BuildOne("nack", {"--topic=t", "--batch", "a", "b"});
  EXPECT_EQ(r.json, R"({"topic":"t","nack":["a","b"]})");
}

TEST(AckBatchTest, SplitsIntoRequestsOfAtMostAThousand) {
  std::vector<std::string> args = {"--topic=t", "--batch"};
  for (int i = 0; i < 2001; ++i) args.push_back("id" + std::to_string(i));
  Result<std::vector<Request>> r = Build("ack", args);
  ASSERT_TRUE(r.has_value()) << r.error().message();
  ASSERT_EQ(r->size(), 3u);
  EXPECT_EQ(J((*r)[0].json)["ack"].items().size(), 1000u);
  EXPECT_EQ(J((*r)[1].json)["ack"].items().front().AsString(), "id1000");
  EXPECT_EQ(J((*r)[2].json)["ack"].items().size(), 1u);
}

TEST(AckBatchTest, SingleNackCarriesTheReason) {
  Request r = BuildOne("nack", {"--topic=t", "--msg-id=a", "--reason=timeout"});
  EXPECT_EQ(r.op, "ackMsg");
  EXPECT_EQ(r.params, P({{"topic", "t"}, {"msgId", "a"}, {"ack", "false"}, {"reason", "timeout"}}));
  EXPECT_EQ(BuildOne("ack", {"--topic=t", "--msg-id=a", "--nack"}).params,
            P({{"topic", "t"}, {"msgId", "a"}, {"ack", "false"}}));
  EXPECT_EQ(BuildOne("ack", {"--topic=t", "--msg-id=a"}).params,
            P({{"topic", "t"}, {"msgId", "a"}, {"ack", "true"}}));
}

TEST(AckBatchTest, UsageErrors) {
  EXPECT_NE(BuildError("ack", {"--topic=t"}).find("missing required option '--msg-id'"),
            std::string::npos);
  EXPECT_NE(BuildError("ack", {"--topic=t", "a", "b"}).find("unexpected argument 'a'"),
            std::string::npos);
  EXPECT_NE(BuildError("ack", {"--topic=t", "--batch", "--msg-id=a", "b"}).find("'--msg-id'"),
            std::string::npos);
  EXPECT_NE(BuildError("ack", {"--topic=t", "--msg-id=a", "--reason=x"}).find("'--reason'"),
            std::string::npos);
  EXPECT_FALSE(ParseArgs(Cmd("nack").spec, {"--topic=t", "--batch", "--nack"}).has_value());
}

TEST(AckBatchTest, RendersEachIdsResult) {
  client::Json answer =
      J(R"({"code":200,"msg":"success","results":[{"msgId":"a","ack":false,"code":200,)"
        R"("msg":"success"},{"msgId":"b","ack":false,"code":404,"msg":"message 'b' not found"}]})");
  Request sent{.op = "ackMsgBatch"};
  EXPECT_EQ(Cmd("ack").render(answer, sent, Args("ack", {"--topic=t", "--batch", "--nack"})),
            "nacked a in topic t\n"
            "not nacked b: message 'b' not found (code 404)\n");
  EXPECT_EQ(Cmd("ack").failed_items(answer), 1);
}

TEST(UpdateTest, OptionsBecomeParams) {
  Request r = BuildOne("update", {"--topic=t", "--msg-id=a", "--trigger-time=5000", "--msg=new",
                                  "--ttl=2h", "--max-retry=0", "--priority=3"});
  EXPECT_EQ(r.op, "updateMsg");
  EXPECT_EQ(r.params, P({{"topic", "t"},
                         {"msgId", "a"},
                         {"triggerTime", "5000"},
                         {"ttlMillis", "7200000"},
                         {"maxRetry", "0"},
                         {"priority", "3"},
                         {"msg", "new"}}));
  EXPECT_EQ(BuildOne("update", {"--topic=t", "--msg-id=a", "--delay=0"}).params,
            P({{"topic", "t"}, {"msgId", "a"}, {"delayMillis", "0"}}));
  EXPECT_NE(BuildError("update", {"--topic=t", "--msg-id=a"}).find("nothing to update"),
            std::string::npos);
}

TEST(UpdateTest, TriggerNowAsksForTheServersNow) {
  Request r = BuildOne("trigger-now", {"--topic=t", "--msg-id=a"});
  EXPECT_EQ(r.op, "updateMsg");
  EXPECT_EQ(r.params, P({{"topic", "t"}, {"msgId", "a"}, {"delayMillis", "0"}}));
}

TEST(TouchCountTest, OptionsBecomeParams) {
  EXPECT_EQ(BuildOne("touch", {"--topic=t", "--msg-id=a", "--ack-timeout=2m"}).params,
            P({{"topic", "t"}, {"msgId", "a"}, {"ackTimeoutMillis", "120000"}}));
  EXPECT_EQ(BuildOne("touch", {"--topic=t", "--msg-id=a"}).params,
            P({{"topic", "t"}, {"msgId", "a"}}));
  EXPECT_NE(
      BuildError("touch", {"--topic=t", "--msg-id=a", "--ack-timeout=0"}).find("'--ack-timeout'"),
      std::string::npos);
  Request c = BuildOne("count", {"--topic=t", "--msg-id=a", "--count=3"});
  EXPECT_EQ(c.op, "countMsg");
  EXPECT_EQ(c.params, P({{"topic", "t"}, {"msgId", "a"}, {"count", "3"}}));
  EXPECT_NE(BuildError("count", {"--topic=t", "--msg-id=a", "--count=0"}).find("'--count'"),
            std::string::npos);
}

TEST(TouchCountTest, Renders) {
  client::Json answer =
      J(R"({"code":200,"msg":"success","delayMsg":{"topic":"t","msgId":"a","status":2,)"
        R"("triggerTime":0,"expireTime":1000,"countTrigger":3,"count":3}})");
  EXPECT_EQ(Cmd("count").render(answer, Request{}, Args("count", {"--topic=t", "--msg-id=a"})),
            "counted a in topic t: READY, triggers at 1970-01-01T00:00:00.000Z, expires at "
            "1970-01-01T00:00:01.000Z, count 3 of 3\n");
  client::Json touched =
      J(R"({"code":200,"msg":"success","delayMsg":{"topic":"t","msgId":"a","status":3}})");
  EXPECT_EQ(Cmd("touch").render(touched, Request{},
                                Args("touch", {"--topic=t", "--msg-id=a", "--ack-timeout=2m"})),
            "touched a in topic t: CONSUMING, to be acked within 2m from now\n");
}

TEST(TopicConfigTest, VerbsBecomeTheirRequests) {
  Request get = BuildOne("topic-config", {"get", "--topic=t"});
  EXPECT_EQ(get.method, Request::Method::kGet);
  EXPECT_EQ(get.op, "getTopicConfig");
  EXPECT_EQ(get.params, P({{"topic", "t"}}));
  Request set = BuildOne("topic-config",
                         {"set", "--topic=t", "--capacity=1000", "--ttl-millis=1h", "--max-retry=3",
                          "--ack-timeout-millis=700", "--retry-interval-millis=5s",
                          "--dead-letter-topic=t.dlq", "--paused=false"});
  EXPECT_EQ(set.method, Request::Method::kPost);
  EXPECT_EQ(set.op, "setTopicConfig");
  EXPECT_EQ(set.params, P({{"topic", "t"},
                           {"capacity", "1000"},
                           {"ttlMillis", "3600000"},
                           {"maxRetry", "3"},
                           {"ackTimeoutMillis", "700"},
                           {"retryIntervalMillis", "5000"},
                           {"deadLetterTopic", "t.dlq"},
                           {"paused", "false"}}));
  EXPECT_EQ(BuildOne("topic-config", {"set", "--topic=t", "--dead-letter-topic="}).params,
            P({{"topic", "t"}, {"deadLetterTopic", ""}}));
  Request del = BuildOne("topic-config", {"delete", "--topic=t"});
  EXPECT_EQ(del.op, "deleteTopicConfig");
  EXPECT_EQ(del.params, P({{"topic", "t"}}));
}

TEST(TopicConfigTest, UsageErrorsNameTheOption) {
  EXPECT_NE(BuildError("topic-config", {"--topic=t"}).find("give one of get, set, delete"),
            std::string::npos);
  EXPECT_NE(BuildError("topic-config", {"show", "--topic=t"}).find("give one of get, set, delete"),
            std::string::npos);
  EXPECT_NE(BuildError("topic-config", {"set", "--topic=t"}).find("at least one of --capacity"),
            std::string::npos);
  EXPECT_NE(BuildError("topic-config", {"get", "--topic=t", "--capacity=5"})
                .find("--capacity is for topic-config set, not get"),
            std::string::npos);
  EXPECT_NE(BuildError("topic-config", {"set", "--topic=t", "--capacity=-1"}).find("'--capacity'"),
            std::string::npos);
  EXPECT_NE(
      BuildError("topic-config", {"set", "--topic=t", "--ttl-millis=soon"}).find("'--ttl-millis'"),
      std::string::npos);
  EXPECT_NE(BuildError("topic-config", {"set", "--topic=t", "--paused=maybe"})
                .find("--paused must be true or false"),
            std::string::npos);
}

TEST(TopicConfigTest, RendersEverySettingWithItsLayer) {
  client::Json answer =
      J(R"({"code":200,"msg":"success","topicConfig":{"topic":"t","capacity":0,"ttlMillis":5000,)"
        R"("maxRetry":10,"ackTimeoutMillis":30000,"retryIntervalMillis":0,"deadLetterTopic":"",)"
        R"("paused":true,"sources":{"capacity":"server","ttlMillis":"file","maxRetry":"server",)"
        R"("ackTimeoutMillis":"server","retryIntervalMillis":"server","deadLetterTopic":"server",)"
        R"("paused":"topic"}}})");
  const std::string out = Cmd("topic-config")
                              .render(answer, Request{.op = "getTopicConfig"},
                                      Args("topic-config", {"get", "--topic=t"}));
  EXPECT_EQ(out.rfind("topic t\nSETTING", 0), 0u) << out;
  for (const char* want : {"capacity", "0 (unlimited)", "ttlMillis", "5000", "file",
                           "deadLetterTopic", "(none)", "paused", "true", "topic"}) {
    EXPECT_NE(out.find(want), std::string::npos) << want << "\n" << out;
  }
  EXPECT_EQ(Cmd("topic-config")
                .render(J(R"({"code":200,"msg":"success"})"),
                        Request{.op = "deleteTopicConfig", .params = {{"topic", "t"}}},
                        Args("topic-config", {"delete", "--topic=t"})),
            "topic t: stored configuration deleted (the config file's and the server's defaults "
            "apply)\n");
  EXPECT_EQ(Cmd("pause").render(answer, Request{}, Args("pause", {"--topic=t"})),
            "topic t paused: sends are stored, pulls get nothing\n");
}

TEST(PurgeRedriveTest, OptionsBecomeParamsAndCountsRead) {
  Request pause = BuildOne("pause", {"--topic=t"});
  EXPECT_EQ(pause.op, "pauseTopic");
  EXPECT_EQ(BuildOne("resume", {"--topic=t"}).op, "resumeTopic");
  Request purge = BuildOne("purge", {"--topic=t", "--status=2"});
  EXPECT_EQ(purge.op, "purgeTopic");
  EXPECT_EQ(purge.params, P({{"topic", "t"}, {"status", "2"}}));
  EXPECT_NE(BuildError("purge", {"--topic=t", "--status=4"}).find("'--status'"), std::string::npos);
  Request redrive =
      BuildOne("redrive", {"--topic=dlq", "--msg-id=a", "--limit=5", "--delay-millis=2s"});
  EXPECT_EQ(redrive.op, "redriveMsg");
  EXPECT_EQ(redrive.params,
            P({{"topic", "dlq"}, {"msgId", "a"}, {"limit", "5"}, {"delayMillis", "2000"}}));
  EXPECT_NE(BuildError("redrive", {"--topic=dlq", "--limit=0"}).find("'--limit'"),
            std::string::npos);
  EXPECT_EQ(Cmd("purge").render(J(R"({"code":200,"msg":"success","purged":3})"), purge,
                                Args("purge", {"--topic=t"})),
            "purged 3 messages from topic t\n");
  EXPECT_EQ(Cmd("redrive").render(J(R"({"code":200,"msg":"success","redriven":1})"), redrive,
                                  Args("redrive", {"--topic=dlq"})),
            "redriven 1 message from dead-letter topic dlq\n");
}

TEST(ListTest, OptionsBecomeQuery) {
  Request r = BuildOne("list", {"--topic=t", "--status=ready", "--limit=5", "--cursor=abc"});
  EXPECT_EQ(r.method, Request::Method::kGet);
  EXPECT_EQ(r.op, "listMsg");
  EXPECT_EQ(r.params, P({{"topic", "t"}, {"status", "2"}, {"limit", "5"}, {"cursor", "abc"}}));
  EXPECT_EQ(BuildOne("list", {"--topic=t", "--status=RETRY_EXHAUST"}).params,
            P({{"topic", "t"}, {"status", "6"}}));
  EXPECT_EQ(BuildOne("list", {"--topic=t", "--status=9"}).params,  // the server says 1..7
            P({{"topic", "t"}, {"status", "9"}}));
  EXPECT_EQ(BuildOne("list", {"--topic=t"}).params, P({{"topic", "t"}}));
  EXPECT_EQ(BuildOne("peek", {"--topic=t", "--limit=3"}).params,
            P({{"topic", "t"}, {"status", "2"}, {"limit", "3"}}));
  EXPECT_NE(BuildError("list", {"--topic=t", "--status=done"}).find("'done' is not a status"),
            std::string::npos);
  EXPECT_NE(BuildError("list", {"--topic=t", "--limit=0"}).find("'--limit'"), std::string::npos);
  EXPECT_FALSE(ParseArgs(Cmd("peek").spec, {"--topic=t", "--status=1"}).has_value());
}

TEST(ListTest, AllFollowsNextCursorToTheEnd) {
  const Command& list = Cmd("list");
  Request first = BuildOne("list", {"--topic=t", "--all", "--cursor=c0"});
  std::optional<Request> next = list.next(first, J(R"({"delayMsgList":[],"nextCursor":"c1"})"),
                                          Args("list", {"--topic=t", "--all", "--cursor=c0"}));
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(next->params, P({{"topic", "t"}, {"cursor", "c1"}}));
  EXPECT_FALSE(list.next(*next, J(R"({"delayMsgList":[],"nextCursor":null})"),
                         Args("list", {"--topic=t", "--all"}))
                   .has_value());
  // Without --all, one page.
  EXPECT_FALSE(
      list.next(first, J(R"({"delayMsgList":[],"nextCursor":"c1"})"), Args("list", {"--topic=t"}))
          .has_value());
}

TEST(ListTest, RendersBlocksAndTheNextCursor) {
  const Command& list = Cmd("list");
  client::Json page =
      J(R"({"code":200,"msg":"success","nextCursor":"c1","delayMsgList":[)"
        R"({"topic":"t","msgId":"a","msg":"x","status":2,"maxRetry":0,"retry":0},)"
        R"({"topic":"t","msgId":"b","msg":"y","status":2,"maxRetry":0,"retry":0,"priority":9}]})");
  ParsedArgs args = Args("list", {"--topic=t"});
  std::string out = list.render(page, BuildOne("list", {"--topic=t"}), args);
  EXPECT_NE(out.find("msgId        a\n"), std::string::npos) << out;
  EXPECT_NE(out.find("\n\nmsgId        b\n"), std::string::npos) << out;
  EXPECT_NE(out.find("priority     9\n"), std::string::npos) << out;
  EXPECT_TRUE(out.ends_with("\n(more: the next page is --cursor=c1, or give --all)\n")) << out;

  client::Json empty = J(R"({"code":200,"msg":"success","nextCursor":null,"delayMsgList":[]})");
  EXPECT_EQ(list.render(empty, BuildOne("list", {"--topic=t"}), args),
            "no message waiting, ready or being consumed in topic t\n");
  EXPECT_EQ(list.render(empty, BuildOne("list", {"--topic=t", "--status=4"}),
                        Args("list", {"--topic=t", "--status=4"})),
            "no message with status CONSUME_OK (4) in topic t\n");
  EXPECT_EQ(Cmd("peek").render(empty, BuildOne("peek", {"--topic=t"}), Args("peek", {"--topic=t"})),
            "no message ready in topic t\n");

  // --all: a later page continues the blocks; an empty later page adds nothing.
  ParsedArgs all = Args("list", {"--topic=t", "--all"});
  Request later = BuildOne("list", {"--topic=t", "--cursor=c1"});
  out = list.render(page, later, all);
  EXPECT_TRUE(out.starts_with("\nmsgId        a\n")) << out;
  EXPECT_EQ(out.find("(more"), std::string::npos) << out;
  EXPECT_EQ(list.render(empty, later, all), "");
}

TEST(InputTest, NonBlankLinesKeepTheirNumbers) {
  std::vector<InputLine> lines = NonBlankLines("a\n\n \t\r\nb c\r\n\nd");
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].number, 1);
  EXPECT_EQ(lines[0].text, "a");
  EXPECT_EQ(lines[1].number, 4);
  EXPECT_EQ(lines[1].text, "b c");
  EXPECT_EQ(lines[2].number, 6);
  EXPECT_EQ(lines[2].text, "d");
  EXPECT_TRUE(NonBlankLines("").empty());
}

TEST(CommandsTest, BackupPostsTheTargetToTheAdminPathAndTellsWhereAndHowMuch) {
  Request backup = BuildOne("backup", {"--to=/var/backups/cq"});
  EXPECT_EQ(backup.op, "/chronoq/admin/backup");
  EXPECT_EQ(backup.params, P({{"to", "/var/backups/cq"}}));
  EXPECT_GT(backup.extra_wait.count(), 0) << "a large store takes longer than --timeout";
  EXPECT_EQ(Cmd("backup").render(
                J(R"({"code":200,"msg":"success","dir":"/var/backups/cq","bytes":3145728,)"
                  R"("files":9,"millis":412})"),
                backup, Args("backup", {"--to=/var/backups/cq"})),
            "backup written to /var/backups/cq: 3.0 MiB in 9 files, 412 ms\n");
}

TEST(InputTest, JsonStringEscapes) {
  EXPECT_EQ(JsonString("plain é"), "\"plain é\"");
  EXPECT_EQ(JsonString(std::string("q\"b\\n\nt\tc\x01", 10)), "\"q\\\"b\\\\n\\nt\\tc\\u0001\"");
  Result<client::Json> back = client::Json::Parse(JsonString(std::string("x\x1f\"y", 4)));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->AsString(), std::string("x\x1f\"y", 4));
}

}  // namespace
}  // namespace chronoq::cli
