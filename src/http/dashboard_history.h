// DashboardHistory: the in-server history behind the dashboard's live charts (docs/dashboard.md),
// so that no Prometheus is needed to see the last hour. A bounded ring of samples, one every
// `interval` (5 s), `points` of them (720: one hour):
//
//   - totals of the node, always: sends, deliveries, acks and dead letters per second, messages
//     waiting, ready and consuming, trigger lateness p99 (ms) and the number of topics;
//   - per topic, for at most `max_topic_series` topics (100): the first six of those figures.
//     Which topics: those viewed in the dashboard within `viewed_for` (10 min, at most half of
//     the series), then the busiest by an average of their sends plus deliveries per second
//     (half-life of about a minute), then the deepest. A topic that leaves the set loses its
//     series; one that enters starts with an empty past. So memory is bounded whatever the
//     number of topics: ~20 KB per series, ~2 MB in all, plus the last figures of every topic.
//
// The history only keeps and answers; the Dashboard (dashboard.h) feeds it a HistorySample read
// from the service every interval. Rates come from the differences of the Prometheus counters
// (metrics::QueueProbe) between two samples; a topic without a label of its own there (beyond
// `metrics-max-topics`) has no rates (null), only counts. Lateness is the node's (the histogram
// has no topic label).
//
// Thread-safety: all methods are thread-safe (one mutex; a sample or an answer holds it for well
// under a millisecond with 10,000 topics).
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/mutex.h"
#include "base/thread_annotations.h"
#include "base/time.h"
#include "core/topic_info.h"
#include "metrics/instruments.h"
#include "metrics/queue_probe.h"

namespace chronoq::http {

class JsonWriter;

struct HistoryOptions {
  Millis interval{5'000};
  size_t points = 720;  // one hour at 5 s
  size_t max_topic_series = 100;
  Millis viewed_for{600'000};
};

// What the Dashboard reads every interval.
struct HistorySample {
  TimePoint at;
  bool depth_ok = true;                      // false: ListTopics failed; no counts this time
  std::vector<core::TopicInfo> topics;       // every topic's depth (buckets unused)
  std::vector<metrics::TopicCounts> counts;  // QueueProbe::ReadCounts()
  metrics::HistogramData lateness;           // QueueProbe::ReadLateness()
};

inline constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();

// One row of the overview: a topic's depth (read now) and its last rates.
struct TopicRow {
  std::string topic;  // the internal name (core/scope.h), as the history keys it
  std::string name;   // as the dashboard's caller reads it (handlers_dashboard.cc)
  std::string ns;     // set when the topic is in another namespace than the caller's
  int64_t waiting = 0;
  int64_t ready = 0;
  int64_t consuming = 0;
  double sends = kUnknown;  // per second over the last interval; NaN: unknown
  double deliveries = kUnknown;
  double dead_letters = kUnknown;
  int64_t dead_letters_total = -1;  // since the server started; -1: unknown
  bool tracked = false;             // has a per-topic series
};

class DashboardHistory {
 public:
  // The figures of a series, in this order; topics have the first kTopicFields.
  enum Field : int {
    kSends,
    kDeliveries,
    kAcks,
    kDeadLetters,
    kWaiting,
    kReady,
    kConsuming,
    kLatenessP99,
    kTopics,
  };
  static constexpr int kTopicFields = 7;
  static constexpr int kTotalFields = 9;

  explicit DashboardHistory(HistoryOptions options = {});

  const HistoryOptions& options() const { return options_; }

  void Add(const HistorySample& s) CQ_EXCLUDES(mu_);
  // The dashboard shows `topic`: it gets a series from the next sample on, for `viewed_for`.
  void Viewed(std::string_view topic, TimePoint now) CQ_EXCLUDES(mu_);

  // Writes the members "intervalMillis", "times" (ms epoch, oldest first), "total" (one array per
  // figure, null where unknown; null itself unless `totals`: the node's totals span every
  // namespace), "tracked" and "series" (the arrays of `topic`, an internal name, or null when it
  // has no series) into the open object of `w`. `topic` empty: no topic.
  void WriteHistory(JsonWriter& w, std::string_view topic, bool totals = true) const
      CQ_EXCLUDES(mu_);
  // Fills the rates and `tracked` of each row from the last sample.
  void Annotate(std::vector<TopicRow>& rows) const CQ_EXCLUDES(mu_);
  // The topic's sends plus deliveries per second over the last hour, averaged into at most
  // `buckets` points (NaN where unknown); empty when it has no series.
  std::vector<double> Activity(std::string_view topic, size_t buckets) const CQ_EXCLUDES(mu_);
  size_t samples() const CQ_EXCLUDES(mu_);
  size_t tracked_topics() const CQ_EXCLUDES(mu_);

  // p99 in ms of the observations between two reads of one histogram (NaN when none),
  // interpolated linearly inside its bucket.
  static double P99Millis(const metrics::HistogramData& before, const metrics::HistogramData& now);

 private:
  struct Latest {
    double sends = kUnknown;
    double deliveries = kUnknown;
    double dead_letters = kUnknown;
    int64_t dead_letters_total = -1;
  };
  // One series: points values per field, field-major; NaN where unknown.
  using Series = std::vector<float>;
  using Counts = std::array<uint64_t, metrics::kQueueEventCount>;
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  template <typename V>
  using Map = std::unordered_map<std::string, V, Hash, std::equal_to<>>;

  // Picks the topics with a series for this sample, given each present topic's depth.
  void Retrack(const Map<int64_t>& depth, TimePoint now) CQ_REQUIRES(mu_);
  void Put(Series& s, int field, size_t slot, double v) const;
  // Slots of the ring, oldest first.
  std::vector<size_t> Slots() const CQ_REQUIRES(mu_);

  const HistoryOptions options_;
  mutable base::Mutex mu_;
  std::vector<int64_t> times_ CQ_GUARDED_BY(mu_);  // ms epoch per slot
  size_t next_ CQ_GUARDED_BY(mu_) = 0;             // the slot of the next sample
  size_t size_ CQ_GUARDED_BY(mu_) = 0;             // samples held (<= points)
  Series total_ CQ_GUARDED_BY(mu_);
  Map<Series> series_ CQ_GUARDED_BY(mu_);
  Map<Latest> latest_ CQ_GUARDED_BY(mu_);     // every topic of the last sample
  Map<double> activity_ CQ_GUARDED_BY(mu_);   // average sends + deliveries per second
  Map<TimePoint> viewed_ CQ_GUARDED_BY(mu_);  // last time each topic was viewed
  // The previous sample's counters, to difference.
  bool have_prev_ CQ_GUARDED_BY(mu_) = false;
  TimePoint prev_at_ CQ_GUARDED_BY(mu_);
  Map<Counts> prev_counts_ CQ_GUARDED_BY(mu_);
  metrics::HistogramData prev_lateness_ CQ_GUARDED_BY(mu_);
};

}  // namespace chronoq::http
