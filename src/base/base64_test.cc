#include "base/base64.h"

#include <gtest/gtest.h>

namespace chronoq::base {
namespace {

TEST(Base64Test, DecodesTheRfcVectorsWithAndWithoutPadding) {
  const std::pair<const char*, const char*> vectors[] = {{"", ""},
                                                         {"Zg==", "f"},
                                                         {"Zm8=", "fo"},
                                                         {"Zm9v", "foo"},
                                                         {"Zm9vYg==", "foob"},
                                                         {"Zm9vYmE=", "fooba"},
                                                         {"Zm9vYmFy", "foobar"}};
  for (const auto& [text, bytes] : vectors) {
    EXPECT_EQ(Base64Decode(text), std::string(bytes)) << text;
    std::string bare(text);
    while (!bare.empty() && bare.back() == '=') bare.pop_back();
    EXPECT_EQ(Base64Decode(bare), std::string(bytes)) << bare;
  }
  EXPECT_EQ(Base64Decode("AAEC/w=="), std::string("\x00\x01\x02\xff", 4));
}

TEST(Base64Test, RefusesWhatNoEncodingProduces) {
  for (const char* bad :
       {"Z", "Zg=", "Zg===", "Z===", "=Zg=", "Zm9v\n", "Zm 9v", "Zm9-", "Zh==", "Zm9=v"}) {
    EXPECT_FALSE(Base64Decode(bad).has_value()) << bad;
  }
}

}  // namespace
}  // namespace chronoq::base
