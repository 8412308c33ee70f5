#include "base/time.h"

#include <gtest/gtest.h>

#include <limits>

namespace chronoq {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

TEST(SaturatingAddTest, AddsInRange) {
  EXPECT_EQ(SaturatingAdd(int64_t{2}, int64_t{3}), 5);
  EXPECT_EQ(SaturatingAdd(int64_t{-2}, int64_t{3}), 1);
  EXPECT_EQ(SaturatingAdd(kMax, int64_t{0}), kMax);
  EXPECT_EQ(SaturatingAdd(kMax - 1, int64_t{1}), kMax);
  EXPECT_EQ(SaturatingAdd(kMin + 1, int64_t{-1}), kMin);
  EXPECT_EQ(SaturatingAdd(kMax, kMin), -1);
}

TEST(SaturatingAddTest, SaturatesInsteadOfWrapping) {
  EXPECT_EQ(SaturatingAdd(kMax, int64_t{1}), kMax);
  EXPECT_EQ(SaturatingAdd(kMax, kMax), kMax);
  EXPECT_EQ(SaturatingAdd(int64_t{1'700'000'000'000}, kMax), kMax);
  EXPECT_EQ(SaturatingAdd(kMin, int64_t{-1}), kMin);
  EXPECT_EQ(SaturatingAdd(kMin, kMin), kMin);
  EXPECT_EQ(SaturatingAdd(int64_t{-5}, kMin), kMin);
}

TEST(SaturatingAddTest, TimePointSaturatesAtLimits) {
  TimePoint t = FromEpochMs(1'700'000'000'000);
  EXPECT_EQ(SaturatingAdd(t, Millis(5)), FromEpochMs(1'700'000'000'005));
  EXPECT_EQ(SaturatingAdd(t, Millis::max()), kTimeMax);
  EXPECT_EQ(SaturatingAdd(kTimeMax, Millis(1)), kTimeMax);
  EXPECT_EQ(SaturatingAdd(kTimeMin, Millis(-1)), kTimeMin);
  EXPECT_EQ(SaturatingAdd(t, Millis(-5)), FromEpochMs(1'699'999'999'995));
}

TEST(TimeTest, EpochMsRoundTrips) {
  EXPECT_EQ(ToEpochMs(FromEpochMs(0)), 0);
  EXPECT_EQ(ToEpochMs(FromEpochMs(-1)), -1);
  EXPECT_EQ(ToEpochMs(kTimeMax), kMax);
  EXPECT_EQ(ToEpochMs(kTimeMin), kMin);
}

static_assert(SaturatingAdd(kMax, int64_t{1}) == kMax, "usable in constant expressions");

}  // namespace
}  // namespace chronoq
