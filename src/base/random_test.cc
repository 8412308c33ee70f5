#include "base/random.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <thread>
#include <vector>

namespace chronoq::base {
namespace {

bool IsLowerHex32(const std::string& s) {
  if (s.size() != 32) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

TEST(NewMsgIdTest, Is32LowercaseHexChars) {
  for (int i = 0; i < 1000; ++i) {
    std::string id = NewMsgId();
    EXPECT_TRUE(IsLowerHex32(id)) << id;
  }
}

TEST(NewMsgIdTest, IdsAreUnique) {
  std::set<std::string> seen;
  for (int i = 0; i < 100'000; ++i) ASSERT_TRUE(seen.insert(NewMsgId()).second);
}

TEST(NewMsgIdTest, UsesEveryHexDigitInEveryPosition) {
  // 128 random bits: over many ids every position takes many values (catches a stuck half).
  std::vector<std::set<char>> per_pos(32);
  for (int i = 0; i < 2000; ++i) {
    std::string id = NewMsgId();
    for (int p = 0; p < 32; ++p) per_pos[p].insert(id[p]);
  }
  for (int p = 0; p < 32; ++p) EXPECT_EQ(per_pos[p].size(), 16u) << "position " << p;
}

TEST(NewMsgIdTest, ThreadsGetDistinctIds) {
  std::vector<std::vector<std::string>> ids(4);
  std::vector<std::thread> threads;
  for (auto& v : ids) {
    threads.emplace_back([&v] {
      for (int i = 0; i < 5000; ++i) v.push_back(NewMsgId());
    });
  }
  for (auto& t : threads) t.join();
  std::set<std::string> all;
  for (auto& v : ids) all.insert(v.begin(), v.end());
  EXPECT_EQ(all.size(), 20'000u);
}

}  // namespace
}  // namespace chronoq::base
