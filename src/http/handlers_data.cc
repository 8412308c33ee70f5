// The operations on the data of API-EXTENSIONS.md section 8 served over HTTP: POST
// /chronoq/admin/backup (an online copy of the embedded store, docs/operations.md) and
// getMsgHistory (POST topic, msgId: the recorded transitions of a message, core/history.h).
// Protocol only.
#include <fmt/format.h>

#include "http/error_map.h"
#include "http/handlers.h"
#include "http/json_writer.h"
#include "http/params.h"

namespace chronoq::http {
namespace {

constexpr std::string_view kBackupPath = "/chronoq/admin/backup";

// {"code":200,"msg":"success","dir":"...","bytes":N,"files":N,"millis":N}, or the error.
std::string EncodeBackupAnswer(const Result<backend::BackupInfo>& res) {
  JsonWriter w;
  w.BeginObject();
  if (!res.has_value()) {
    w.Num("code", AppCode(res.error().code())).Str("msg", res.error().message());
    return w.EndObject().Take();
  }
  w.Num("code", 200).Str("msg", "success");
  w.Str("dir", res->dir).Num("bytes", res->bytes).Num("files", res->files);
  w.Num("millis", res->took.count());
  return w.EndObject().Take();
}

// {"code":200,"msg":"success","history":[{"time":ms,"node":"...","event":"...","attempt":n,
// "reason":"..."}, ...]} (reason only when not empty), or the error with "history":null.
std::string EncodeHistoryAnswer(const Result<std::vector<core::HistoryEntry>>& res) {
  JsonWriter w;
  w.BeginObject();
  if (!res.has_value()) {
    w.Num("code", AppCode(res.error().code())).Str("msg", res.error().message());
    return w.Key("history").Null().EndObject().Take();
  }
  w.Num("code", 200).Str("msg", "success").Key("history").BeginArray();
  for (const core::HistoryEntry& e : *res) {
    w.BeginObject()
        .Num("time", ToEpochMs(e.time))
        .Str("node", e.node)
        .Str("event", core::HistoryEventName(e.event))
        .Num("attempt", e.attempt);
    if (!e.reason.empty()) w.Str("reason", e.reason);
    w.EndObject();
  }
  return w.EndArray().EndObject().Take();
}

void GetMsgHistory(const HandlerContext* ctx, HttpRequest& req, Reply reply) {
  std::optional<Params> params = ParseParams(req, reply);
  if (!params) return;
  ParamReader r(*params);
  std::optional<std::string> topic = r.String("topic", true);
  std::optional<std::string> msg_id = r.String("msgId", true);
  if (ReaderFailed(r, req, reply)) return;
  Svc(ctx, req).GetMsgHistory(
      service::MessageRef{std::move(*topic), std::move(*msg_id)},
      [reply = std::move(reply)](Result<std::vector<core::HistoryEntry>> res) mutable {
        reply(JsonResponse(EncodeHistoryAnswer(res)));
      });
}

void Backup(const HandlerContext* ctx, HttpRequest& req, Reply reply) {
  std::optional<Params> params = ParseParams(req, reply);
  if (!params) return;
  ParamReader r(*params);
  std::optional<std::string> to = r.String("to", true);
  if (ReaderFailed(r, req, reply)) return;
  ctx->service->Backup(std::move(*to),
                       [reply = std::move(reply)](Result<backend::BackupInfo> res) mutable {
                         reply(JsonResponse(EncodeBackupAnswer(res)));
                       });
}

}  // namespace

void RegisterDataRoutes(Router& router, const HandlerContext* ctx) {
  AddQueueRoute(router, ctx, "getMsgHistory", auth::Operation::kHistory, {"POST"}, GetMsgHistory);
  router.Add(std::string(kBackupPath), auth::Operation::kBackup, {"POST"},
             [ctx](HttpRequest& req, RequestContext&, Reply reply) {
               Backup(ctx, req, std::move(reply));
             });
}

}  // namespace chronoq::http
