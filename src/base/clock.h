// Clock: the source of "now" for everything that has queue semantics (trigger times, ack
// deadlines, ttl, retention, monitor intervals). Injected so tests control time.
//
// Thread-safety: every implementation is safe to call from any thread.
#pragma once

#include <atomic>

#include "base/time.h"

namespace chronoq::base {

class Clock {
 public:
  virtual ~Clock() = default;
  // Milliseconds since the Unix epoch, rounded down.
  virtual TimePoint Now() const = 0;
};

// The system's real-time clock.
class SystemClock final : public Clock {
 public:
  TimePoint Now() const override;
  // Process-wide instance.
  static SystemClock* Get();
};

// A clock that moves only when told to. Used by unit tests and by the server's test mode
// (`serve --test-clock`), where integration tests advance time over HTTP instead of sleeping.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(TimePoint start) : now_ms_(ToEpochMs(start)) {}
  TimePoint Now() const override { return FromEpochMs(now_ms_.load(std::memory_order_acquire)); }
  void Set(TimePoint t) { now_ms_.store(ToEpochMs(t), std::memory_order_release); }
  void Advance(Millis d) { now_ms_.fetch_add(d.count(), std::memory_order_acq_rel); }

 private:
  std::atomic<int64_t> now_ms_;
};

}  // namespace chronoq::base
