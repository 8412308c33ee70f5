#include "redis/key_id.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "base/random.h"

namespace chronoq::redis {
namespace {

// Every msgId a client sends comes back as it was; generated ones take 17 bytes instead of 32
// (the saving of format 4's 278 bytes per waiting message, docs/redis.md "Format 4").
TEST(KeyIdTest, GeneratedMsgIdsAreStoredAsTheirSixteenBytesAndComeBackAsSent) {
  for (int i = 0; i < 1000; ++i) {
    const std::string id = base::NewMsgId();
    const std::string k = KeyIdOf(id);
    ASSERT_EQ(k.size(), 17u) << id;
    EXPECT_EQ(k[0], '\x01');
    EXPECT_EQ(MsgIdOf(k), id);
  }
  EXPECT_EQ(KeyIdOf("00ff00000000000000000000000000a9"),
            std::string("\x01\x00\xff", 3) + std::string(13, '\0') + "\xa9");
}

TEST(KeyIdTest, AnyOtherMsgIdIsItsOwnKeyId) {
  const std::vector<std::string> ids = {
      "order-1",
      "",
      "0123456789ABCDEF0123456789abcdef",   // uppercase: would not come back as sent
      "0123456789abcdef0123456789abcde",    // 31 digits
      "0123456789abcdef0123456789abcdef0",  // 33
      "0123456789abcdef0123456789abcdeg",
      "0123456789abcdef-123456789abcdef",
      "é0123456789abcdef0123456789abcd",  // 32 bytes, not hex
  };
  for (const std::string& id : ids) {
    EXPECT_EQ(KeyIdOf(id), id);
    EXPECT_EQ(MsgIdOf(KeyIdOf(id)), id);
  }
}

// The node picks the record bucket; generated msgIds spread evenly over the 256 buckets, so
// no bucket of a large topic grows far beyond the others.
TEST(KeyIdTest, GeneratedMsgIdsSpreadEvenlyOverTheRecordBuckets) {
  std::vector<int> n(kRecordBuckets, 0);
  const int kIds = 256 * 400;
  for (int i = 0; i < kIds; ++i) {
    const int b = RecordBucketOf(KeyIdOf(base::NewMsgId()));
    ASSERT_GE(b, 0);
    ASSERT_LT(b, kRecordBuckets);
    ++n[b];
  }
  for (int b = 0; b < kRecordBuckets; ++b) {
    EXPECT_GT(n[b], 300) << "bucket " << b;  // 400 expected; sd 20
    EXPECT_LT(n[b], 500) << "bucket " << b;
  }
  // Sequential client ids too (a common choice: "<prefix>-<counter>").
  std::fill(n.begin(), n.end(), 0);
  for (int i = 0; i < kIds; ++i) ++n[RecordBucketOf(KeyIdOf("order-" + std::to_string(i)))];
  for (int b = 0; b < kRecordBuckets; ++b) {
    EXPECT_GT(n[b], 250) << "bucket " << b;
    EXPECT_LT(n[b], 550) << "bucket " << b;
  }
}

}  // namespace
}  // namespace chronoq::redis
