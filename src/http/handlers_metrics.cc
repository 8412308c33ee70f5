#include <vector>

#include "http/handlers.h"
#include "metrics/exposition.h"

namespace chronoq::http {
namespace {

void Scrape(const HandlerContext* ctx, Reply reply) {
  ctx->backend->ListTopics(
      [ctx, reply = std::move(reply)](Result<std::vector<core::TopicInfo>> res) mutable {
        std::vector<metrics::TopicDepth> depths;
        if (res.has_value()) {
          depths.reserve(res->size());
          for (core::TopicInfo& t : *res) {
            depths.push_back({std::move(t.topic), t.waiting, t.ready, t.consuming});
          }
        }
        metrics::TextWriter w;
        w.Family("cq_queue_depth_read_ok",
                 "1 when this scrape read the topics' depth from the storage, 0 when it failed "
                 "(cq_queue_messages is then missing)",
                 metrics::MetricType::kGauge);
        w.Sample("cq_queue_depth_read_ok", {}, res.has_value() ? 1 : 0);
        ctx->probe->Render(w, depths);
        if (ctx->registry != nullptr) ctx->registry->Render(w);
        HttpResponse r;
        r.status = 200;
        r.content_type = metrics::kExpositionContentType;
        r.body = w.Take();
        reply(std::move(r));
      });
}

}  // namespace

void RegisterMetricsRoute(Router& router, const HandlerContext* ctx) {
  router.Add("/metrics", {"GET"},
             [ctx](HttpRequest&, RequestContext&, Reply reply) { Scrape(ctx, std::move(reply)); });
}

}  // namespace chronoq::http
