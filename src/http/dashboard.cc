#include "http/dashboard.h"

#include <utility>

#include "base/mutex.h"
#include "base/thread_annotations.h"

namespace chronoq::http {

struct Dashboard::State {
  State(service::QueueService* s, const base::Clock* c, base::Scheduler* sch, HistoryOptions o)
      : service(s), clock(c), scheduler(sch), history(o) {}
  service::QueueService* const service;
  const base::Clock* const clock;
  base::Scheduler* const scheduler;
  DashboardHistory history;
  base::Mutex mu;
  bool started CQ_GUARDED_BY(mu) = false;
  bool stopped CQ_GUARDED_BY(mu) = false;
  base::TimerId timer CQ_GUARDED_BY(mu) = 0;
};

Dashboard::Dashboard(service::QueueService* service, const base::Clock* clock,
                     base::Scheduler* scheduler, HistoryOptions options)
    : state_(std::make_shared<State>(service, clock, scheduler, options)) {}

Dashboard::~Dashboard() { Stop(); }

DashboardHistory& Dashboard::history() { return state_->history; }
service::QueueService* Dashboard::service() const { return state_->service; }
const base::Clock* Dashboard::clock() const { return state_->clock; }

void Dashboard::Start() {
  {
    base::MutexLock lock(state_->mu);
    if (state_->started || state_->stopped) return;
    state_->started = true;
  }
  Tick(state_);
}

void Dashboard::Stop() {
  base::MutexLock lock(state_->mu);
  if (state_->stopped) return;
  state_->stopped = true;
  if (state_->timer != 0) state_->scheduler->Cancel(state_->timer);
}

// One sample: the depth of every topic from the backend, then (in its answer) the counters. The
// next tick is scheduled first, so a slow backend delays no later sample.
void Dashboard::Tick(const std::shared_ptr<State>& state) {
  {
    base::MutexLock lock(state->mu);
    if (state->stopped) return;
    const TimePoint next = state->clock->Now() + state->history.options().interval;
    state->timer = state->scheduler->Schedule(next, [state] { Tick(state); });
  }
  state->service->ListTopics([state](Result<std::vector<core::TopicInfo>> res) {
    base::MutexLock lock(state->mu);
    if (state->stopped) return;  // the service may be gone
    HistorySample s;
    s.at = state->clock->Now();
    s.depth_ok = res.has_value();
    metrics::QueueProbe& probe = state->service->probe();
    if (res.has_value()) {
      s.topics = std::move(*res);
      // As a scrape does: each listed topic gets its own label while there is room, so that a
      // topic without one is one folded into _other (its rates are unknown).
      for (const core::TopicInfo& t : s.topics) probe.LabelFor(t.topic);
    }
    s.counts = probe.ReadCounts();
    s.lateness = probe.ReadLateness();
    state->history.Add(s);
  });
}

}  // namespace chronoq::http
