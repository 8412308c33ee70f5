#include "metrics/monitor.h"

#include <algorithm>

namespace chronoq::metrics {
namespace {

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

}  // namespace

MonitorRecorder::MonitorRecorder(Millis interval)
    : interval_ms_(std::max<int64_t>(1, interval.count())) {}

void MonitorRecorder::Rotate(TimePoint now) {
  int64_t id = FloorDiv(ToEpochMs(now), interval_ms_);
  if (id <= current_id_) return;
  if (id == current_id_ + 1) {
    last_ = std::move(current_);
  } else {
    last_.clear();  // the interval before `id` saw nothing
  }
  current_.clear();
  current_id_ = id;
}

MonitorRecorder::TopicStats& MonitorRecorder::At(std::string_view topic, TimePoint now) {
  Rotate(now);
  auto it = current_.find(topic);
  if (it == current_.end()) it = current_.emplace(std::string(topic), TopicStats{}).first;
  return it->second;
}

void MonitorRecorder::AddGap(Gap& g, int64_t count, int64_t sum, int64_t max) {
  g.count += count;
  g.sum += sum;
  g.max = std::max(g.max, max);
}

void MonitorRecorder::Add(std::string_view topic, MonitorCounter c, int64_t n, TimePoint now) {
  if (n == 0) return;
  base::MutexLock lock(mu_);
  TopicStats& s = At(topic, now);
  s.counts[static_cast<int>(c)] += n;
  s.counted = true;
}

void MonitorRecorder::AddPullGap(std::string_view topic, int64_t count, int64_t sum_ms,
                                 int64_t max_ms, TimePoint now) {
  if (count == 0) return;
  base::MutexLock lock(mu_);
  AddGap(At(topic, now).pull, count, sum_ms, max_ms);
}

void MonitorRecorder::AddReadyGap(std::string_view topic, int64_t count, int64_t sum_ms,
                                  int64_t max_ms, TimePoint now) {
  if (count == 0) return;
  base::MutexLock lock(mu_);
  AddGap(At(topic, now).ready, count, sum_ms, max_ms);
}

MonitorSnapshot MonitorRecorder::LastCompleted(TimePoint now) {
  base::MutexLock lock(mu_);
  Rotate(now);
  MonitorSnapshot out;
  auto gap = [](const std::string& topic, const Gap& g) {
    return GapStats{topic, g.count, static_cast<double>(g.sum) / static_cast<double>(g.count),
                    g.max};
  };
  for (const auto& [topic, s] : last_) {
    if (s.counted) out.request_stats.push_back(RequestStats{topic, s.counts});
    if (s.pull.count > 0) out.pull_gaps.push_back(gap(topic, s.pull));
    if (s.ready.count > 0) out.ready_gaps.push_back(gap(topic, s.ready));
  }
  return out;
}

}  // namespace chronoq::metrics
