#include "cli/format.h"

#include <gtest/gtest.h>

namespace chronoq::cli {
namespace {

TEST(FormatTest, IsoUtcHasMillisecondsAndZ) {
  EXPECT_EQ(IsoUtc(0), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(IsoUtc(1'795'290'983'503), "2026-11-21T19:56:23.503Z");
  EXPECT_EQ(IsoUtc(-1), "1969-12-31T23:59:59.999Z");
}

TEST(FormatTest, StatusNames) {
  EXPECT_EQ(StatusName(1), "WAITING");
  EXPECT_EQ(StatusName(3), "CONSUMING");
  EXPECT_EQ(StatusName(7), "DELETE");
  EXPECT_EQ(StatusName(0), "UNKNOWN");
  EXPECT_EQ(StatusName(8), "UNKNOWN");
}

TEST(FormatTest, PrintableEscapesControlCharacters) {
  EXPECT_EQ(Printable("plain text é"), "plain text é");
  EXPECT_EQ(Printable(std::string("a\nb\tc\\d\x1b[0m\x7f")), "a\\nb\\tc\\\\d\\x1b[0m\\x7f");
  EXPECT_EQ(Printable(std::string("\0", 1)), "\\x00");
}

TEST(FormatTest, TableAlignsColumns) {
  EXPECT_EQ(Table({{"TOPIC", "WAITING"}, {"orders", "12"}, {"a", "3"}}),
            "TOPIC   WAITING\n"
            "orders       12\n"
            "a             3\n");
}

TEST(FormatTest, MessageBlockShowsEveryField) {
  Result<client::Json> m = client::Json::Parse(
      R"({"topic":"orders","msgId":"o-1","msg":"hi\nthere","produceTime":0,"triggerTime":1000,)"
      R"("expireTime":3601000,"maxRetry":3,"retry":1,"status":3})");
  ASSERT_TRUE(m.has_value());
  std::string block = MessageBlock(*m);
  for (const char* s :
       {"msgId        o-1\n", "topic        orders\n", "status       CONSUMING (3)\n",
        "msg          hi\\nthere\n", "trigger      1970-01-01T00:00:01.000Z\n",
        "expire       1970-01-01T01:00:01.000Z\n", "deliveries   1 of at most 4 (maxRetry 3)\n"}) {
    EXPECT_NE(block.find(s), std::string::npos) << s << " in\n" << block;
  }
}

TEST(FormatTest, ExtensionFieldsShowOnlyWhenPresent) {
  Result<client::Json> plain = client::Json::Parse(
      R"({"topic":"t","msgId":"a","msg":"m","triggerTime":1000,"expireTime":2000,"status":1})");
  ASSERT_TRUE(plain.has_value());
  EXPECT_EQ(StateLine(*plain),
            "WAITING, triggers at 1970-01-01T00:00:01.000Z, expires at 1970-01-01T00:00:02.000Z");
  std::string block = MessageBlock(*plain);
  for (const char* absent : {"priority", "count", "lastError"}) {
    EXPECT_EQ(block.find(absent), std::string::npos) << absent << " in\n" << block;
  }

  Result<client::Json> ext = client::Json::Parse(
      R"({"topic":"t","msgId":"a","msg":"m","triggerTime":1000,"expireTime":2000,"status":1,)"
      R"("priority":9,"countTrigger":5,"lastError":"db\ndown"})");
  ASSERT_TRUE(ext.has_value());
  EXPECT_TRUE(StateLine(*ext).ends_with(", priority 9, count 0 of 5")) << StateLine(*ext);
  block = MessageBlock(*ext);
  for (const char* s :
       {"priority     9\n", "count        0 of 5 (countTrigger)\n", "lastError    db\\ndown\n"}) {
    EXPECT_NE(block.find(s), std::string::npos) << s << " in\n" << block;
  }
}

}  // namespace
}  // namespace chronoq::cli
