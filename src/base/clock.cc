#include "base/clock.h"

namespace chronoq::base {

TimePoint SystemClock::Now() const {
  return std::chrono::floor<Millis>(std::chrono::system_clock::now());
}

SystemClock* SystemClock::Get() {
  static SystemClock clock;
  return &clock;
}

}  // namespace chronoq::base
