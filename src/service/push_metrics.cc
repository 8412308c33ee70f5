#include "service/push_metrics.h"

#include <string_view>

namespace chronoq::service {
namespace {

constexpr std::array<std::string_view, 4> kOutcomeNames = {"ok", "error", "busy", "lease_short"};

int OutcomeIndex(const PushOutcome& o) {
  if (o.ok) return 0;
  if (!o.busy) return 1;
  return o.lease_short ? 3 : 2;
}

int KindIndex(const PushJob& job) {
  return job.callback ? static_cast<int>(job.callback->type) : 0;
}

// Push lateness is promised in milliseconds (p99 <= 5 ms at 2,000/s): finer low buckets than the
// trigger lateness's.
std::vector<double> PushLatenessBuckets() {
  return {0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300};
}

}  // namespace

PushMetrics::PushMetrics(const base::Clock* clock)
    : clock_(clock),
      duration_{metrics::DurationHistogram(metrics::LatencyBuckets()),
                metrics::DurationHistogram(metrics::LatencyBuckets()),
                metrics::DurationHistogram(metrics::LatencyBuckets())},
      lateness_(PushLatenessBuckets()) {}

void PushMetrics::OnStart(const PushJob& job) {
  const core::MessageRecord& r = job.message.record;
  if (r.retry != 1) return;  // lateness is the first attempt's
  lateness_.ObserveMillis((clock_->Now() - r.trigger_time).count());
}

void PushMetrics::OnOutcome(const PushJob& job, const PushOutcome& outcome,
                            std::chrono::nanoseconds elapsed) {
  const int kind = KindIndex(job);
  attempts_[kind][OutcomeIndex(outcome)].Add();
  if (!outcome.busy) duration_[kind].ObserveNanos(elapsed.count());
}

uint64_t PushMetrics::attempts(core::CallbackType kind, std::string_view outcome) const {
  for (int o = 0; o < kOutcomes; ++o) {
    if (kOutcomeNames[o] == outcome) return attempts_[static_cast<int>(kind)][o].value();
  }
  return 0;
}

void PushMetrics::Render(metrics::TextWriter& w) const {
  using metrics::MetricType;
  w.Family("cq_push_attempts_total",
           "push attempts by callback kind (http, grpc, kafka) and outcome (ok: delivered; error: "
           "failed, retried after the retry interval; busy: the target's queue was full, not "
           "counted as an attempt; lease_short: not started because the message's lease would "
           "have ended before the call's timeout and the write of its outcome, handed back, not "
           "counted as an attempt)",
           MetricType::kCounter);
  for (int k = 0; k < kKinds; ++k) {
    const std::string_view kind = core::CallbackTypeName(static_cast<core::CallbackType>(k));
    for (int o = 0; o < kOutcomes; ++o) {
      w.Sample("cq_push_attempts_total", {{"kind", kind}, {"outcome", kOutcomeNames[o]}},
               static_cast<double>(attempts_[k][o].value()));
    }
  }
  w.Family("cq_push_duration_seconds",
           "how long push attempts took, from their start to their outcome (busy ones excluded)",
           MetricType::kHistogram);
  for (int k = 0; k < kKinds; ++k) {
    const metrics::Label label{"kind", core::CallbackTypeName(static_cast<core::CallbackType>(k))};
    w.Histogram("cq_push_duration_seconds", std::span<const metrics::Label>(&label, 1),
                duration_[k].Read());
  }
  w.Family("cq_push_lateness_seconds",
           "start of a message's first push attempt minus its trigger time",
           MetricType::kHistogram);
  w.Histogram("cq_push_lateness_seconds", {}, lateness_.Read());
}

}  // namespace chronoq::service
