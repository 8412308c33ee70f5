#include "http/target.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>

namespace chronoq::http {
namespace {

// `s` in a heap block of exactly its size, so that a read past its end is a sanitizer report.
std::unique_ptr<char[]> Exact(std::string_view s) {
  auto buf = std::make_unique<char[]>(s.size());
  std::memcpy(buf.get(), s.data(), s.size());
  return buf;
}

TEST(TargetTest, AbsoluteFormLosesSchemeAndAuthorityInAnyCase) {
  std::string storage;
  EXPECT_EQ(OriginForm("http://h:1/camellia/x?a=1", &storage), "/camellia/x?a=1");
  EXPECT_EQ(OriginForm("HTTPS://h/camellia/x", &storage), "/camellia/x");
  EXPECT_EQ(OriginForm("hTtP://h?topic=t", &storage), "/?topic=t");
  EXPECT_EQ(OriginForm("HTTP://h", &storage), "/");
  EXPECT_EQ(OriginForm("/camellia/x", &storage), "/camellia/x");
  EXPECT_EQ(OriginForm("httpx://h/p", &storage), "httpx://h/p");
}

// Found by the http_request fuzzer: "HTTPS://" (a scheme in upper case, nothing after it) made the
// case-insensitive compare read one byte past the target.
TEST(TargetTest, ASchemeInUpperCaseIsNotReadPastItsEnd) {
  for (std::string_view t : {"HTTPS://", "HTTP://", "Http:/", "H"}) {
    auto buf = Exact(t);
    std::string storage;
    std::string_view origin = OriginForm(std::string_view(buf.get(), t.size()), &storage);
    EXPECT_TRUE(origin == "/" || origin == t) << t;
  }
}

TEST(TargetTest, EqualsIgnoringCaseComparesAsciiLettersOnly) {
  auto a = Exact("100-Continue");
  EXPECT_TRUE(EqualsIgnoringCase(std::string_view(a.get(), 12), "100-continue"));
  EXPECT_FALSE(EqualsIgnoringCase("100-continuE", "100-continu"));
  EXPECT_FALSE(EqualsIgnoringCase("\xc3\xa9", "\xc3\x89"));  // é and É: not ASCII letters
  EXPECT_TRUE(EqualsIgnoringCase("", ""));
}

}  // namespace
}  // namespace chronoq::http
