// The camellia endpoints (API.md section 4), registered on a Router. Handlers are protocol only:
// they parse parameters (params.h; a missing or malformed parameter is a request error, HTTP
// 400), call the QueueService, which owns every rule (validation, defaults, limits, long polls,
// counting), and encode its answer (codec.h, error_map.h: application outcomes answer HTTP 200
// with a `code`).
#pragma once

#include <optional>

#include "http/params.h"
#include "http/router.h"
#include "metrics/registry.h"
#include "service/queue_service.h"
#include "service/session.h"

namespace chronoq::base {
class ManualScheduler;
class Clock;
}  // namespace chronoq::base

namespace chronoq::http {

// Everything the handlers use. Must outlive the Router it is registered on.
struct HandlerContext {
  service::QueueService* service = nullptr;
  const metrics::Registry* registry = nullptr;  // what GET /metrics adds to the queue's figures
};

inline constexpr std::string_view kQueueBase = "/camellia/delayQueue/";
// On a sendMsg answer: "true" when an in-life message with the given msgId answered the send and
// nothing new was stored (the body is camellia's either way: API.md section 4).
inline constexpr std::string_view kExistingHeader = "X-Chronoq-Existing";

// sendMsg, pullMsg, longPollingMsg, ackMsg, deleteMsg, getMsg (POST).
void RegisterQueueRoutes(Router& router, const HandlerContext* ctx);
// sendMsgBatch, ackMsgBatch, updateMsg, touchMsg, countMsg (POST), listMsg (GET):
// API-EXTENSIONS.md sections 2-3.
void RegisterManageRoutes(Router& router, const HandlerContext* ctx);
// setTopicConfig, deleteTopicConfig, pauseTopic, resumeTopic, purgeTopic, redriveMsg (POST),
// getTopicConfig (GET): API-EXTENSIONS.md section 4.
void RegisterTopicRoutes(Router& router, const HandlerContext* ctx);
// importMsgBatch (POST, JSON body {"msgs":[...]}): docs/api-extensions.md "Export and import".
void RegisterImportRoutes(Router& router, const HandlerContext* ctx);
// POST /chronoq/admin/backup and getMsgHistory (POST) (API-EXTENSIONS.md section 8,
// docs/operations.md).
void RegisterDataRoutes(Router& router, const HandlerContext* ctx);
// getMonitorData, getTopicInfo, getTopicInfoList (GET).
void RegisterMonitorRoutes(Router& router, const HandlerContext* ctx);
// GET /metrics: Prometheus text format (docs/metrics.md): the service's queue figures, then the
// registry's collectors.
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
void RegisterTestLongPollRoutes(Router& router, const service::QueueService* service);

// Every public route: queue, monitor, health and metrics (what `chronoq serve` serves).
void RegisterRoutes(Router& router, const HandlerContext* ctx);
// The test-mode routes (advanceClock, longPolls), for a server on a manual clock.
void RegisterTestRoutes(Router& router, base::ManualScheduler* scheduler, const base::Clock* clock,
                        const service::QueueService* service);

// Helpers shared by the handler files.
// The service as the request's caller sees it (its namespace: service/session.h). Every handler
// of a queue or topic operation calls the service through this.
inline service::Session Svc(const HandlerContext* ctx, const HttpRequest& req) {
  return service::Session(ctx->service, req.caller);
}
// A handler that needs neither the connection nor anything but the context.
using SimpleHandler = void (*)(const HandlerContext* ctx, HttpRequest& req, Reply reply);
// Registers `fn` for kQueueBase + `name`, the operation `op` (who may call it) and `methods`.
void AddQueueRoute(Router& router, const HandlerContext* ctx, std::string_view name,
                   auth::Operation op, std::vector<std::string> methods, SimpleHandler fn);
HttpResponse JsonResponse(std::string body);
// The request's parameters (API.md section 1); on a request error (broken percent-encoding, a
// parameter twice, malformed JSON) replies HTTP 400 and returns nullopt.
std::optional<Params> ParseParams(const HttpRequest& req, Reply& reply);
// sendMsg's parameters but topic, in the order their errors are reported (shared by sendMsg and
// the items of sendMsgBatch). All optional here: the callers check that exactly one of
// delayMillis and triggerTime was given.
void ReadSendFields(ParamReader& r, service::SendRequest& s);
// True (and replies HTTP 400 with the reader's first error) when a parameter was missing or
// malformed.
bool ReaderFailed(const ParamReader& r, const HttpRequest& req, Reply& reply);

}  // namespace chronoq::http
