#include "http/params.h"

#include <gtest/gtest.h>

#include <optional>
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

// The body's Content-Type is a media type compared without regard to case (RFC 9110 8.3.1),
// parameters such as a charset ignored; another type's body is ignored and named, in lower case.
TEST(ParamsTest, TheBodysMediaTypeIsMatchedWhateverItsCase) {
  Result<Params> form = Params::Parse(
      "", true, " Application/X-WWW-Form-URLencoded ; charset=UTF-8", "topic=t&msg=a%20b");
  ASSERT_TRUE(form.has_value()) << form.error().ToString();
  EXPECT_EQ(*form->Find("msg"), "a b");
  EXPECT_EQ(form->ignored_body_type(), "");

  Result<Params> json = Params::Parse("", true, "APPLICATION/JSON", R"({"topic":"t","msg":"x"})");
  ASSERT_TRUE(json.has_value()) << json.error().ToString();
  EXPECT_EQ(*json->Find("msg"), "x");

  Result<Params> suffix =
      Params::Parse("", true, "application/vnd.chronoq+JSON; v=1", R"({"topic":"t"})");
  ASSERT_TRUE(suffix.has_value()) << suffix.error().ToString();
  EXPECT_EQ(*suffix->Find("topic"), "t");

  Result<Params> text = Params::Parse("topic=q", true, "Text/Plain", "topic=t");
  ASSERT_TRUE(text.has_value()) << text.error().ToString();
  EXPECT_EQ(*text->Find("topic"), "q");
  EXPECT_EQ(text->ignored_body_type(), "text/plain");

  Result<Params> none = Params::Parse("", true, "  ", "topic=t");
  ASSERT_TRUE(none.has_value()) << none.error().ToString();
  EXPECT_EQ(none->Find("topic"), nullptr);
  EXPECT_EQ(none->ignored_body_type(), "(empty)");
}

// A JSON object member is reported as non-scalar by both lookups.
TEST(ParamsTest, FindTellsWhetherAValueIsAnObjectOrArray) {
  Result<Params> p = Params::Parse("", true, "application/json", R"({"a":{"b":1},"c":"d"})");
  ASSERT_TRUE(p.has_value()) << p.error().ToString();
  bool non_scalar = false;
  ASSERT_NE(p->Find("a", &non_scalar), nullptr);
  EXPECT_TRUE(non_scalar);
  EXPECT_TRUE(p->NonScalar("a"));
  ASSERT_NE(p->Find("c", &non_scalar), nullptr);
  EXPECT_FALSE(non_scalar);
  EXPECT_EQ(p->Find("e", &non_scalar), nullptr);

  ParamReader r(*p);
  EXPECT_FALSE(r.String("a", false).has_value());
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("'a' must be a string, number or boolean"),
            std::string::npos);
}

// Names and values are views into the request unless they had to be decoded: either kind keeps
// its text however many parameters follow (the values' vector grows, past the index's threshold
// too), the body's value wins over the query string's whichever kind each is, and ParamReader
// takes each one out whole.
TEST(ParamsTest, DecodedAndPlainValuesKeepTheirTextAsParametersAccumulate) {
  std::string query;
  std::string body;
  for (int i = 0; i < 40; ++i) {
    std::string n = std::to_string(i);
    query += (i % 2 == 0 ? "p" + n + "=plain" + n : "p%" + std::string("2B") + n + "=a+b%2C" + n);
    query += '&';
    if (i % 3 == 0) body += (i % 2 == 0 ? "p" + n + "=b%20" : "p%2B" + n + "=body") + n + "&";
  }
  Result<Params> p = Params::Parse(query, false, "", body);
  ASSERT_TRUE(p.has_value()) << p.error().ToString();
  ParamReader r(*p);
  for (int i = 0; i < 40; ++i) {
    std::string n = std::to_string(i);
    std::string name = (i % 2 == 0 ? "p" : "p+") + n;
    std::string want =
        i % 3 == 0 ? (i % 2 == 0 ? "b " : "body") + n : (i % 2 == 0 ? "plain" + n : "a b," + n);
    const std::string_view* v = p->Find(name);
    ASSERT_NE(v, nullptr) << name;
    EXPECT_EQ(*v, want) << name;
    EXPECT_EQ(r.String(name, true), want) << name;
  }
  EXPECT_TRUE(r.ok());
  Result<Params> twice = Params::Parse(query + "p%2B1=again", false, "", "");
  ASSERT_FALSE(twice.has_value());
  EXPECT_EQ(twice.error().message(), "parameter 'p+1' is given twice in the query string");
}

// A handler gets its Params moved out of Parse's result (Result, then optional): views into
// decoded names and values, short ones too (kept inside a std::string object), survive the moves,
// and a value taken out of one copy's reader is the whole text.
TEST(ParamsTest, DecodedValuesSurviveMovesOfTheParams) {
  Result<Params> p = Params::Parse("a%41=x%2By&b=plain", false, "", "c=%7Bj%7D&a%41=body+1");
  ASSERT_TRUE(p.has_value()) << p.error().ToString();
  std::optional<Params> once(std::move(*p));
  Params twice = std::move(*once);
  ASSERT_NE(twice.Find("aA"), nullptr);
  EXPECT_EQ(*twice.Find("aA"), "body 1");
  EXPECT_EQ(*twice.Find("b"), "plain");
  EXPECT_EQ(*twice.Find("c"), "{j}");
  ParamReader r(twice);
  EXPECT_EQ(r.String("aA", true), "body 1");
  EXPECT_EQ(r.String("c", true), "{j}");
  EXPECT_EQ(r.String("b", true), "plain");
  EXPECT_TRUE(r.ok());
}

}  // namespace
}  // namespace chronoq::http
