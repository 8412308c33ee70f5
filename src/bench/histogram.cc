#include "bench/histogram.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>

namespace chronoq::bench {
namespace {

constexpr int kSubBits = 10;  // 1024 exact values, then 512 per power of two
constexpr int64_t kSub = int64_t{1} << kSubBits;
constexpr int kHalf = static_cast<int>(kSub / 2);
constexpr int kMaxBits = 43;
constexpr int kBuckets = static_cast<int>(kSub) + (kMaxBits - kSubBits + 1) * kHalf;

}  // namespace

Histogram::Histogram() : buckets_(kBuckets, 0) {}

int Histogram::Index(int64_t v) {
  if (v < kSub) return static_cast<int>(v);
  int bits = 64 - std::countl_zero(static_cast<uint64_t>(v));  // v in [2^(bits-1), 2^bits)
  int shift = bits - kSubBits;                                 // >= 1
  int sub = static_cast<int>(v >> shift);                      // in [512, 1024)
  int index = static_cast<int>(kSub) + (shift - 1) * kHalf + (sub - kHalf);
  return std::min(index, kBuckets - 1);
}

int64_t Histogram::UpperEdge(int index) {
  if (index < kSub) return index;
  int rel = index - static_cast<int>(kSub);
  int shift = rel / kHalf + 1;
  int64_t sub = rel % kHalf + kHalf;
  return ((sub + 1) << shift) - 1;
}

void Histogram::Record(int64_t v) {
  if (v < 0) v = 0;
  ++buckets_[Index(v)];
  ++count_;
  sum_ += v;
  min_ = std::min(min_, v);
  max_ = std::max(max_, v);
}

void Histogram::Merge(const Histogram& o) {
  for (size_t i = 0; i < buckets_.size(); ++i) buckets_[i] += o.buckets_[i];
  count_ += o.count_;
  sum_ += o.sum_;
  min_ = std::min(min_, o.min_);
  max_ = std::max(max_, o.max_);
}

int64_t Histogram::Percentile(double p) const {
  if (count_ == 0) return 0;
  auto want = static_cast<int64_t>(p / 100.0 * static_cast<double>(count_) + 0.9999999);
  want = std::clamp<int64_t>(want, 1, count_);
  int64_t seen = 0;
  for (int i = 0; i < kBuckets; ++i) {
    seen += buckets_[i];
    if (seen >= want) return std::min(UpperEdge(i), max_);
  }
  return max_;
}

std::string FormatMicros(int64_t us) {
  if (us < 1000) return fmt::format("{} us", us);
  if (us < 1'000'000) return fmt::format("{:.2f} ms", us / 1000.0);
  return fmt::format("{:.2f} s", us / 1e6);
}

std::string Histogram::Summary() const {
  return fmt::format("p50 {}  p90 {}  p99 {}  p99.9 {}  max {}", FormatMicros(Percentile(50)),
                     FormatMicros(Percentile(90)), FormatMicros(Percentile(99)),
                     FormatMicros(Percentile(99.9)), FormatMicros(max()));
}

}  // namespace chronoq::bench
