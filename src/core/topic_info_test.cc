#include "core/topic_info.h"

#include <gtest/gtest.h>

namespace chronoq::core {
namespace {

constexpr int64_t kMin = 60'000;
constexpr int64_t kHour = 3'600'000;
constexpr int64_t kDay = 86'400'000;

TEST(TopicInfoTest, BucketOfHalfOpenBoundaries) {
  struct Row {
    int64_t lo;  // inclusive lower bound of bucket b
    int b;
  };
  const Row rows[] = {{0, 0},         {kMin, 1}, {10 * kMin, 2}, {30 * kMin, 3}, {kHour, 4},
                      {6 * kHour, 5}, {kDay, 6}, {7 * kDay, 7},  {30 * kDay, 8}};
  for (const Row& r : rows) {
    EXPECT_EQ(BucketOf(Millis(r.lo)), r.b) << "at " << r.lo;
    EXPECT_EQ(BucketOf(Millis(r.lo + 1)), r.b) << "just after " << r.lo;
    if (r.b > 0) {
      EXPECT_EQ(BucketOf(Millis(r.lo - 1)), r.b - 1) << "just before " << r.lo;
    }
  }
}

TEST(TopicInfoTest, BucketOfExtremes) {
  EXPECT_EQ(BucketOf(Millis(1)), 0);
  EXPECT_EQ(BucketOf(Millis(0)), 0);
  EXPECT_EQ(BucketOf(Millis(-5)), 0);
  EXPECT_EQ(BucketOf(Millis(365 * kDay)), 8);
  EXPECT_EQ(BucketOf(Millis::max()), 8);
}

TEST(TopicInfoTest, BucketNamesAndBoundsMatchTheApi) {
  EXPECT_EQ(kBucketNames[0], "sizeOf0To1min");
  EXPECT_EQ(kBucketNames[1], "sizeOf1minTo10min");
  EXPECT_EQ(kBucketNames[2], "sizeOf10minTo30min");
  EXPECT_EQ(kBucketNames[3], "sizeOf30minTo1hour");
  EXPECT_EQ(kBucketNames[4], "sizeOf1hourTo6hour");
  EXPECT_EQ(kBucketNames[5], "sizeOf6hourTo1day");
  EXPECT_EQ(kBucketNames[6], "sizeOf1dayTo7day");
  EXPECT_EQ(kBucketNames[7], "sizeOf7dayTo30day");
  EXPECT_EQ(kBucketNames[8], "sizeOf30dayToInfinite");
  for (int b = 1; b < kBucketCount; ++b)
    EXPECT_LT(kBucketLowerBounds[b - 1], kBucketLowerBounds[b]);
}

TEST(TopicInfoTest, DefaultIsAllZero) {
  TopicInfo info;
  EXPECT_EQ(info.waiting, 0);
  EXPECT_EQ(info.ready, 0);
  EXPECT_EQ(info.consuming, 0);
  for (int64_t b : info.buckets) EXPECT_EQ(b, 0);
}

}  // namespace
}  // namespace chronoq::core
