#include <gtest/gtest.h>

#include "cli/data.h"

namespace chronoq::cli {
namespace {

using Items = std::vector<std::string_view>;

TEST(RawArrayItemsTest, KeepsEachElementByteForByte) {
  const std::string doc =
      R"({"code":200,"msg":"success","delayMsgList":[{"msg":"a \"]},[{\" b","n":[1,{"x":2}]},)"
      R"( {"msg":"caf\u00e9 é"} ],"nextCursor":null})";
  Result<Items> items = RawArrayItems(doc, "delayMsgList");
  ASSERT_TRUE(items.has_value()) << items.error().ToString();
  EXPECT_EQ(*items,
            (Items{R"({"msg":"a \"]},[{\" b","n":[1,{"x":2}]})", R"({"msg":"caf\u00e9 é"})"}));
}

TEST(RawArrayItemsTest, EmptyArrayAndKeysAfterIt) {
  Result<Items> items = RawArrayItems(R"({"delayMsgList":[],"nextCursor":"abc"})", "delayMsgList");
  ASSERT_TRUE(items.has_value());
  EXPECT_TRUE(items->empty());
}

TEST(RawArrayItemsTest, RefusesWhatIsNotSuchAnObject) {
  for (std::string_view doc : {"", "[]", R"({"code":500,"msg":"x","delayMsgList":null})",
                               R"({"delayMsgList":[{"a":1})", R"({"other":[1]})"}) {
    EXPECT_FALSE(RawArrayItems(doc, "delayMsgList").has_value()) << doc;
  }
}

}  // namespace
}  // namespace chronoq::cli
