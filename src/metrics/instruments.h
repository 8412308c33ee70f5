// Instruments that other modules bump on their hot paths: a Counter and a Histogram of durations.
// Both are lock-free (relaxed atomics); reading them for a scrape never blocks a writer. Values
// only grow, so `rate()` works on every counter and on a histogram's _sum and _count.
//
// Thread-safety: all methods are thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

namespace chronoq::metrics {

class Counter {
 public:
  void Add(uint64_t n = 1) { v_.fetch_add(n, std::memory_order_relaxed); }
  uint64_t value() const { return v_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> v_{0};
};

// A consistent-enough copy of a histogram for rendering: bucket counts are per bucket (not
// cumulative); the last bucket is +Inf.
class HistogramData {
 public:
  std::vector<double> bounds_seconds;  // upper bounds, increasing, without +Inf
  std::vector<uint64_t> counts;        // bounds_seconds.size() + 1 entries
  uint64_t count = 0;
  double sum_seconds = 0;
};

// Observations of durations, in fixed buckets given in seconds.
class DurationHistogram {
 public:
  explicit DurationHistogram(std::vector<double> bounds_seconds);

  // Negative durations count as zero.
  void ObserveNanos(int64_t nanos);
  void ObserveMillis(int64_t millis) { ObserveNanos(millis * 1'000'000); }
  HistogramData Read() const;

 private:
  std::vector<double> bounds_;
  std::vector<int64_t> bounds_ns_;
  std::unique_ptr<std::atomic<uint64_t>[]> counts_;  // bounds_.size() + 1
  std::atomic<uint64_t> sum_ns_{0};
};

// Bucket sets used by chronoq's histograms.
// HTTP request latency: 0.5 ms .. 60 s (long polls wait up to their timeout).
std::vector<double> LatencyBuckets();
// Trigger lateness: 5 ms .. 1 h.
std::vector<double> LatenessBuckets();

}  // namespace chronoq::metrics
