// The server's logs (STYLE.md section 10), read from the real binary's stderr: with
// --log-format=json every line is one JSON object (time, level, logger, src, msg, fields); info
// carries the lifecycle (start with the configuration, recovery, shutdown) and nothing per
// message; payloads never appear, at any level.
#include <regex>
#include <sstream>

#include "tests/integration/it_util.h"

namespace chronoq::it {
namespace {

using namespace std::chrono_literals;

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) out.push_back(line);
  return out;
}

// Every line parsed as a JSON log object; a failure for each line that is not one.
std::vector<json::object> JsonLines(const std::string& text) {
  std::vector<json::object> out;
  for (const std::string& line : Lines(text)) {
    boost::system::error_code ec;
    json::value v = json::parse(line, ec);
    if (ec || !v.is_object()) {
      ADD_FAILURE() << "not a JSON object: " << line;
      continue;
    }
    const json::object& o = v.as_object();
    for (const char* k : {"time", "level", "logger", "src", "msg"}) {
      EXPECT_TRUE(o.contains(k) && o.at(k).is_string()) << k << " in " << line;
    }
    EXPECT_TRUE(std::regex_match(Str(o.at("time")),
                                 std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)")))
        << line;
    if (o.contains("fields")) {
      EXPECT_TRUE(o.at("fields").is_object()) << line;
    }
    out.push_back(o);
  }
  return out;
}

// The lines at `level`.
std::vector<json::object> AtLevel(const std::vector<json::object>& lines, std::string_view level) {
  std::vector<json::object> out;
  for (const json::object& o : lines) {
    if (Str(o.at("level")) == level) out.push_back(o);
  }
  return out;
}

bool Has(const std::vector<json::object>& lines, std::string_view msg_part) {
  for (const json::object& o : lines) {
    if (Str(o.at("msg")).find(msg_part) != std::string::npos) return true;
  }
  return false;
}

// Sends, pulls and acks one message with `payload` (and asks for an unknown one).
void Traffic(ApiClient& c, const std::string& payload) {
  ASSERT_EQ(c.Queue("sendMsg",
                    {{"topic", "logs"}, {"msgId", "m1"}, {"msg", payload}, {"delayMillis", "0"}})
                .code(),
            200);
  ApiResponse pulled = c.Queue("pullMsg", {{"topic", "logs"}, {"batch", "10"}});
  ASSERT_EQ(pulled.code(), 200) << pulled.Describe();
  EXPECT_EQ(c.Queue("ackMsg", {{"topic", "logs"}, {"msgId", "m1"}, {"ack", "true"}}).code(), 200);
  EXPECT_EQ(c.Queue("getMsg", {{"topic", "logs"}, {"msgId", "none"}}).code(), 404);
  // Odd bytes the logs may quote at debug: quotes, backslashes, control characters, bad UTF-8.
  c.Queue("sendMsg", {{"topic", "t\"\\\x01\n\xff"}, {"msg", payload}, {"delayMillis", "x"}});
  c.Get("/camellia/health/check");
}

TEST(LogsTest, JsonLinesCarryTheLifecycleAndNothingPerMessageAtInfo) {
  ServerProcess s;
  // A max-connections any fd limit allows (a lowered one is logged at warn).
  Status st = s.Start({"--log-format=json", "--log-level=info", "--redis-url=redis://:pw1@h:1",
                       "--ttl-millis=4321", "--max-connections=100"});
  ASSERT_TRUE(st.ok()) << st.message();
  std::vector<json::object> start = JsonLines(s.Stderr());
  ApiClient c(s.endpoint());
  Traffic(c, "PAYLOAD-never-logged");
  size_t after_start = Lines(s.Stderr()).size();
  EXPECT_EQ(after_start, start.size()) << "requests logged at info:\n" << s.Stderr();
  ASSERT_EQ(s.Stop(SIGTERM), 0) << s.Stderr();

  std::vector<json::object> all = JsonLines(s.Stderr());
  EXPECT_TRUE(AtLevel(all, "warn").empty() && AtLevel(all, "error").empty()) << s.Stderr();
  std::vector<json::object> info = AtLevel(all, "info");
  ASSERT_FALSE(info.empty());
  // Start: the version, the address and the whole configuration, without secrets.
  const json::object* started = nullptr;
  for (const json::object& o : info) {
    if (Str(o.at("msg")).find("started on 127.0.0.1:" + std::to_string(s.port())) !=
        std::string::npos) {
      started = &o;
    }
  }
  ASSERT_NE(started, nullptr) << s.Stderr();
  EXPECT_EQ(Str(started->at("logger")), "cq.app");
  ASSERT_TRUE(started->contains("fields")) << json::serialize(*started);
  const json::object& fields = started->at("fields").as_object();
  EXPECT_EQ(Str(fields.at("ttl-millis")), "4321");
  EXPECT_EQ(Str(fields.at("storage")), "embedded");
  EXPECT_EQ(Str(fields.at("log-format")), "json");
  EXPECT_EQ(Str(fields.at("redis-url")), "redis://:***@h:1");
  EXPECT_EQ(s.Stderr().find("pw1"), std::string::npos) << "a secret in the logs";
  // Recovery (embedded store) and shutdown.
  EXPECT_TRUE(Has(info, "recovered")) << s.Stderr();
  EXPECT_TRUE(Has(info, "received SIGTERM, shutting down")) << s.Stderr();
  EXPECT_EQ(Str(info.back().at("msg")), "stopped") << s.Stderr();
  EXPECT_EQ(s.Stderr().find("PAYLOAD-never-logged"), std::string::npos);
}

TEST(LogsTest, EveryLevelWritesValidJsonAndNeverAPayload) {
  ServerProcess s;
  ASSERT_TRUE(s.Start({"--log-format=json", "--log-level=trace"}).ok());
  ApiClient c(s.endpoint());
  Traffic(c, "PAYLOAD-\"quoted\"-never-logged");
  ASSERT_EQ(s.Stop(SIGTERM), 0);
  std::vector<json::object> all = JsonLines(s.Stderr());
  EXPECT_GE(all.size(), 4u);
  EXPECT_EQ(s.Stderr().find("never-logged"), std::string::npos) << s.Stderr();
}

TEST(LogsTest, TextLinesByDefault) {
  ServerProcess s;
  ASSERT_TRUE(s.Start({}).ok());
  ASSERT_EQ(s.Stop(SIGTERM), 0);
  std::vector<std::string> lines = Lines(s.Stderr());
  ASSERT_FALSE(lines.empty());
  for (const std::string& line : lines) {
    EXPECT_TRUE(std::regex_search(
        line,
        std::regex(
            R"(^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (info |warn |error|debug|trace) cq\.\w+ [\w/]+\.cc:\d+\] )")))
        << line;
  }
  EXPECT_NE(s.Stderr().find(" ttl-millis=3600000"), std::string::npos) << s.Stderr();
}

// The raw line of `text` holding `msg_part`; "" when none.
std::string LineWith(const std::string& text, std::string_view msg_part) {
  for (const std::string& line : Lines(text)) {
    if (line.find(msg_part) != std::string::npos) return line;
  }
  return "";
}

size_t Count(std::string_view text, std::string_view part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string_view::npos; at = text.find(part, at + 1)) {
    ++n;
  }
  return n;
}

// The start line carries the configuration once: every setting is one field, and the message
// names none of them again (it says what the fields cannot: the version and the bound port).
TEST(LogsTest, TheStartLineNamesEachSettingOnce) {
  std::vector<std::string> keys;
  for (const std::string storage : {"embedded", "redis"}) {
    SCOPED_TRACE(storage);
    ServerProcess s;
    Status st = s.Start({"--log-format=json", "--max-connections=100", "--storage=" + storage});
    ASSERT_TRUE(st.ok()) << st.message();
    std::string line = LineWith(s.Stderr(), "started on 127.0.0.1:");
    ASSERT_NE(line, "") << s.Stderr();
    json::object started = json::parse(line).as_object();
    const std::string msg = Str(started.at("msg"));
    EXPECT_EQ(msg.rfind("chronoq ", 0), 0u) << msg;
    const json::object& fields = started.at("fields").as_object();
    EXPECT_EQ(Str(fields.at("storage")), storage);
    EXPECT_GT(fields.size(), 30u);
    keys.clear();
    for (const auto& [key, value] : fields) {
      keys.emplace_back(key);
      // Parsing keeps one of duplicate keys: count them in the raw line.
      EXPECT_EQ(Count(line, "\"" + std::string(key) + "\":"), 1u) << key << " in " << line;
      EXPECT_EQ(msg.find(std::string(key) + "="), std::string::npos) << key << " in " << msg;
    }
    for (const char* value_key : {"data-dir", "redis-url"}) {
      std::string value = Str(fields.at(value_key));
      if (!value.empty()) {
        EXPECT_EQ(msg.find(value), std::string::npos) << value_key << " in " << msg;
      }
    }
  }
  // The text format: each setting once as key=value.
  ServerProcess s;
  ASSERT_TRUE(s.Start({"--max-connections=100"}).ok());
  std::string line = LineWith(s.Stderr(), "started on 127.0.0.1:");
  ASSERT_NE(line, "") << s.Stderr();
  for (const std::string& key : keys) {
    EXPECT_EQ(Count(line, " " + key + "="), 1u) << key << " in " << line;
  }
}

// Without auth-tokens-file, a server others can reach says so, once, at warn.
TEST(LogsTest, ListeningBeyondLoopbackWarnsThatAnyoneCanReadAndDelete) {
  constexpr std::string_view kWarning = "anyone who can reach the port can send, read and delete";
  {
    ServerProcess s;  // the harness listens on 127.0.0.1
    ASSERT_TRUE(s.Start({"--log-format=json", "--max-connections=100"}).ok());
    EXPECT_EQ(s.Stderr().find(kWarning), std::string::npos) << s.Stderr();
  }
  ServerProcess s;
  ASSERT_TRUE(s.Start({"--log-format=json", "--max-connections=100", "--listen=0.0.0.0:0"}).ok());
  std::vector<json::object> warnings = AtLevel(JsonLines(s.Stderr()), "warn");
  ASSERT_EQ(warnings.size(), 1u) << s.Stderr();
  const std::string msg = Str(warnings[0].at("msg"));
  EXPECT_NE(msg.find("listening beyond loopback (listen 0.0.0.0:0) without authentication"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find(kWarning), std::string::npos) << msg;
  EXPECT_EQ(Str(warnings[0].at("logger")), "cq.app");
}

TEST(LogsTest, LogLevelWarnHidesTheLifecycle) {
  ServerProcess s;
  ASSERT_TRUE(s.Start({"--log-level=warn", "--max-connections=100"}).ok());
  ASSERT_EQ(s.Stop(SIGTERM), 0);
  EXPECT_EQ(s.Stderr(), "");
}

}  // namespace
}  // namespace chronoq::it
