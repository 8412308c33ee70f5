// MonitorRecorder: the per-node statistics behind camellia's getMonitorData (API.md section 4):
// per-topic request counters and time-gap statistics, kept per interval of
// monitor-interval-seconds. Intervals are aligned to the Unix epoch; the snapshot shows the last
// completed interval (empty before the first one completes). Rotation happens lazily on the next
// call, so no timer is needed and a fake clock drives it in tests.
//
// Thread-safety: all methods are thread-safe (one mutex; callers batch per operation).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/mutex.h"
#include "base/thread_annotations.h"
#include "base/time.h"

namespace chronoq::metrics {

enum class MonitorCounter {
  kSendMsg,
  kPullMsg,  // messages returned
  kDeleteMsg,
  kAckMsg,
  kGetMsg,
  kTriggerMsgReady,
  kTriggerMsgEndLife,
  kTriggerMsgTimeout,
};
inline constexpr int kMonitorCounterCount = 8;

struct RequestStats {
  std::string topic;
  std::array<int64_t, kMonitorCounterCount> counts{};  // indexed by MonitorCounter
  int64_t get(MonitorCounter c) const { return counts[static_cast<int>(c)]; }
};

struct GapStats {
  std::string topic;
  int64_t count = 0;
  double avg = 0;
  int64_t max = 0;
};

struct MonitorSnapshot {
  std::vector<RequestStats> request_stats;  // sorted by topic
  std::vector<GapStats> pull_gaps;          // delivery time - trigger time, ms
  std::vector<GapStats> ready_gaps;         // time it became consumable - trigger time, ms
};

class MonitorRecorder {
 public:
  explicit MonitorRecorder(Millis interval);

  void Add(std::string_view topic, MonitorCounter c, int64_t n, TimePoint now) CQ_EXCLUDES(mu_);
  // Adds `count` samples with the given sum and maximum.
  void AddPullGap(std::string_view topic, int64_t count, int64_t sum_ms, int64_t max_ms,
                  TimePoint now) CQ_EXCLUDES(mu_);
  void AddReadyGap(std::string_view topic, int64_t count, int64_t sum_ms, int64_t max_ms,
                   TimePoint now) CQ_EXCLUDES(mu_);

  // The statistics of the last completed interval as of `now`.
  MonitorSnapshot LastCompleted(TimePoint now) CQ_EXCLUDES(mu_);

 private:
  struct Gap {
    int64_t count = 0;
    int64_t sum = 0;
    int64_t max = 0;
  };
  struct TopicStats {
    std::array<int64_t, kMonitorCounterCount> counts{};
    bool counted = false;
    Gap pull;
    Gap ready;
  };
  using Interval = std::map<std::string, TopicStats, std::less<>>;

  void Rotate(TimePoint now) CQ_REQUIRES(mu_);
  TopicStats& At(std::string_view topic, TimePoint now) CQ_REQUIRES(mu_);
  static void AddGap(Gap& g, int64_t count, int64_t sum, int64_t max);

  const int64_t interval_ms_;
  base::Mutex mu_;
  int64_t current_id_ CQ_GUARDED_BY(mu_) = INT64_MIN;
  Interval current_ CQ_GUARDED_BY(mu_);
  Interval last_ CQ_GUARDED_BY(mu_);
};

}  // namespace chronoq::metrics
