#include "core/scope.h"

#include <gtest/gtest.h>

#include "core/validation.h"

namespace chronoq::core {
namespace {

TEST(ScopeTest, ScopedNamesRoundTripAndNeverCross) {
  EXPECT_EQ(ScopedTopic("", "orders"), "orders");
  const std::string shop = ScopedTopic("shop", "orders");
  EXPECT_EQ(shop, "shop\x1Forders");
  EXPECT_EQ(ClientTopic("shop", shop), "orders");
  EXPECT_FALSE(ClientTopic("bank", shop));
  EXPECT_FALSE(ClientTopic("", shop));          // the unnamed namespace sees no scoped topic
  EXPECT_FALSE(ClientTopic("shop", "orders"));  // nor a namespace an unscoped one
  EXPECT_EQ(ClientTopic("", "orders"), "orders");
  // A separator after something that is no namespace: no namespace's topic.
  EXPECT_FALSE(ClientTopic("", "a b\x1Fx"));
  EXPECT_FALSE(ClientTopic("a b", "a b\x1Fx"));
  EXPECT_EQ(DisplayTopic(shop), "shop/orders");
  EXPECT_EQ(DisplayTopic("orders"), "orders");
}

TEST(ScopeTest, NamespaceNames) {
  for (const char* ok : {"shop", "a", "A-b_c.9",
                         "x123456789012345678901234567890123456789012345678"
                         "90123456789012"}) {
    EXPECT_TRUE(IsValidNamespace(ok)) << ok;
  }
  for (const char* bad : {"", "*", "a b", "a/b", "a\x1F", "é",
                          "x1234567890123456789012345678901234567890123456789012345678901234"}) {
    EXPECT_FALSE(IsValidNamespace(bad)) << bad;
  }
}

TEST(ScopeTest, TheServiceChecksTheClientPartOfAnInternalName) {
  Limits limits;
  limits.max_topic_bytes = 8;
  EXPECT_TRUE(ValidateScopedTopic(ScopedTopic("shop", "orders"), limits).ok());
  // The client part is held to the limits, with the client's sentence.
  Status s = ValidateScopedTopic(ScopedTopic("shop", "123456789"), limits);
  EXPECT_EQ(s.message(), "topic is 9 bytes long; the limit is 8 bytes (max-topic-bytes)");
  EXPECT_EQ(ValidateScopedTopic(ScopedTopic("shop", ""), limits).message(), "topic is empty");
  // A client's name with the separator is refused by the client check.
  EXPECT_FALSE(ValidateTopic("shop\x1Fx", limits).ok());
  EXPECT_FALSE(ValidateScopedTopic("a b\x1Fx", limits).ok());  // no valid namespace before it
}

}  // namespace
}  // namespace chronoq::core
