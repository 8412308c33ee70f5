// PushMetrics: the figures of push delivery (docs/metrics.md): attempts by callback kind and
// outcome, the duration of each attempt, and push lateness (the start of a message's first attempt
// minus its trigger time). The scheduler reports to it as its PushObserver; a scrape renders it.
// In-flight pushes per target are the transport's (the app renders them).
//
// Thread-safety: all methods are thread-safe (lock-free instruments).
#pragma once

#include <array>
#include <chrono>

#include "base/clock.h"
#include "metrics/exposition.h"
#include "metrics/instruments.h"
#include "service/push_scheduler.h"

namespace chronoq::service {

class PushMetrics final : public PushObserver {
 public:
  // REQUIRES: `clock` outlives this.
  explicit PushMetrics(const base::Clock* clock);

  void OnStart(const PushJob& job) override;
  void OnOutcome(const PushJob& job, const PushOutcome& outcome,
                 std::chrono::nanoseconds elapsed) override;

  // cq_push_attempts_total{kind,outcome}, cq_push_duration_seconds{kind},
  // cq_push_lateness_seconds.
  void Render(metrics::TextWriter& w) const;

  // Attempts of one kind ended with one outcome (for tests).
  uint64_t attempts(core::CallbackType kind, std::string_view outcome) const;

 private:
  static constexpr int kKinds = 3;     // core::CallbackType
  static constexpr int kOutcomes = 4;  // ok, error, busy, lease_short

  const base::Clock* const clock_;
  std::array<std::array<metrics::Counter, kOutcomes>, kKinds> attempts_;
  std::array<metrics::DurationHistogram, kKinds> duration_;
  metrics::DurationHistogram lateness_;
};

}  // namespace chronoq::service
