// The configuration sources (file < environment < flags), every problem reported, and the
// renderings that must not drift from the table: --print-config (read back by --config), the
// sample deploy/chronoq.toml and docs/configuration.md.
//
// After changing the table, regenerate the two files with
//   CQ_UPDATE_GOLDEN=1 build/tests/unit/config_test --gtest_filter='ConfigDocs*'
#include "config/config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/scope.h"
#include "tests/testutil/temp_dir.h"

namespace chronoq::config {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

std::vector<std::string> Apply(std::string_view toml, ServerConfig* cfg) {
  return ApplyToml(toml, "config file t.toml", cfg);
}

// An environment array (nullptr-terminated) over `vars`.
struct Env {
  explicit Env(std::vector<std::string> v) : vars(std::move(v)) {
    for (const std::string& s : vars) ptrs.push_back(s.c_str());
    ptrs.push_back(nullptr);
  }
  const char* const* get() const { return ptrs.data(); }
  std::vector<std::string> vars;
  std::vector<const char*> ptrs;
};

std::string ReadSource(const std::string& rel) {
  std::ifstream in(std::string(CQ_SOURCE_DIR) + "/" + rel, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteSource(const std::string& rel, const std::string& text) {
  std::ofstream(std::string(CQ_SOURCE_DIR) + "/" + rel, std::ios::binary) << text;
}

bool UpdateGolden() {
  const char* v = std::getenv("CQ_UPDATE_GOLDEN");
  return v != nullptr && std::string_view(v) == "1";
}

TEST(ConfigFileTest, AnEmptyFileMeansTheDefaults) {
  ServerConfig cfg;
  EXPECT_TRUE(Apply("", &cfg).empty());
  EXPECT_TRUE(Apply("# only a comment\n\n", &cfg).empty());
  EXPECT_EQ(cfg, ServerConfig{});
}

TEST(ConfigFileTest, SetsKeysOfEveryType) {
  ServerConfig cfg;
  std::vector<std::string> errors = Apply(R"(
listen = "127.0.0.1:9999"
ttl-millis = 60_000
sync-writes = true
namespace = "shop"
)",
                                          &cfg);
  EXPECT_TRUE(errors.empty()) << errors.front();
  EXPECT_EQ(cfg.listen, "127.0.0.1:9999");
  EXPECT_EQ(cfg.ttl_millis, 60000);
  EXPECT_TRUE(cfg.sync_writes);
  EXPECT_EQ(cfg.ns, "shop");
  EXPECT_EQ(cfg.max_retry, ServerConfig{}.max_retry);  // untouched
}

TEST(ConfigFileTest, EveryProblemIsListedWithItsLine) {
  ServerConfig cfg;
  std::vector<std::string> errors = Apply(R"(ttl-millis = "60000"
ttl_millis = 5
bogus = 1
sync-writes = 1
max-retry = 1.5
listen = 8080
[server]
port = 1
)",
                                          &cfg);
  EXPECT_THAT(
      errors,
      ElementsAre(
          "config file t.toml line 1: ttl-millis must be an integer, got a string",
          "config file t.toml line 2: unknown setting 'ttl_millis' (did you mean 'ttl-millis'?)",
          "config file t.toml line 3: unknown setting 'bogus'",
          "config file t.toml line 4: sync-writes must be a boolean, got an integer",
          "config file t.toml line 5: max-retry must be an integer, got a floating-point number",
          "config file t.toml line 6: listen must be a string, got an integer",
          "config file t.toml line 7: unknown section [server]: settings are top-level keys, as "
          "ttl-millis = 60000"));
}

TEST(ConfigFileTest, TopicTablesSetPerTopicDefaults) {
  ServerConfig cfg;
  std::vector<std::string> errors = Apply(R"(ttl-millis = 60000
[topics.orders]
capacity = 1000
ttl-millis = 5000
max-retry = 3
ack-timeout-millis = 700
retry-interval-millis = 250
dead-letter-topic = "orders-dlq"
paused = true

[topics."orders.eu"]
capacity = 1
)",
                                          &cfg);
  EXPECT_TRUE(errors.empty()) << errors.front();
  EXPECT_EQ(cfg.ttl_millis, 60000);
  ASSERT_EQ(cfg.topics.size(), 2u);
  core::TopicConfig orders;
  orders.capacity = 1000;
  orders.ttl = Millis(5000);
  orders.max_retry = 3;
  orders.ack_timeout = Millis(700);
  orders.retry_interval = Millis(250);
  orders.dead_letter_topic = "orders-dlq";
  orders.paused = true;
  EXPECT_EQ(cfg.topics["orders"], orders);
  EXPECT_EQ(cfg.topics["orders.eu"].capacity, 1);
  EXPECT_FALSE(cfg.topics["orders.eu"].ttl.has_value());
  // --print-config writes them back.
  ServerConfig back;
  errors = Apply(PrintToml(cfg), &back);
  EXPECT_TRUE(errors.empty()) << errors.front() << "\n" << PrintToml(cfg);
  EXPECT_EQ(back, cfg) << PrintToml(cfg);
  EXPECT_THAT(PrintToml(cfg), HasSubstr("\n[topics.\"orders.eu\"]\ncapacity = 1\n"));
}

TEST(ConfigFileTest, TopicTableProblemsNameTheTableAndTheField) {
  ServerConfig cfg;
  std::vector<std::string> errors = Apply(R"(topics = 5
)",
                                          &cfg);
  EXPECT_THAT(errors, ElementsAre("config file t.toml line 1: topics must be tables "
                                  "[topics.<name>], got an integer"));
  errors = Apply(R"([topics]
orders = 1
[topics.t]
capacity = "many"
capacty = 5
paused = 1
dead-letter-topic = 7
)",
                 &cfg);
  EXPECT_THAT(
      errors,
      ElementsAre("config file t.toml line 2: topics.orders must be a table [topics.orders] of "
                  "topic settings, got an integer",
                  "config file t.toml line 4: [topics.t] capacity must be an integer, got a string",
                  "config file t.toml line 5: [topics.t]: unknown setting 'capacty' (topic "
                  "settings: capacity, ttl-millis, max-retry, ack-timeout-millis, "
                  "retry-interval-millis, dead-letter-topic, paused, history)",
                  "config file t.toml line 6: [topics.t] paused must be a boolean, got an integer",
                  "config file t.toml line 7: [topics.t] dead-letter-topic must be a string, got "
                  "an integer"));
}

// Topics of a namespace (docs/security.md "Namespaces") have tables of their own, kept under
// their internal names; a namespaced table's dead-letter topic is in its namespace too.
TEST(ConfigFileTest, NamespacedTopicTablesAreTheTopicsOfTheirNamespace) {
  ServerConfig cfg;
  std::vector<std::string> errors = Apply(R"([topics.orders]
capacity = 1
[namespaces.shop.topics.orders]
capacity = 2
dead-letter-topic = "orders-dlq"
[namespaces."bank.eu".topics."ledger.v2"]
ttl-millis = 5000
)",
                                          &cfg);
  EXPECT_TRUE(errors.empty()) << errors.front();
  ASSERT_EQ(cfg.topics.size(), 3u);
  EXPECT_EQ(cfg.topics["orders"].capacity, 1);
  const std::string shop_orders = core::ScopedTopic("shop", "orders");
  EXPECT_EQ(cfg.topics[shop_orders].capacity, 2);
  EXPECT_EQ(cfg.topics[shop_orders].dead_letter_topic, "orders-dlq");
  EXPECT_EQ(cfg.topics[core::ScopedTopic("bank.eu", "ledger.v2")].ttl, Millis(5000));
  EXPECT_TRUE(ValidateTopicTables(cfg).empty());
  // The store reads the dead-letter topic by its internal name.
  auto store = StoreTopicTables(cfg);
  EXPECT_EQ(store[shop_orders].dead_letter_topic, core::ScopedTopic("shop", "orders-dlq"));
  EXPECT_EQ(store["orders"].dead_letter_topic, std::nullopt);
  // --print-config writes them back.
  const std::string toml = PrintToml(cfg);
  EXPECT_THAT(toml, HasSubstr("\n[namespaces.shop.topics.orders]\ncapacity = 2\n"));
  EXPECT_THAT(toml, HasSubstr("\n[namespaces.\"bank.eu\".topics.\"ledger.v2\"]\n"));
  ServerConfig back;
  errors = Apply(toml, &back);
  EXPECT_TRUE(errors.empty()) << errors.front() << "\n" << toml;
  EXPECT_EQ(back, cfg) << toml;
}

TEST(ConfigFileTest, NamespacedTopicTableProblemsNameTheTable) {
  ServerConfig cfg;
  std::vector<std::string> errors = Apply(R"([namespaces."no/slash".topics.t]
capacity = 1
[namespaces.shop]
paused = true
[namespaces.shop.topics.t]
capacity = "many"
)",
                                          &cfg);
  EXPECT_THAT(errors,
              ElementsAre(HasSubstr("line 1: namespaces.no/slash: not a valid namespace"),
                          "config file t.toml line 4: namespaces.shop: unknown setting 'paused' "
                          "(a namespace has only topic tables, "
                          "[namespaces.<namespace>.topics.<name>])",
                          "config file t.toml line 6: [namespaces.shop.topics.t] capacity must be "
                          "an integer, got a string"));
  ServerConfig values;
  values.topics[core::ScopedTopic("shop", "t")].capacity = -1;
  values.topics[core::ScopedTopic("shop", "u")].dead_letter_topic = "u";
  EXPECT_THAT(ValidateTopicTables(values),
              ElementsAre("[namespaces.shop.topics.t] capacity must be at least 0, got -1",
                          HasSubstr("[namespaces.shop.topics.u] dead-letter-topic must name "
                                    "another topic")));
}

TEST(ConfigLoadTest, TopicTableValuesAreCheckedAtStart) {
  ServerConfig cfg;
  cfg.topics["a"].capacity = -1;
  cfg.topics["b"].ttl = Millis(0);
  cfg.topics["c"].dead_letter_topic = "c";
  cfg.topics["d"].retry_interval = Millis(-5);
  cfg.topics["e"].dead_letter_topic = std::string(300, 'x');
  cfg.topics["ok"].max_retry = 0;
  std::vector<std::string> errors = ValidateTopicTables(cfg);
  ASSERT_EQ(errors.size(), 5u);
  EXPECT_EQ(errors[0], "[topics.a] capacity must be at least 0, got -1");
  EXPECT_EQ(errors[1], "[topics.b] ttl-millis must be at least 1, got 0");
  EXPECT_THAT(errors[2], HasSubstr("[topics.c] dead-letter-topic must name another topic"));
  EXPECT_EQ(errors[3], "[topics.d] retry-interval-millis must be at least 0, got -5");
  EXPECT_THAT(errors[4], HasSubstr("[topics.e] dead-letter-topic"));
  ServerConfig bad_name;
  bad_name.topics[std::string(300, 'y')].capacity = 1;
  EXPECT_THAT(ValidateTopicTables(bad_name),
              ElementsAre(HasSubstr("the table's name is not a valid topic")));
}

TEST(ConfigFileTest, TestOnlyKeysAreNotReadFromAFile) {
  ServerConfig cfg;
  EXPECT_THAT(Apply("test-clock = true\n", &cfg),
              ElementsAre(HasSubstr("unknown setting 'test-clock'")));
  EXPECT_FALSE(cfg.test_clock);
}

TEST(ConfigFileTest, ASyntaxErrorNamesItsLine) {
  ServerConfig cfg;
  std::vector<std::string> errors = Apply("ttl-millis = 5\n\nmax-retry = = 3\n", &cfg);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0], HasSubstr("config file t.toml line 3, column"));
  EXPECT_THAT(errors[0], HasSubstr("TOML syntax error"));
}

TEST(ConfigFileTest, AnUnreadableFileIsAProblem) {
  ServerConfig cfg;
  EXPECT_THAT(ApplyConfigFile("/nonexistent/chronoq.toml", &cfg),
              ElementsAre("config file /nonexistent/chronoq.toml: cannot open it: No such file or "
                          "directory"));
  EXPECT_THAT(ApplyConfigFile("/", &cfg),
              ElementsAre("config file /: cannot read it: Is a directory"));
}

TEST(ConfigLoadTest, FileThenEnvironmentThenFlags) {
  testutil::TempDir dir;
  std::string path = dir.Sub("precedence.toml");
  std::ofstream(path) << "ttl-millis = 1111\nmax-retry = 1\nack-timeout-millis = 1111\n";
  Env env({"PATH=/bin", "CHRONOQ_MAX_RETRY=2", "CHRONOQ_ACK_TIMEOUT_MILLIS=2222"});
  LoadResult r = Load({"--config=" + path, "--ack-timeout-millis=3333"}, env.get());
  EXPECT_TRUE(r.errors.empty()) << r.errors.front();
  EXPECT_EQ(r.config.ttl_millis, 1111);          // file only
  EXPECT_EQ(r.config.max_retry, 2);              // the environment wins over the file
  EXPECT_EQ(r.config.ack_timeout_millis, 3333);  // the flag wins over both
  // The file may come anywhere among the flags; `--config FILE` works too.
  r = Load({"--ack-timeout-millis=3333", "--config", path}, Env({}).get());
  EXPECT_TRUE(r.errors.empty());
  EXPECT_EQ(r.config.ack_timeout_millis, 3333);
  EXPECT_EQ(r.config.max_retry, 1);
}

TEST(ConfigLoadTest, EveryProblemOfEverySourceIsListed) {
  testutil::TempDir dir;
  std::string path = dir.Sub("bad.toml");
  std::ofstream(path) << "bogus = 1\nttl-millis = 0\n";
  Env env({"CHRONOQ_MAX_RETRY=lots"});
  LoadResult r = Load({"--config=" + path, "--nope", "--http-threads=0"}, env.get());
  EXPECT_THAT(r.errors,
              ElementsAre("config file " + path + " line 1: unknown setting 'bogus'",
                          "environment variable CHRONOQ_MAX_RETRY: max-retry: 'lots' is not an "
                          "integer",
                          "unknown flag '--nope'", "http-threads must be between 1 and 64, got 0",
                          "ttl-millis must be > 0, got 0"));
}

TEST(ConfigLoadTest, RedisFormatIsOneOfTheFourAndReachesTheConfig) {
  for (const char* bad : {"--redis-format=5", "--redis-format=0"}) {
    LoadResult r = Load({bad}, Env({}).get());
    EXPECT_THAT(r.errors,
                ElementsAre(std::string("redis-format must be 1 (hashes), 2 (MessagePack "
                                        "strings), 3 (MessagePack with integers) or 4 (the same "
                                        "in the bucketed keyspace), got ") +
                            bad[15]));
  }
  LoadResult r = Load({}, Env({"CHRONOQ_REDIS_FORMAT=4"}).get());
  EXPECT_TRUE(r.errors.empty());
  EXPECT_EQ(r.config.redis_format, 4);
  r = Load({}, Env({"CHRONOQ_REDIS_FORMAT=1"}).get());
  EXPECT_TRUE(r.errors.empty());
  EXPECT_EQ(r.config.redis_format, 1);
  EXPECT_EQ(Load({}, Env({}).get()).config.redis_format, 2);
}

TEST(ConfigLoadTest, ConnectionLimitsAndTimeoutsAreCheckedAndReachTheConfig) {
  LoadResult r =
      Load({"--max-connections=0", "--idle-timeout-millis=0", "--request-timeout-millis=-1"},
           Env({}).get());
  EXPECT_THAT(r.errors, ElementsAre("max-connections must be between 1 and 10000000, got 0",
                                    "idle-timeout-millis must be > 0, got 0",
                                    "request-timeout-millis must be > 0, got -1"));
  r = Load({"--max-connections=50", "--request-timeout-millis=500"},
           Env({"CHRONOQ_IDLE_TIMEOUT_MILLIS=700"}).get());
  EXPECT_TRUE(r.errors.empty());
  EXPECT_EQ(r.config.max_connections, 50);
  EXPECT_EQ(r.config.idle_timeout_millis, 700);
  EXPECT_EQ(r.config.request_timeout_millis, 500);
  // The defaults let 10,000 long polls park on one topic, with connections to spare for the
  // other clients (docs/configuration.md, "Connections, long polls and the file-descriptor
  // limit").
  const ServerConfig d;
  EXPECT_EQ(d.max_connections, 16'384);
  EXPECT_EQ(d.max_parked_long_polls, 10'000);
  EXPECT_EQ(d.max_parked_long_polls_per_topic, d.max_parked_long_polls);
  EXPECT_GE(d.max_connections - d.max_parked_long_polls, 6'000);
}

TEST(ConfigLoadTest, PushAllowedTargetsAreCheckedAtStartAndOffByDefault) {
  EXPECT_EQ(ServerConfig{}.push_allowed_targets, "");  // push delivery is off until named
  LoadResult r = Load({"--push-allowed-targets=hooks.internal:8080, http://x"}, Env({}).get());
  EXPECT_THAT(r.errors, ElementsAre("push-allowed-targets has a pattern that is not host, "
                                    "host:port, *.domain or *: 'http://x'"));
  r = Load({}, Env({"CHRONOQ_PUSH_ALLOWED_TARGETS=*.internal, 127.0.0.1:9000"}).get());
  EXPECT_TRUE(r.errors.empty());
  EXPECT_EQ(r.config.push_allowed_targets, "*.internal, 127.0.0.1:9000");
}

TEST(ConfigLoadTest, GrpcListenIsCheckedAndEmptyTurnsTheGrpcServerOff) {
  EXPECT_EQ(ServerConfig{}.grpc_listen, "0.0.0.0:9090");  // API-EXTENSIONS.md section 6
  LoadResult r = Load({"--grpc-listen=9090"}, Env({}).get());
  EXPECT_THAT(r.errors, ElementsAre("grpc-listen: '9090' is not HOST:PORT"));
  r = Load({"--grpc-listen=::1:9090"}, Env({}).get());
  EXPECT_THAT(r.errors, ElementsAre("grpc-listen: IPv6 hosts go in brackets, as [::1]:8080; got "
                                    "'::1:9090'"));
  r = Load({"--grpc-listen="}, Env({}).get());
  EXPECT_TRUE(r.errors.empty());
  EXPECT_EQ(r.config.grpc_listen, "");
  r = Load({}, Env({"CHRONOQ_GRPC_LISTEN=127.0.0.1:0"}).get());
  EXPECT_TRUE(r.errors.empty());
  EXPECT_EQ(r.config.grpc_listen, "127.0.0.1:0");
}

TEST(ConfigLoadTest, GrpcEngineIsH2UnlessAnotherIsAskedAndTheOldNameStillWorks) {
  EXPECT_EQ(ServerConfig{}.grpc_engine, "h2");
  EXPECT_EQ(Load({}, Env({}).get()).config.grpc_engine, "h2");
  for (const char* engine : {"h2", "nghttp2", "grpc++"}) {
    LoadResult r = Load({std::string("--grpc-engine=") + engine}, Env({}).get());
    EXPECT_TRUE(r.errors.empty()) << engine;
    EXPECT_EQ(r.config.grpc_engine, engine);
  }
  // Its name while it was under review, from a flag, the environment or a file, is h2.
  LoadResult r = Load({"--grpc-engine=h2-experimental"}, Env({}).get());
  EXPECT_TRUE(r.errors.empty());
  EXPECT_EQ(r.config.grpc_engine, "h2");
  r = Load({}, Env({"CHRONOQ_GRPC_ENGINE=h2-experimental"}).get());
  EXPECT_TRUE(r.errors.empty());
  EXPECT_EQ(r.config.grpc_engine, "h2");
  testutil::TempDir dir;
  const std::string path = dir.Sub("grpc-engine.toml");
  std::ofstream(path) << "grpc-engine = \"h2-experimental\"\n";
  r = Load({"--config=" + path}, Env({}).get());
  EXPECT_TRUE(r.errors.empty());
  EXPECT_EQ(r.config.grpc_engine, "h2");
  r = Load({"--grpc-engine=grpcpp"}, Env({}).get());
  EXPECT_THAT(r.errors, ElementsAre("grpc-engine must be h2, nghttp2 or grpc++ (h2-experimental: "
                                    "an alias of h2), got 'grpcpp'"));
}

TEST(ConfigLoadTest, TlsNeedsCertAndKeyTogetherAndTheClientCaNeedsBoth) {
  LoadResult r = Load({}, Env({}).get());
  EXPECT_TRUE(r.config.tls_cert_file.empty());  // plain by default
  r = Load({"--tls-cert-file=/etc/chronoq/cert.pem"}, Env({}).get());
  EXPECT_THAT(r.errors,
              ElementsAre("tls-cert-file is set but tls-key-file is not: TLS needs both"));
  r = Load({}, Env({"CHRONOQ_TLS_KEY_FILE=/k.pem"}).get());
  EXPECT_THAT(r.errors,
              ElementsAre("tls-key-file is set but tls-cert-file is not: TLS needs both"));
  r = Load({"--tls-client-ca-file=/ca.pem", "--tls-handshake-timeout-millis=0"}, Env({}).get());
  EXPECT_THAT(r.errors, ElementsAre("tls-client-ca-file needs tls-cert-file and tls-key-file "
                                    "(client certificates are asked for over TLS only)",
                                    "tls-handshake-timeout-millis must be > 0, got 0"));
  r = Load({"--tls-cert-file=/c.pem", "--tls-key-file=/k.pem", "--tls-client-ca-file=/ca.pem"},
           Env({}).get());
  EXPECT_TRUE(r.errors.empty());
  // --print-config and the start log line show the key's path, never more (the file is not read
  // here: it is read and checked when the server starts, tls/identity.h).
  EXPECT_THAT(PrintToml(r.config), HasSubstr("tls-key-file = \"/k.pem\""));
}

TEST(ConfigLoadTest, ConfigNeedsAFileAndHelpAndPrintConfigAreSeen) {
  LoadResult r = Load({"--config="}, Env({}).get());
  EXPECT_THAT(r.errors, ElementsAre(HasSubstr("--config needs a file")));
  r = Load({"--print-config", "--help"}, Env({}).get());
  EXPECT_TRUE(r.errors.empty());
  EXPECT_TRUE(r.print_config);
  EXPECT_TRUE(r.help);
}

TEST(PrintConfigTest, ReadsBackAsTheSameConfiguration) {
  ServerConfig cfg;
  cfg.listen = "[::1]:7070";
  cfg.storage = "redis";
  cfg.redis_url = "redis-sentinel://s1:26379,s2:26379/mymaster";
  cfg.ns = "quote\" backslash\\ tab\t newline\n é";
  cfg.sync_writes = true;
  cfg.ttl_millis = 123;
  cfg.max_delay_millis = INT64_MAX;
  ServerConfig back;
  std::vector<std::string> errors = Apply(PrintToml(cfg), &back);
  EXPECT_TRUE(errors.empty()) << errors.front() << "\n" << PrintToml(cfg);
  EXPECT_EQ(back, cfg) << PrintToml(cfg);
}

TEST(PrintConfigTest, RedactsTheRedisPassword) {
  ServerConfig cfg;
  cfg.redis_url = "redis://app:s3cret@db:6379/2";
  std::string out = PrintToml(cfg);
  EXPECT_THAT(out, HasSubstr("redis-url = \"redis://app:***@db:6379/2\""));
  EXPECT_THAT(out, Not(HasSubstr("s3cret")));
  for (const auto& [k, v] : Summary(cfg)) EXPECT_THAT(v, Not(HasSubstr("s3cret"))) << k;
}

TEST(PrintConfigTest, RedactUrl) {
  EXPECT_EQ(RedactUrl("redis://127.0.0.1:6379"), "redis://127.0.0.1:6379");
  EXPECT_EQ(RedactUrl("redis://:pw@h:1"), "redis://:***@h:1");
  EXPECT_EQ(RedactUrl("redis://u:p@w@h:1/3"), "redis://u:***@h:1/3");
  EXPECT_EQ(RedactUrl("redis-cluster://:pw@a:1,b:2"), "redis-cluster://:***@a:1,b:2");
  EXPECT_EQ(RedactUrl("redis-sentinel://:pw@a:1/m@x"), "redis-sentinel://:***@a:1/m@x");
  EXPECT_EQ(RedactUrl("redis://justapassword@h:1"), "redis://:***@h:1");
  EXPECT_EQ(RedactUrl(""), "");
}

// Lines of `text` that set a key, uncommented ("# ttl-millis = 1" -> "ttl-millis = 1").
std::string Uncommented(const std::string& text) {
  std::istringstream in(text);
  std::string line, out;
  while (std::getline(in, line)) {
    if (line.rfind("# ", 0) == 0 && line.find(" = ") != std::string::npos &&
        line.find(' ', 2) == line.find(" = ")) {
      out += line.substr(2) + "\n";
    }
  }
  return out;
}

TEST(ConfigDocsTest, TheSampleFileIsGeneratedFromTheTable) {
  std::string sample = SampleToml();
  if (UpdateGolden()) WriteSource("deploy/chronoq.toml", sample);
  EXPECT_EQ(ReadSource("deploy/chronoq.toml"), sample)
      << "deploy/chronoq.toml is out of date; regenerate it (see the top of this file)";
}

TEST(ConfigDocsTest, TheSampleFileParsesAndEqualsTheDefaults) {
  std::string sample = ReadSource("deploy/chronoq.toml");
  ASSERT_FALSE(sample.empty());
  ServerConfig cfg;
  EXPECT_TRUE(Apply(sample, &cfg).empty());
  EXPECT_EQ(cfg, ServerConfig{});
  // Uncommenting every line sets every key to the value the docs call its default.
  std::string active = "\n" + Uncommented(sample);
  std::vector<std::string> errors = Apply(active, &cfg);
  EXPECT_TRUE(errors.empty()) << errors.front();
  EXPECT_EQ(cfg, ServerConfig{}) << active;
  for (const KeyDoc& k : ConfigKeys()) {
    if (k.hidden) continue;
    EXPECT_THAT(active, HasSubstr("\n" + std::string(k.name) + " = ")) << k.name;
  }
}

TEST(ConfigDocsTest, TheReferenceIsGeneratedFromTheTable) {
  const std::string kBegin = "<!-- BEGIN GENERATED: config keys -->\n";
  const std::string kEnd = "<!-- END GENERATED -->";
  std::string doc = ReadSource("docs/configuration.md");
  size_t b = doc.find(kBegin);
  size_t e = doc.find(kEnd);
  ASSERT_NE(b, std::string::npos) << "docs/configuration.md lacks " << kBegin;
  ASSERT_NE(e, std::string::npos) << "docs/configuration.md lacks " << kEnd;
  b += kBegin.size();
  std::string table = MarkdownReference() + "\n";
  if (UpdateGolden()) {
    doc.replace(b, e - b, table);
    WriteSource("docs/configuration.md", doc);
    e = b + table.size();
  }
  EXPECT_EQ(doc.substr(b, e - b), table)
      << "docs/configuration.md is out of date; regenerate it (see the top of this file)";
  for (const KeyDoc& k : ConfigKeys()) {
    if (k.hidden) continue;
    EXPECT_THAT(doc, HasSubstr("| `" + std::string(k.name) + "` |")) << k.name;
    EXPECT_THAT(doc, HasSubstr(EnvName(k.name))) << k.name;
  }
}

TEST(ConfigDocsTest, HelpShowsEveryKeyWithItsUnitAndDefault) {
  std::string help = HelpText();
  for (const KeyDoc& k : ConfigKeys()) {
    if (k.hidden) {
      EXPECT_THAT(help, Not(HasSubstr(std::string(k.name))));
      continue;
    }
    size_t at = help.find("--" + std::string(k.name) + " ");
    ASSERT_NE(at, std::string::npos) << k.name;
    size_t end = help.find('\n', help.find('\n', at) + 1);  // the entry's two lines
    std::string entry = help.substr(at, end - at);
    EXPECT_THAT(entry, HasSubstr("default: " + k.default_text)) << entry;
    if (!k.unit.empty()) {
      EXPECT_THAT(entry, HasSubstr("unit: " + std::string(k.unit))) << entry;
    }
  }
  EXPECT_THAT(help, HasSubstr("--config=FILE"));
  EXPECT_THAT(help, HasSubstr("--print-config"));
}

}  // namespace
}  // namespace chronoq::config
