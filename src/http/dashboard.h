// The web dashboard served by `chronoq serve` at /dashboard (docs/dashboard.md): its assets,
// compiled into the binary (dashboard_assets.h), and the in-server history of its live charts
// (dashboard_history.h), sampled here every HistoryOptions::interval.
//
// The dashboard reads through two endpoints of its own (GET /dashboard/api/topics: a page of the
// topics with their last rates; GET /dashboard/api/history: the charts' series) and acts only
// through the public API (sendMsg, updateMsg, redriveMsg, setTopicConfig, /camellia/health/...),
// so every action passes the same validation (and, with tokens, the same permissions) as any
// client's.
//
// Lifecycle: construct over the service, Start() (a first sample now, then one per interval on
// the scheduler), serve, Stop() once the scheduler no longer runs timers and before the service
// is destroyed (a ListTopics answer still on its way then is dropped), destroy.
// REQUIRES: service, clock and scheduler outlive Stop().
//
// Thread-safety: all methods are thread-safe.
#pragma once

#include <memory>

#include "base/clock.h"
#include "base/scheduler.h"
#include "http/dashboard_history.h"
#include "http/router.h"
#include "service/queue_service.h"

namespace chronoq::http {

class Dashboard {
 public:
  Dashboard(service::QueueService* service, const base::Clock* clock, base::Scheduler* scheduler,
            HistoryOptions options = {});
  ~Dashboard();
  Dashboard(const Dashboard&) = delete;
  Dashboard& operator=(const Dashboard&) = delete;

  void Start();
  void Stop();

  DashboardHistory& history();
  service::QueueService* service() const;
  const base::Clock* clock() const;

 private:
  struct State;
  static void Tick(const std::shared_ptr<State>& state);
  std::shared_ptr<State> state_;  // shared with the timer and the answers on their way
};

// GET (and HEAD) /dashboard, /dashboard/ and every asset path; GET /dashboard/api/topics and
// /dashboard/api/history. REQUIRES: `dashboard` outlives the router.
void RegisterDashboardRoutes(Router& router, Dashboard* dashboard);

}  // namespace chronoq::http
