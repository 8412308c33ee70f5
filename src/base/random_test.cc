#include "base/random.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
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

TEST(NewMsgIdTest, EndsWithSixtyFourRandomBits) {
  // Positions 16..31 are random: over many ids each takes every hex digit (catches a stuck half).
  std::vector<std::set<char>> per_pos(32);
  for (int i = 0; i < 2000; ++i) {
    std::string id = NewMsgId();
    for (int p = 0; p < 32; ++p) per_pos[p].insert(id[p]);
  }
  for (int p = 16; p < 32; ++p) EXPECT_EQ(per_pos[p].size(), 16u) << "position " << p;
}

TEST(NewMsgIdTest, LaterIdsSortLater) {
  // Time and a counter first: ids from one thread come out in increasing order, so new records
  // land at the end of their topic's key range.
  std::string prev = NewMsgId();
  for (int i = 0; i < 10'000; ++i) {
    std::string id = NewMsgId();
    ASSERT_LE(prev.substr(0, 12), id.substr(0, 12)) << i;  // 48 bits of milliseconds
    if (prev.substr(0, 12) == id.substr(0, 12)) {
      ASSERT_NE(prev.substr(12, 4), id.substr(12, 4)) << i;  // the counter tells them apart
    }
    prev = id;
  }
}

TEST(NewMsgIdTest, StartsWithTheMillisecondsOfItsCreationInHex) {
  auto now_ms = [] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  };
  const int64_t before = now_ms();
  const std::string id = NewMsgId();
  const int64_t after = now_ms();
  const int64_t ms = std::stoll(id.substr(0, 12), nullptr, 16);  // the top 48 bits
  EXPECT_GE(ms, before) << id;
  EXPECT_LE(ms, after) << id;
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
