// Time types. The queue works in whole milliseconds of wall-clock time (the wire format is
// milliseconds since the Unix epoch). Deadlines are absolute TimePoints, never relative delays.
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>

namespace chronoq {

using Millis = std::chrono::milliseconds;
using TimePoint = std::chrono::sys_time<Millis>;

inline constexpr TimePoint kTimeMin = TimePoint(Millis(std::numeric_limits<int64_t>::min()));
inline constexpr TimePoint kTimeMax = TimePoint(Millis(std::numeric_limits<int64_t>::max()));

inline constexpr int64_t ToEpochMs(TimePoint t) { return t.time_since_epoch().count(); }
inline constexpr TimePoint FromEpochMs(int64_t ms) { return TimePoint(Millis(ms)); }

// a + b without wrapping around: saturates at the int64 limits.
inline constexpr int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t out = 0;
  if (__builtin_add_overflow(a, b, &out)) {
    return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
  }
  return out;
}

// t + d, saturating at kTimeMax / kTimeMin.
inline constexpr TimePoint SaturatingAdd(TimePoint t, Millis d) {
  return FromEpochMs(SaturatingAdd(ToEpochMs(t), d.count()));
}

}  // namespace chronoq
