#include <fmt/format.h>

#include "base/scheduler.h"
#include "http/handlers.h"
#include "http/params.h"
#include "http/router.h"

namespace chronoq::http {
namespace {

HttpResponse Code(int code) {
  HttpResponse r;
  r.status = code;
  r.body = fmt::format("{{\"code\":{}}}", code);
  return r;
}

}  // namespace

void RegisterHealthRoutes(Router& router, const HandlerContext* ctx) {
  service::QueueService* service = ctx->service;
  router.Add("/camellia/health/check", auth::Operation::kHealthCheck, {},
             [](HttpRequest&, RequestContext&, Reply reply) { reply(Code(200)); });
  router.Add("/camellia/health/status", auth::Operation::kHealthCheck, {},
             [service](HttpRequest&, RequestContext&, Reply reply) {
               reply(Code(service->online() ? 200 : 500));
             });
  router.Add("/camellia/health/online", auth::Operation::kSetHealth, {},
             [service](HttpRequest&, RequestContext&, Reply reply) {
               service->SetOnline(true);
               reply(Code(200));
             });
  router.Add("/camellia/health/offline", auth::Operation::kSetHealth, {},
             [service](HttpRequest&, RequestContext&, Reply reply) {
               service->SetOnline(false);
               reply(Code(200));
             });
}

void RegisterTestClockRoutes(Router& router, base::ManualScheduler* scheduler,
                             const base::Clock* clock) {
  router.Add(
      "/chronoq/test/advanceClock", auth::Operation::kTestControl, {"POST"},
      [scheduler, clock](HttpRequest& req, RequestContext&, Reply reply) {
        Result<Params> p =
            Params::Parse(req.query(), req.has_content_type, req.content_type, req.body);
        if (!p.has_value()) {
          reply(RequestError(400, p.error().message(), req.path()));
          return;
        }
        ParamReader r(*p);
        std::optional<int64_t> ms = r.Long("millis", true);
        if (r.ok() && *ms < 0) {
          reply(RequestError(400, "parameter 'millis' must not be negative", req.path()));
          return;
        }
        if (!r.ok()) {
          reply(RequestError(400, r.status().message(), req.path()));
          return;
        }
        scheduler->Advance(Millis(*ms));
        reply(JsonResponse(fmt::format("{{\"code\":200,\"now\":{}}}", ToEpochMs(clock->Now()))));
      });
}

void RegisterTestLongPollRoutes(Router& router, const service::QueueService* service) {
  router.Add("/chronoq/test/longPolls", auth::Operation::kTestControl, {"GET"},
             [service](HttpRequest&, RequestContext&, Reply reply) {
               const service::LongPollWaiters& w = service->long_polls();
               reply(JsonResponse(fmt::format("{{\"code\":200,\"parked\":{},\"draining\":{}}}",
                                              w.parked(), w.draining())));
             });
}

void RegisterRoutes(Router& router, const HandlerContext* ctx) {
  RegisterQueueRoutes(router, ctx);
  RegisterManageRoutes(router, ctx);
  RegisterTopicRoutes(router, ctx);
  RegisterImportRoutes(router, ctx);
  RegisterDataRoutes(router, ctx);
  RegisterMonitorRoutes(router, ctx);
  RegisterHealthRoutes(router, ctx);
  RegisterMetricsRoute(router, ctx);
}

void RegisterTestRoutes(Router& router, base::ManualScheduler* scheduler, const base::Clock* clock,
                        const service::QueueService* service) {
  RegisterTestClockRoutes(router, scheduler, clock);
  RegisterTestLongPollRoutes(router, service);
}

}  // namespace chronoq::http
