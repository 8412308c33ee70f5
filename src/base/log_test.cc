// The two log line formats, byte for byte: JSON lines escape whatever they quote (every line must
// parse, tests/ops/logs_test.cc parses the real server's), text lines quote odd field values.
#include "base/log.h"

#include <gtest/gtest.h>

namespace chronoq::base {
namespace {

constexpr std::string_view kTime = "2026-11-21T19:44:01.123Z";

TEST(LogFormatTest, JsonLineWithFields) {
  EXPECT_EQ(FormatLogLine(true, kTime, LogLevel::kInfo, "cq.app", "app/serve.cc:12", "started",
                          {{"listen", "0.0.0.0:8080"}, {"ttl-millis", "60000"}}),
            R"({"time":"2026-11-21T19:44:01.123Z","level":"info","logger":"cq.app",)"
            R"("src":"app/serve.cc:12","msg":"started",)"
            R"("fields":{"listen":"0.0.0.0:8080","ttl-millis":"60000"}})");
}

TEST(LogFormatTest, JsonLineWithoutFieldsHasNoFieldsKey) {
  EXPECT_EQ(FormatLogLine(true, kTime, LogLevel::kWarn, "cq.http", "http/server.cc:1", "m", {}),
            R"({"time":"2026-11-21T19:44:01.123Z","level":"warn","logger":"cq.http",)"
            R"("src":"http/server.cc:1","msg":"m"})");
}

TEST(LogFormatTest, JsonEscapesQuotesBackslashesAndControls) {
  std::string line = FormatLogLine(true, kTime, LogLevel::kError, "cq.x", "f.cc:1",
                                   "topic 'a\"b\\c'\nnext\ttab\x01\x7f é", {{"k\"", "v\n"}});
  EXPECT_NE(line.find(R"("msg":"topic 'a\"b\\c'\nnext\u0009tab\u0001\u007f é")"), std::string::npos)
      << line;
  EXPECT_NE(line.find(R"("fields":{"k\"":"v\n"})"), std::string::npos) << line;
  EXPECT_EQ(line.find('\n'), std::string::npos) << "one line per event";
}

TEST(LogFormatTest, JsonEscapesTextThatIsNotUtf8ByteByByte) {
  std::string line =
      FormatLogLine(true, kTime, LogLevel::kInfo, "cq.x", "f.cc:1", "bad \xff\xfe é", {});
  EXPECT_NE(line.find(R"("msg":"bad \u00ff\u00fe \u00c3\u00a9")"), std::string::npos) << line;
}

TEST(LogFormatTest, TextLineQuotesOddFieldValues) {
  EXPECT_EQ(FormatLogLine(false, kTime, LogLevel::kInfo, "cq.app", "app/serve.cc:12", "started",
                          {{"a", "plain"}, {"b", ""}, {"c", "two words"}, {"d", "x=\"y\""}}),
            "2026-11-21T19:44:01.123Z info  cq.app app/serve.cc:12] started a=plain b=\"\" "
            "c=\"two words\" d=\"x=\\\"y\\\"\"");
}

}  // namespace
}  // namespace chronoq::base
