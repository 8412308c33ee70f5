// `chronoq serve --config=FILE`: the file, the environment and the flags together (file <
// environment < flags), an invalid configuration refused with exit code 2 and every problem of
// every source listed, and --print-config.
#include <unistd.h>

#include <fstream>

#include "tests/integration/it_util.h"
#include "tests/testutil/temp_dir.h"

namespace chronoq::it {
namespace {

using namespace std::chrono_literals;
using testutil::ExitResult;
using testutil::RunBinary;

class ConfigBinaryTest : public ::testing::Test {
 protected:
  // Writes `text` to a file of this test's directory; returns its path.
  std::string File(const std::string& name, const std::string& text) {
    std::string path = dir_.path() + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
  testutil::TempDir dir_;
};

// The value of `key` in --print-config output.
std::string Printed(const std::string& toml, const std::string& key) {
  size_t at = toml.find("\n" + key + " = ");
  if (at == std::string::npos) return "<absent>";
  at += key.size() + 4;
  return toml.substr(at, toml.find('\n', at) - at);
}

TEST_F(ConfigBinaryTest, TheFileSetsTheServerAndTheEnvironmentAndFlagsWin) {
  std::string conf = File("chronoq.toml", "ttl-millis = 4321\nmax-retry = 1\n");
  {
    ServerProcess s;
    Status st = s.Start({"--config=" + conf, "--log-level=warn"}, 10s, {"CHRONOQ_MAX_RETRY=2"});
    ASSERT_TRUE(st.ok()) << st.message();
    ApiClient c(s.endpoint());
    ApiResponse r = c.Queue("sendMsg", {{"topic", "t"}, {"msg", "m"}, {"delayMillis", "0"}});
    ASSERT_EQ(r.code(), 200) << r.Describe();
    const json::value& m = r.at("delayMsg");
    EXPECT_EQ(Int(m.at("expireTime")) - Int(m.at("triggerTime")), 4321) << "from the file";
    EXPECT_EQ(Int(m.at("maxRetry")), 2) << "the environment wins over the file";
  }
  ServerProcess s;
  Status st = s.Start({"--config", conf, "--max-retry=3", "--log-level=warn"}, 10s,
                      {"CHRONOQ_MAX_RETRY=2"});
  ASSERT_TRUE(st.ok()) << st.message();
  ApiResponse r = ApiClient(s.endpoint())
                      .Queue("sendMsg", {{"topic", "t"}, {"msg", "m"}, {"delayMillis", "0"}});
  EXPECT_EQ(Int(r.at("delayMsg").at("maxRetry")), 3) << "the flag wins over both";
}

TEST_F(ConfigBinaryTest, PrintConfigShowsTheEffectiveSettingsAndReadsBack) {
  std::string conf = File("c.toml",
                          "ttl-millis = 1111\nmax-retry = 1\nlong-polling-timeout-millis = 1111\n"
                          "namespace = \"from-file\"\n");
  ExitResult r = RunBinary(
      {"serve", "--config=" + conf, "--print-config", "--long-polling-timeout-millis=3333"}, 10s,
      {"CHRONOQ_MAX_RETRY=2", "CHRONOQ_LONG_POLLING_TIMEOUT_MILLIS=2222"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("listening"), std::string::npos) << "printing must not start a server";
  EXPECT_EQ(Printed(r.out, "ttl-millis"), "1111");
  EXPECT_EQ(Printed(r.out, "namespace"), "\"from-file\"");
  EXPECT_EQ(Printed(r.out, "max-retry"), "2");
  EXPECT_EQ(Printed(r.out, "long-polling-timeout-millis"), "3333");
  EXPECT_EQ(Printed(r.out, "listen"), "\"0.0.0.0:8080\"");  // a default
  for (const char* key : {"storage", "data-dir", "sync-writes", "log-format", "max-delay-millis"}) {
    EXPECT_NE(Printed(r.out, key), "<absent>") << key;
  }
  EXPECT_EQ(r.out.find("test-clock"), std::string::npos) << "test-only keys stay hidden";

  // Fed back as a file, the output means the same configuration.
  ExitResult again =
      RunBinary({"serve", "--config=" + File("printed.toml", r.out), "--print-config"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out, r.out);
}

TEST_F(ConfigBinaryTest, PrintConfigRedactsTheRedisPassword) {
  ExitResult r =
      RunBinary({"serve", "--storage=redis", "--redis-url=redis://app:TopSecret9@127.0.0.1:6379/1",
                 "--print-config"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Printed(r.out, "redis-url"), "\"redis://app:***@127.0.0.1:6379/1\"");
  EXPECT_EQ(r.out.find("TopSecret9"), std::string::npos) << r.out;
}

TEST_F(ConfigBinaryTest, AnInvalidConfigurationListsEveryProblemOfEverySource) {
  std::string conf = File("bad.toml",
                          "# a comment\n"
                          "ttl-millis = \"soon\"\n"
                          "max_retry = 3\n"
                          "http-threads = 0\n");
  for (bool print : {false, true}) {
    SCOPED_TRACE(print ? "--print-config" : "serve");
    std::vector<std::string> args = {"serve", "--listen=127.0.0.1:0", "--config=" + conf,
                                     "--bogus=1", "--ack-timeout-millis=-5"};
    if (print) args.push_back("--print-config");
    ExitResult r = RunBinary(args, 5s, {"CHRONOQ_SYNC_WRITES=maybe"});
    EXPECT_FALSE(r.timed_out) << "the server started instead of refusing";
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    for (const std::string& problem :
         {"config file " + conf + " line 2: ttl-millis must be an integer, got a string",
          "config file " + conf +
              " line 3: unknown setting 'max_retry' (did you mean 'max-retry'?)",
          std::string("environment variable CHRONOQ_SYNC_WRITES: sync-writes: 'maybe' is not a "
                      "boolean (true or false)"),
          std::string("unknown flag '--bogus'"),
          std::string("http-threads must be between 1 and 64, got 0"),
          std::string("ack-timeout-millis must be > 0, got -5")}) {
      EXPECT_NE(r.err.find("chronoq: " + problem + "\n"), std::string::npos)
          << "missing: " << problem << "\nstderr:\n"
          << r.err;
    }
  }
}

TEST_F(ConfigBinaryTest, ATomlSyntaxErrorIsRefusedWithItsLine) {
  std::string conf = File("syntax.toml", "ttl-millis = 5\nmax-retry = [1,\n");
  ExitResult r = RunBinary({"serve", "--listen=127.0.0.1:0", "--config=" + conf, "--nope"}, 5s);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("config file " + conf + " line "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("TOML syntax error"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("unknown flag '--nope'"), std::string::npos) << "flags are still checked";
}

TEST_F(ConfigBinaryTest, AnUnreadableFileIsRefused) {
  ExitResult r =
      RunBinary({"serve", "--listen=127.0.0.1:0", "--config=" + dir_.path() + "/none"}, 5s);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("none: cannot open it: No such file or directory"), std::string::npos)
      << r.err;
  std::string unreadable = File("secret.toml", "ttl-millis = 5\n");
  ::chmod(unreadable.c_str(), 0);
  if (::access(unreadable.c_str(), R_OK) != 0) {  // root reads it anyway
    r = RunBinary({"serve", "--listen=127.0.0.1:0", "--config=" + unreadable}, 5s);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("Permission denied"), std::string::npos) << r.err;
  }
  r = RunBinary({"serve", "--listen=127.0.0.1:0", "--config="}, 5s);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--config needs a file"), std::string::npos) << r.err;
}

TEST_F(ConfigBinaryTest, TheInstalledSampleMeansTheDefaults) {
  ExitResult sample =
      RunBinary({"serve", "--config=" + std::string(CQ_SOURCE_DIR) + "/deploy/chronoq.toml",
                 "--print-config"});
  ExitResult defaults = RunBinary({"serve", "--print-config"});
  ASSERT_EQ(sample.exit_code, 0) << sample.err;
  EXPECT_EQ(sample.out, defaults.out);
}

TEST_F(ConfigBinaryTest, HelpDocumentsTheFileAndEveryKeysUnitAndDefault) {
  ExitResult r = RunBinary({"serve", "--help"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* text :
       {"--config=FILE", "--print-config", "CHRONOQ_", "--ttl-millis", "unit: ms; default: 3600000",
        "unit: bytes; default: 4194304", "docs/configuration.md"}) {
    EXPECT_NE(r.out.find(text), std::string::npos) << text;
  }
}

}  // namespace
}  // namespace chronoq::it
