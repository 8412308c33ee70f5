// Histogram: latency distribution with microsecond resolution, in the manner of HdrHistogram:
// exact below 1024 us, then 512 linear sub-buckets per power of two (relative error < 0.2 %).
// Records non-negative values up to 2^43 us (about 100 days); larger ones count as the maximum.
// Not thread-safe; merge per-thread histograms with Merge().
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace chronoq::bench {

class Histogram {
 public:
  Histogram();
  void Record(int64_t value_us);
  void Merge(const Histogram& other);

  int64_t count() const { return count_; }
  int64_t min() const { return count_ ? min_ : 0; }
  int64_t max() const { return max_; }
  double mean() const { return count_ ? static_cast<double>(sum_) / count_ : 0; }
  // The smallest recorded value v such that at least p percent of values are <= v
  // (reported as the upper edge of its bucket, never above max()).
  int64_t Percentile(double p) const;

  // "p50 1.2 ms  p90 ...  max ..." for humans.
  std::string Summary() const;

 private:
  static int Index(int64_t v);
  static int64_t UpperEdge(int index);
  std::vector<int64_t> buckets_;
  int64_t count_ = 0;
  int64_t sum_ = 0;
  int64_t min_ = INT64_MAX;
  int64_t max_ = 0;
};

// "850 us", "12.3 ms", "4.20 s".
std::string FormatMicros(int64_t us);

}  // namespace chronoq::bench
