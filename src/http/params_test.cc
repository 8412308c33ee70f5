#include "http/params.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace chronoq::http {
namespace {

// Fuzzing regression (fuzz/regressions/params/null-memchr-empty-value): a pair without '=' has a
// default (null) value view, which the decoder passed to memchr (undefined behaviour, reported
// by UBSan).
TEST(ParamsTest, PairWithoutEqualsSignHasEmptyValue) {
  Result<Params> p = Params::Parse("topic&msg=%41", false, "", "");
  ASSERT_TRUE(p.has_value()) << p.error().ToString();
  ASSERT_NE(p->Find("topic"), nullptr);
  EXPECT_EQ(*p->Find("topic"), "");
  EXPECT_EQ(*p->Find("msg"), "A");

  Params out;
  ASSERT_TRUE(ParseUrlEncoded(std::string_view(), "query string", &out).ok());
  ASSERT_TRUE(ParseUrlEncoded("a", "query string", &out).ok());
  EXPECT_EQ(*out.Find("a"), "");
}

}  // namespace
}  // namespace chronoq::http
