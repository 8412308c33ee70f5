// TopicInfo: the per-topic counts of getTopicInfo (API.md section 4), including the nine
// waiting-time buckets. Plain value type.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/time.h"

namespace chronoq::core {

inline constexpr int kBucketCount = 9;

// Lower bounds of the half-open buckets [lo, hi) of "time until trigger".
inline constexpr std::array<Millis, kBucketCount> kBucketLowerBounds = {
    Millis(0),          Millis(60'000),      Millis(600'000),
    Millis(1'800'000),  Millis(3'600'000),   Millis(21'600'000),
    Millis(86'400'000), Millis(604'800'000), Millis(2'592'000'000),
};

inline constexpr std::array<std::string_view, kBucketCount> kBucketNames = {
    "sizeOf0To1min",      "sizeOf1minTo10min",  "sizeOf10minTo30min",
    "sizeOf30minTo1hour", "sizeOf1hourTo6hour", "sizeOf6hourTo1day",
    "sizeOf1dayTo7day",   "sizeOf7dayTo30day",  "sizeOf30dayToInfinite",
};

// The bucket of a waiting message whose trigger is `until` from now (until > 0).
inline int BucketOf(Millis until) {
  int b = 0;
  while (b + 1 < kBucketCount && until >= kBucketLowerBounds[b + 1]) ++b;
  return b;
}

struct TopicInfo {
  std::string topic;
  int64_t waiting = 0;                          // status 1
  int64_t ready = 0;                            // status 2
  int64_t consuming = 0;                        // status 3
  std::array<int64_t, kBucketCount> buckets{};  // sums to `waiting`

  bool operator==(const TopicInfo&) const = default;
};

}  // namespace chronoq::core
