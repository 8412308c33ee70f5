#include "base/split_hash_map.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <unordered_map>

namespace chronoq::base {
namespace {

// What the split is for: keys as chronoq makes them (msgIds, store keys with a common prefix)
// spread over every part, so that growing a part rehashes about 1/kParts of them, never most.
TEST(SplitPartsTest, KeysWithACommonPrefixSpreadOverEveryPart) {
  constexpr int kKeys = 256 * 400;
  SplitParts<std::unordered_map<std::string, int>, 256> parts;
  char key[48];
  for (int i = 0; i < kKeys; ++i) {
    std::snprintf(key, sizeof(key), "payloads/topic-%02d/msg-%08d", i % 16, i);
    parts.Of(key).emplace(key, i);
  }
  size_t fewest = kKeys, most = 0, total = 0;
  for (const auto& part : parts.all()) {
    fewest = std::min(fewest, part.size());
    most = std::max(most, part.size());
    total += part.size();
  }
  EXPECT_EQ(total, static_cast<size_t>(kKeys));
  EXPECT_GT(fewest, 200u);  // 400 on average
  EXPECT_LT(most, 800u);
  // A key's part is found by a string_view as by the string it was stored with.
  const std::string k = "payloads/topic-03/msg-00000019";
  EXPECT_EQ(parts.Of(std::string_view(k)).at(k), 19);
}

TEST(SplitHashMapTest, FindEmplaceEraseAndSize) {
  SplitHashMap<int, 64> m;
  EXPECT_TRUE(m.empty());
  for (int i = 0; i < 1000; ++i) EXPECT_TRUE(m.Emplace("k" + std::to_string(i), i).second);
  auto [v, inserted] = m.Emplace("k7", 70);
  EXPECT_FALSE(inserted);
  EXPECT_EQ(*v, 7);
  EXPECT_EQ(m.size(), 1000u);
  ASSERT_NE(m.Find("k999"), nullptr);
  EXPECT_EQ(*m.Find("k999"), 999);
  EXPECT_EQ(m.Find("k1000"), nullptr);
  m["k1000"] = 5;
  EXPECT_EQ(m.size(), 1001u);
  EXPECT_TRUE(m.Erase("k1000"));
  EXPECT_FALSE(m.Erase("k1000"));
  EXPECT_EQ(m.size(), 1000u);
}

}  // namespace
}  // namespace chronoq::base
