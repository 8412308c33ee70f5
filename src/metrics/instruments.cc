#include "metrics/instruments.h"

#include <algorithm>

namespace chronoq::metrics {

DurationHistogram::DurationHistogram(std::vector<double> bounds_seconds)
    : bounds_(std::move(bounds_seconds)),
      counts_(std::make_unique<std::atomic<uint64_t>[]>(bounds_.size() + 1)) {
  bounds_ns_.reserve(bounds_.size());
  for (double b : bounds_) bounds_ns_.push_back(static_cast<int64_t>(b * 1e9));
}

void DurationHistogram::ObserveNanos(int64_t nanos) {
  nanos = std::max<int64_t>(0, nanos);
  // le is inclusive: the first bound >= the value.
  auto it = std::lower_bound(bounds_ns_.begin(), bounds_ns_.end(), nanos);
  counts_[it - bounds_ns_.begin()].fetch_add(1, std::memory_order_relaxed);
  sum_ns_.fetch_add(static_cast<uint64_t>(nanos), std::memory_order_relaxed);
}

HistogramData DurationHistogram::Read() const {
  HistogramData d;
  d.bounds_seconds = bounds_;
  d.counts.resize(bounds_.size() + 1);
  uint64_t total = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    d.counts[i] = counts_[i].load(std::memory_order_relaxed);
    total += d.counts[i];
  }
  // The count is the sum of the buckets read, so that +Inf and _count always agree.
  d.count = total;
  d.sum_seconds = static_cast<double>(sum_ns_.load(std::memory_order_relaxed)) / 1e9;
  return d;
}

std::vector<double> LatencyBuckets() {
  return {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};
}

std::vector<double> LatenessBuckets() {
  return {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600};
}

}  // namespace chronoq::metrics
