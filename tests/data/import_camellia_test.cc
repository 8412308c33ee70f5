// `chronoq import-camellia` through the real binary (issue 21, docs/operations.md "Switching from
// camellia-delay-queue"): a real redis-server filled exactly as camellia-delay-queue lays out its
// keys (API-EXTENSIONS.md section 8: several topics, all three queues, a message whose string is
// missing, one whose string is not JSON), imported into a chronoq server.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "tests/testutil/redis_servers.h"
#include "tests/testutil/server_harness.h"

namespace chronoq::data_test {
namespace {

namespace json = boost::json;
using testutil::ApiClient;
using testutil::ApiResponse;
using testutil::ExitResult;
using testutil::RunBinary;
using testutil::ServerProcess;

constexpr std::string_view kNs = "shop";
const std::string kPayload = "{\"orderId\":7,\"note\":\"caf\xc3\xa9 \\\"q\\\"\"} \xe2\x9c\x93";

class ImportCamelliaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    redis_ = testutil::SharedDeployment<testutil::RedisStandalone>();
    ASSERT_NE(redis_, nullptr);
    Status s = server_.Start({"--storage=memory", "--test-clock"});
    ASSERT_TRUE(s.ok()) << s.ToString();
    now_ = ApiClient(server_.endpoint()).Now();
  }

  void Redis(const std::vector<std::string>& args) {
    Result<testutil::RedisReply> r = testutil::RedisCommandOnce(redis_->port(), args);
    ASSERT_TRUE(r.has_value()) << r.error().ToString();
    ASSERT_FALSE(r->is_error()) << r->ToString();
  }
  std::string Key(std::string_view kind, std::string_view topic) {
    return "camellia_delay_queue_" + std::string(kind) + "|{|" + std::string(kNs) + "|" +
           std::string(topic) + "|}";
  }
  // camellia's message string (API.md section 3).
  void Msg(const std::string& topic, const std::string& id, int64_t trigger, int retry,
           int status) {
    json::object o{{"topic", topic},         {"msgId", id},
                   {"msg", kPayload + id},   {"produceTime", now_ - 1'000},
                   {"triggerTime", trigger}, {"expireTime", now_ + 3'600'000},
                   {"maxRetry", 3},          {"retry", retry},
                   {"status", status}};
    Redis({"SET", "camellia_delay_queue_msg|" + std::string(kNs) + "|" + topic + "|" + id,
           json::serialize(o)});
  }
  void FillCamellia() {
    Redis({"DEL", Key("ready", "orders"), Key("ready", "jobs")});
    Redis({"ZADD", "camellia_delay_queue_topics|" + std::string(kNs), "1", "orders", "2", "jobs"});
    // orders: two waiting (one without its string), two ready (one not JSON), one consuming.
    Redis({"ZADD", Key("waiting", "orders"), std::to_string(now_ + 60'000), "w1",
           std::to_string(now_ + 90'000), "missing"});
    Msg("orders", "w1", now_ + 60'000, 0, 1);
    Redis({"RPUSH", Key("ready", "orders"), "r1", "bad"});
    Msg("orders", "r1", now_ - 500, 1, 2);
    Redis({"SET", "camellia_delay_queue_msg|" + std::string(kNs) + "|orders|bad", "not json{"});
    Redis({"ZADD", Key("ack", "orders"), std::to_string(now_ + 30'000), "c1"});
    Msg("orders", "c1", now_ - 2'000, 1, 3);
    // jobs: one of each.
    Redis({"ZADD", Key("waiting", "jobs"), std::to_string(now_ + 5'000), "j1"});
    Msg("jobs", "j1", now_ + 5'000, 0, 1);
    Redis({"RPUSH", Key("ready", "jobs"), "j2"});
    Msg("jobs", "j2", now_ - 100, 0, 2);
    Redis({"ZADD", Key("ack", "jobs"), std::to_string(now_ + 10'000), "j3"});
    Msg("jobs", "j3", now_ - 100, 2, 3);
  }
  ExitResult Run(std::vector<std::string> more = {}) {
    std::vector<std::string> args = {
        "import-camellia", "--redis-url=redis://127.0.0.1:" + std::to_string(redis_->port()),
        "--namespace=" + std::string(kNs),
        "--server=http://127.0.0.1:" + std::to_string(server_.port())};
    args.insert(args.end(), more.begin(), more.end());
    return RunBinary(args, std::chrono::seconds(30));
  }
  ApiResponse Get(const std::string& topic, const std::string& id) {
    return ApiClient(server_.endpoint()).Queue("getMsg", {{"topic", topic}, {"msgId", id}});
  }

  testutil::RedisStandalone* redis_ = nullptr;
  ServerProcess server_;
  int64_t now_ = 0;
};

std::string Describe(const ExitResult& r) {
  return "exit " + std::to_string(r.exit_code) + "\nstdout:\n" + r.out + "\nstderr:\n" + r.err;
}

TEST_F(ImportCamelliaTest, CopiesEveryQueueAndReportsUnreadableStrings) {
  FillCamellia();
  // Dry run: says what it would do, changes nothing.
  ExitResult dry = Run({"--dry-run"});
  EXPECT_EQ(dry.exit_code, 1) << Describe(dry);
  EXPECT_NE(dry.out.find("would import orders/w1 (waiting): "), std::string::npos) << dry.out;
  EXPECT_NE(dry.out.find("would import orders/c1 (consuming): "), std::string::npos) << dry.out;
  EXPECT_NE(dry.out.find("dry run: would import 6 of 8 messages of 2 topics; 2 skipped"),
            std::string::npos)
      << dry.out;
  EXPECT_EQ(Get("orders", "w1").code(), 404);
  EXPECT_EQ(ApiClient(server_.endpoint())
                .Get("/camellia/delayQueue/getTopicInfoList")
                .at("data")
                .as_array()
                .size(),
            0u);

  ExitResult r = Run();
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_EQ(r.out,
            "imported 6, skipped 0 (already there), refused 0, unreadable 2 (string missing or not "
            "JSON), of 8 messages in 2 topics\n")
      << Describe(r);
  EXPECT_NE(r.err.find("orders/missing (waiting): skipped: its string "
                       "camellia_delay_queue_msg|shop|orders|missing is missing"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("orders/bad (ready): skipped: its string is not a JSON object"),
            std::string::npos)
      << r.err;

  struct Want {
    std::string topic, id;
    int status;
    int64_t trigger;
    int retry;
  };
  for (const Want& w :
       {Want{"orders", "w1", 1, now_ + 60'000, 0}, Want{"orders", "r1", 2, now_ - 500, 1},
        Want{"orders", "c1", 3, now_ - 2'000, 1}, Want{"jobs", "j1", 1, now_ + 5'000, 0},
        Want{"jobs", "j2", 2, now_ - 100, 0}, Want{"jobs", "j3", 3, now_ - 100, 2}}) {
    ApiResponse got = Get(w.topic, w.id);
    ASSERT_EQ(got.code(), 200) << w.id << " " << got.Describe();
    const json::value& m = got.at("delayMsg");
    EXPECT_EQ(m.at("status").as_int64(), w.status) << w.id;
    EXPECT_EQ(m.at("msg").as_string(), kPayload + w.id) << w.id;
    EXPECT_EQ(m.at("triggerTime").as_int64(), w.trigger) << w.id;
    EXPECT_EQ(m.at("produceTime").as_int64(), now_ - 1'000) << w.id;
    EXPECT_EQ(m.at("expireTime").as_int64(), now_ + 3'600'000) << w.id;
    EXPECT_EQ(m.at("maxRetry").as_int64(), 3) << w.id;
    EXPECT_EQ(m.at("retry").as_int64(), w.retry) << w.id;
  }
  EXPECT_EQ(Get("orders", "missing").code(), 404);
  EXPECT_EQ(Get("orders", "bad").code(), 404);

  // Twice: nothing changes.
  r = Run();
  EXPECT_NE(r.out.find("imported 0, skipped 6 (already there)"), std::string::npos) << Describe(r);

  // The consuming message comes back at camellia's ack deadline.
  ApiClient api(server_.endpoint());
  api.AdvanceClock(now_ + 30'000 - api.Now() - 1);
  ApiResponse early = api.Queue("pullMsg", {{"topic", "orders"}, {"batch", "10"}});
  for (const json::value& m : early.at("delayMsgList").as_array()) {
    EXPECT_NE(m.at("msgId").as_string(), "c1");
  }
  api.AdvanceClock(1);
  ApiResponse back = api.Queue("pullMsg", {{"topic", "orders"}, {"batch", "10"}});
  bool seen = false;
  for (const json::value& m : back.at("delayMsgList").as_array()) {
    if (m.at("msgId").as_string() == "c1") {
      seen = true;
      EXPECT_EQ(m.at("retry").as_int64(), 2);
    }
  }
  EXPECT_TRUE(seen) << back.Describe();
}

TEST_F(ImportCamelliaTest, OneTopicAndBadArguments) {
  FillCamellia();
  ExitResult r = Run({"--topic=jobs"});
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.out.find("imported 3, skipped 0"), std::string::npos) << Describe(r);
  EXPECT_EQ(Get("orders", "w1").code(), 404);
  ExitResult bad = RunBinary({"import-camellia", "--namespace=x", "--redis-url=http://nope"});
  EXPECT_EQ(bad.exit_code, 2) << Describe(bad);
  EXPECT_NE(bad.err.find("--redis-url"), std::string::npos) << bad.err;
  bad = RunBinary({"import-camellia", "--redis-url=redis://127.0.0.1:1"});
  EXPECT_EQ(bad.exit_code, 2) << Describe(bad);
  EXPECT_NE(bad.err.find("namespace"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace chronoq::data_test
