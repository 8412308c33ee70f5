#include "http/codec.h"
#include "http/error_map.h"
#include "http/handlers.h"
#include "http/params.h"

namespace chronoq::http {
namespace {

void GetTopicInfo(const HandlerContext* ctx, HttpRequest& req, Reply reply) {
  std::optional<Params> params = ParseParams(req, reply);
  if (!params) return;
  ParamReader r(*params);
  std::optional<std::string> topic = r.String("topic", true);
  if (ReaderFailed(r, req, reply)) return;
  Svc(ctx, req).GetTopicInfo(
      std::move(*topic), [reply = std::move(reply)](Result<core::TopicInfo> res) mutable {
        if (!res.has_value()) {
          reply(JsonResponse(
              EncodeTopicInfoAnswer(AppCode(res.error().code()), res.error().message(), nullptr)));
          return;
        }
        reply(JsonResponse(EncodeTopicInfoAnswer(200, "success", &*res)));
      });
}

// Takes no parameters, but reads them by the same rules as every other delayQueue endpoint:
// unknown ones are ignored, malformed ones are a request error.
void GetTopicInfoList(const HandlerContext* ctx, const HttpRequest& req, Reply reply) {
  if (!ParseParams(req, reply)) return;
  Svc(ctx, req).ListTopics(
      [reply = std::move(reply)](Result<std::vector<core::TopicInfo>> res) mutable {
        if (!res.has_value()) {
          reply(JsonResponse(
              EncodeTopicInfoAnswer(AppCode(res.error().code()), res.error().message(), nullptr)));
          return;
        }
        reply(JsonResponse(EncodeTopicListAnswer(*res)));
      });
}

}  // namespace

void RegisterMonitorRoutes(Router& router, const HandlerContext* ctx) {
  std::string base(kQueueBase);
  router.Add(base + "getTopicInfo", auth::Operation::kTopicInfo, {"GET"},
             [ctx](HttpRequest& req, RequestContext&, Reply reply) {
               GetTopicInfo(ctx, req, std::move(reply));
             });
  router.Add(base + "getTopicInfoList", auth::Operation::kTopicInfo, {"GET"},
             [ctx](HttpRequest& req, RequestContext&, Reply reply) {
               GetTopicInfoList(ctx, req, std::move(reply));
             });
  router.Add(base + "getMonitorData", auth::Operation::kMonitorData, {"GET"},
             [ctx](HttpRequest& req, RequestContext&, Reply reply) {
               if (!ParseParams(req, reply)) return;  // as getTopicInfoList
               reply(JsonResponse(EncodeMonitorAnswer(ctx->service->MonitorData())));
             });
}

}  // namespace chronoq::http
