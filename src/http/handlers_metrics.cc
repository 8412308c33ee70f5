#include "http/handlers.h"
#include "metrics/exposition.h"

namespace chronoq::http {

void RegisterMetricsRoute(Router& router, const HandlerContext* ctx) {
  router.Add("/metrics", auth::Operation::kMetrics, {"GET"},
             [ctx](HttpRequest&, RequestContext&, Reply reply) {
               ctx->service->Scrape(ctx->registry,
                                    [reply = std::move(reply)](std::string text) mutable {
                                      HttpResponse r;
                                      r.status = 200;
                                      r.content_type = metrics::kExpositionContentType;
                                      r.body = std::move(text);
                                      reply(std::move(r));
                                    });
             });
}

}  // namespace chronoq::http
