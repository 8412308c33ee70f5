#include "redis/cluster.h"

#include <gtest/gtest.h>

namespace chronoq::redis {
namespace {

// Values from `CLUSTER KEYSLOT` of redis-server 7.0.
TEST(HashSlotTest, MatchesRedis) {
  EXPECT_EQ(HashSlot("123456789"), 0x31C3 & 16383);  // the spec's CRC16 check value
  EXPECT_EQ(HashSlot("foo"), 12182);
  EXPECT_EQ(HashSlot("bar"), 5061);
}

TEST(HashSlotTest, TheHashTagDecides) {
  EXPECT_EQ(HashSlot("{user1000}.following"), HashSlot("{user1000}.followers"));
  EXPECT_EQ(HashSlot("cq:{ns:topic}:r:abc"), HashSlot("ns:topic"));
  // An empty tag "{}" does not count: the whole key is hashed.
  EXPECT_EQ(HashSlot("foo{}{bar}"), 8363);
  // Only the first tag counts: "{bar".
  EXPECT_EQ(HashSlot("foo{{bar}}zap"), 4015);
  EXPECT_EQ(HashSlot("{bar"), 4015);
}

}  // namespace
}  // namespace chronoq::redis
