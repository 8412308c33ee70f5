#include "base/json_string.h"

#include <gtest/gtest.h>

namespace chronoq::base {
namespace {

std::string Json(std::string_view s) {
  std::string out;
  AppendJsonString(out, s);
  return out;
}

TEST(JsonStringTest, PlainTextIsQuotedAsItIs) {
  EXPECT_EQ(Json(""), R"("")");
  EXPECT_EQ(Json("order-42 is due"), R"("order-42 is due")");
}

TEST(JsonStringTest, QuotesBackslashesAndControlBytesAreEscaped) {
  EXPECT_EQ(Json(std::string("q\"b\\n\nt\tc\x01\x1f\b\f\r", 14)),
            R"("q\"b\\n\nt\tc\u0001\u001f\b\f\r")");
}

TEST(JsonStringTest, ValidUtf8PassesAndInvalidBytesBecomeReplacementCharacters) {
  EXPECT_EQ(Json("caf\xC3\xA9 \xE2\x82\xAC"), "\"caf\xC3\xA9 \xE2\x82\xAC\"");
  EXPECT_EQ(Json("a\xFF"
                 "b"),
            "\"a\xEF\xBF\xBD"
            "b\"");
  EXPECT_EQ(Json("\xC3"), "\"\xEF\xBF\xBD\"");  // a sequence cut short
}

TEST(JsonStringTest, PlainPrefixStopsAtTheFirstByteThatNeedsCare) {
  EXPECT_EQ(JsonPlainPrefix("abcdefghij"), 10u);
  EXPECT_EQ(JsonPlainPrefix("abcdefghi\"j"), 9u);
  EXPECT_EQ(JsonPlainPrefix("ab\\"), 2u);
  EXPECT_EQ(JsonPlainPrefix("abcdefgh\xC3\xA9"), 8u);
  EXPECT_EQ(JsonPlainPrefix(std::string("abc\0", 4)), 3u);
}

}  // namespace
}  // namespace chronoq::base
