// The chronoq binary itself: flags (API.md section 7), refusing bad configuration with exit code
// 2, port 0, and shutdown on SIGTERM / SIGINT (parked long polls answered, exit 0 in a second).
#include <regex>

#include "tests/integration/it_util.h"

namespace chronoq::it {
namespace {

using namespace std::chrono_literals;
using testutil::ExitResult;
using testutil::RunBinary;

// Runs `chronoq serve <flags>` expecting it to refuse the configuration.
ExitResult ExpectRefused(const std::vector<std::string>& flags) {
  std::vector<std::string> args = {"serve", "--listen=127.0.0.1:0"};
  args.insert(args.end(), flags.begin(), flags.end());
  ExitResult r = RunBinary(args, 5s);
  EXPECT_FALSE(r.timed_out) << "the server started instead of refusing; stdout: " << r.out;
  EXPECT_EQ(r.exit_code, 2) << "stderr: " << r.err;
  EXPECT_EQ(r.out.find("listening"), std::string::npos) << r.out;
  return r;
}

void ExpectMentions(const ExitResult& r, std::string_view what) {
  EXPECT_NE(r.err.find(what), std::string::npos) << "stderr should name '" << what << "':\n"
                                                 << r.err;
}

TEST(BinaryFlagsTest, UnknownFlagExits2NamingIt) {
  ExitResult r = ExpectRefused({"--bogus-flag=1"});
  ExpectMentions(r, "--bogus-flag");
  r = ExpectRefused({"--ttl_millis=5"});  // underscores are not the key
  ExpectMentions(r, "ttl_millis");
  r = ExpectRefused({"positional"});
  ExpectMentions(r, "positional");
}

TEST(BinaryFlagsTest, MalformedValuesExit2NamingTheFlag) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--ttl-millis=abc", "ttl-millis"},
      {"--ttl-millis=", "ttl-millis"},
      {"--max-retry=1.5", "max-retry"},
      {"--ack-timeout-millis=0x10", "ack-timeout-millis"},
      {"--http-threads=two", "http-threads"},
      {"--monitor-interval-seconds=1e3", "monitor-interval-seconds"},
      {"--max-body-bytes=99999999999999999999", "max-body-bytes"},
      {"--test-clock=maybe", "test-clock"},
      {"--listen=nowhere", "listen"},
      {"--listen=127.0.0.1:70000", "listen"},
  };
  for (const auto& [flag, name] : cases) {
    SCOPED_TRACE(flag);
    ExpectMentions(ExpectRefused({flag}), name);
  }
}

TEST(BinaryFlagsTest, OutOfRangeValuesExit2NamingTheKey) {
  for (const auto& [flag, name] : std::vector<std::pair<std::string, std::string>>{
           {"--ttl-millis=0", "ttl-millis"},
           {"--ack-timeout-millis=-1", "ack-timeout-millis"},
           {"--max-retry=-1", "max-retry"},
           {"--long-polling-timeout-millis=0", "long-polling-timeout-millis"},
           {"--max-pull-batch=0", "max-pull-batch"},
           {"--http-threads=0", "http-threads"},
           {"--log-level=loud", "log-level"},
           {"--namespace=", "namespace"}}) {
    SCOPED_TRACE(flag);
    ExpectMentions(ExpectRefused({flag}), name);
  }
}

TEST(BinaryFlagsTest, EveryProblemIsListed) {
  ExitResult r = ExpectRefused({"--bogus=1", "--ttl-millis=abc", "--max-retry=-5"});
  ExpectMentions(r, "--bogus");
  ExpectMentions(r, "ttl-millis");
  ExpectMentions(r, "max-retry");
}

TEST(BinaryFlagsTest, UnknownStorageIsRefusedClearly) {
  ExitResult r = ExpectRefused({"--storage=unknown"});
  ExpectMentions(r, "storage");
  ExpectMentions(r, "unknown");
  ExpectMentions(r, "memory");  // says what is available
}

TEST(BinaryFlagsTest, HelpListsTheSettings) {
  ExitResult r = RunBinary({"serve", "--help"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  for (const char* key :
       {"ttl-millis", "max-retry", "ack-timeout-millis", "end-life-msg-expire-millis",
        "long-polling-timeout-millis", "monitor-interval-seconds", "topic-inactive-millis",
        "namespace", "max-topic-bytes", "max-msg-id-bytes", "max-msg-bytes", "max-body-bytes",
        "max-header-bytes", "max-pull-batch", "max-long-polling-timeout-millis", "max-delay-millis",
        "storage", "listen"}) {
    EXPECT_NE(r.out.find(std::string("--") + key), std::string::npos) << key;
  }
  EXPECT_NE(r.out.find("0.0.0.0:8080"), std::string::npos) << "the default listen address";
}

TEST(BinaryFlagsTest, UnknownCommandExits2) {
  EXPECT_EQ(RunBinary({"frobnicate"}).exit_code, 2);
  EXPECT_EQ(RunBinary({}).exit_code, 2);
}

TEST(BinaryTest, PortZeroPrintsTheRealPort) {
  ServerProcess s;
  Status st = s.Start({"--log-level=warn"});
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_TRUE(std::regex_match(s.listening_line(),
                               std::regex(R"(chronoq listening on 127\.0\.0\.1:[1-9][0-9]*)")))
      << s.listening_line();
  EXPECT_NE(s.port(), 0);
  ApiClient c(s.endpoint());
  EXPECT_EQ(c.Get("/camellia/health/check").http.body, R"({"code":200})");
  EXPECT_EQ(s.Stop(SIGTERM), 0);
}

TEST(BinaryTest, ABusyPortIsReportedAndTheServerExits) {
  ServerProcess a;
  ASSERT_TRUE(a.Start({"--log-level=warn"}).ok());
  // In memory: the default ./data is shared by the variants of this test running at once.
  ExitResult r = RunBinary(
      {"serve", "--storage=memory", "--listen=127.0.0.1:" + std::to_string(a.port())}, 5s);
  EXPECT_FALSE(r.timed_out);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find(std::to_string(a.port())), std::string::npos) << r.err;
}

TEST(BinaryTest, FlagsSetTheServerDefaults) {
  ServerProcess s;
  Status st = s.Start({"--test-clock", "--log-level=warn", "--ttl-millis", "4321", "--max-retry=3",
                       "--namespace=itns", "--http-threads=1"});
  ASSERT_TRUE(st.ok()) << st.message();
  ApiClient c(s.endpoint());
  ApiResponse r = c.Queue("sendMsg", {{"topic", "t"}, {"msg", "m"}, {"delayMillis", "100"}});
  ASSERT_EQ(r.code(), 200) << r.Describe();
  EXPECT_EQ(Int(r.at("delayMsg").at("expireTime")) - Int(r.at("delayMsg").at("triggerTime")), 4321);
  EXPECT_EQ(Int(r.at("delayMsg").at("maxRetry")), 3);
}

TEST(BinaryTest, EnvironmentVariablesSetTheServerDefaults) {
  // API.md section 7: each key is settable as an environment variable (DESIGN.md: CHRONOQ_<KEY>);
  // flags win over the environment.
  ServerProcess s;
  Status st = s.Start({"--test-clock", "--log-level=warn", "--max-retry=7"}, 10s,
                      {"CHRONOQ_TTL_MILLIS=4321", "CHRONOQ_MAX_RETRY=3"});
  ASSERT_TRUE(st.ok()) << st.message();
  ApiClient c(s.endpoint());
  ApiResponse r = c.Queue("sendMsg", {{"topic", "t"}, {"msg", "m"}, {"delayMillis", "0"}});
  ASSERT_EQ(r.code(), 200) << r.Describe();
  EXPECT_EQ(Int(r.at("delayMsg").at("expireTime")) - Int(r.at("delayMsg").at("triggerTime")), 4321)
      << "CHRONOQ_TTL_MILLIS was not applied";
  EXPECT_EQ(Int(r.at("delayMsg").at("maxRetry")), 7) << "the flag should win over the environment";
}

TEST(BinaryTest, MalformedEnvironmentVariableExits2NamingIt) {
  ExitResult r = RunBinary({"serve", "--listen=127.0.0.1:0"}, 5s, {"CHRONOQ_TTL_MILLIS=soon"});
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  ExpectMentions(r, "CHRONOQ_TTL_MILLIS");
}

TEST(BinaryTest, AdvanceClockExistsOnlyInTestMode) {
  ServerProcess s;
  ASSERT_TRUE(s.Start({"--log-level=warn"}).ok());
  ApiClient c(s.endpoint());
  EXPECT_EQ(c.Request("POST", "/chronoq/test/advanceClock?millis=1000").status, 404);
  EXPECT_EQ(c.Request("GET", "/chronoq/test/longPolls").status, 404);
}

TEST(BinaryShutdownTest, SigtermAnswersParkedLongPollsAndExitsZeroWithinASecond) {
  ServerProcess s;
  ASSERT_TRUE(s.Start({"--test-clock", "--log-level=warn"}).ok());
  ApiClient api(s.endpoint());
  std::vector<std::unique_ptr<ApiClient>> polls;
  for (int i = 0; i < 3; ++i) {
    polls.push_back(std::make_unique<ApiClient>(s.endpoint()));
    ASSERT_TRUE(polls.back()
                    ->BeginQueue("longPollingMsg", {{"topic", "t" + std::to_string(i % 2)},
                                                    {"longPollingTimeoutMillis", "120000"}})
                    .ok());
  }
  ASSERT_TRUE(api.WaitParked(3));
  // An idle keep-alive connection must not hold the shutdown up either.
  ASSERT_EQ(api.Get("/camellia/health/check").status, 200);

  auto start = std::chrono::steady_clock::now();
  int rc = s.Stop(SIGTERM, 5s);
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(rc, 0) << s.Stderr();
  EXPECT_LT(took, 1s) << "shutdown took "
                      << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
                      << " ms";
  for (auto& p : polls) {
    ApiResponse r = p->Finish(2s);
    EXPECT_EQ(r.status, 200) << r.Describe();
    EXPECT_EQ(r.http.body, R"({"code":200,"msg":"success","delayMsgList":[]})");
  }
}

TEST(BinaryShutdownTest, SigintExitsZero) {
  ServerProcess s;
  ASSERT_TRUE(s.Start({"--log-level=warn"}).ok());
  ApiClient c(s.endpoint());
  ASSERT_EQ(c.Get("/camellia/health/check").status, 200);
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(s.Stop(SIGINT, 5s), 0) << s.Stderr();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);
}

TEST(BinaryShutdownTest, ARequestInFlightIsAnsweredOrRefusedNeverLeftHanging) {
  ServerProcess s;
  ASSERT_TRUE(s.Start({"--log-level=warn"}).ok());
  // A connection with half a request sent: shutdown must not wait for the rest.
  testutil::RawConnection half;
  ASSERT_TRUE(half.Connect(s.endpoint()).ok());
  ASSERT_TRUE(half.Send("POST /camellia/delayQueue/sendMsg HTTP/1.1\r\nHost: x\r\n").ok());
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(s.Stop(SIGTERM, 5s), 0) << s.Stderr();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);
  EXPECT_TRUE(half.WaitClosed(2s));
}

}  // namespace
}  // namespace chronoq::it
