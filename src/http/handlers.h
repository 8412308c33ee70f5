// The camellia endpoints (API.md section 4), registered on a Router. Handlers parse parameters
// (params.h), check them (core/validation.h), apply server defaults, call the QueueBackend and
// encode its answer (codec.h). Request errors answer HTTP 400; application outcomes answer HTTP
// 200 with a `code`.
#pragma once

#include <atomic>

#include "base/clock.h"
#include "core/limits.h"
#include "engine/queue_backend.h"
#include "http/long_poll.h"
#include "http/params.h"
#include "http/router.h"
#include "metrics/monitor.h"
#include "metrics/queue_probe.h"
#include "metrics/registry.h"

namespace chronoq::base {
class ManualScheduler;
}

namespace chronoq::http {

struct HealthState {
  std::atomic<bool> online{true};
};

// Everything the handlers use. Must outlive the Router it is registered on.
struct HandlerContext {
  engine::QueueBackend* backend = nullptr;
  LongPollWaiters* waiters = nullptr;
  metrics::MonitorRecorder* monitor = nullptr;
  metrics::QueueProbe* probe = nullptr;   // Prometheus queue figures
  metrics::Registry* registry = nullptr;  // everything else GET /metrics renders
  const base::Clock* clock = nullptr;
  core::Limits limits;
  core::Defaults defaults;
  HealthState* health = nullptr;
};

inline constexpr std::string_view kQueueBase = "/camellia/delayQueue/";

// sendMsg, pullMsg, longPollingMsg, ackMsg, deleteMsg, getMsg (POST).
void RegisterQueueRoutes(Router& router, const HandlerContext* ctx);
// getMonitorData, getTopicInfo, getTopicInfoList (GET).
void RegisterMonitorRoutes(Router& router, const HandlerContext* ctx);
// GET /metrics: Prometheus text format (docs/metrics.md): the queue probe with each topic's depth
// read from the backend now, then the registry's collectors.
void RegisterMetricsRoute(Router& router, const HandlerContext* ctx);
// /camellia/health/{check,status,online,offline} (any method).
void RegisterHealthRoutes(Router& router, const HandlerContext* ctx);
// Test mode only (`serve --test-clock`): POST /chronoq/test/advanceClock?millis=N moves the
// server's manual clock forward, running every timer due on the way, and answers the new time.
void RegisterTestClockRoutes(Router& router, base::ManualScheduler* scheduler,
                             const base::Clock* clock);
// Test mode only: GET /chronoq/test/longPolls answers {"code":200,"parked":N}, the number of
// longPollingMsg requests parked or being served, so that integration tests can wait until a
// request is parked instead of sleeping.
void RegisterTestLongPollRoutes(Router& router, LongPollWaiters* waiters);

// Helpers shared by the handler files.
HttpResponse JsonResponse(std::string body);
// The request's parameters (API.md section 1); on a request error (broken percent-encoding, a
// parameter twice, malformed JSON) replies HTTP 400 and returns nullopt.
std::optional<Params> ParseParams(const HttpRequest& req, Reply& reply);

}  // namespace chronoq::http
