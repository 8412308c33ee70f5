#include <fmt/format.h>

#include "http/codec.h"
#include "http/error_map.h"
#include "http/handlers.h"
#include "http/params.h"

namespace chronoq::http {
namespace {

using core::Message;
using service::Messages;

void SendMsg(const HandlerContext* ctx, HttpRequest& req, Reply reply) {
  std::optional<Params> params = ParseParams(req, reply);
  if (!params) return;
  const std::string_view* delay = params->Find("delayMillis");
  const bool delay_empty = delay != nullptr && delay->empty();
  ParamReader r(*params);
  std::optional<std::string> topic = r.String("topic", true);
  service::SendRequest s;
  ReadSendFields(r, s);
  if (ReaderFailed(r, req, reply)) return;
  // Exactly one of the two (API-EXTENSIONS.md section 2); an empty value counts as absent.
  if (s.delay_millis.has_value() == s.trigger_time.has_value()) {
    reply(RequestError(400,
                       s.delay_millis ? "give either 'delayMillis' or 'triggerTime', not both"
                                      : fmt::format("required parameter 'delayMillis' is {} (or "
                                                    "give 'triggerTime' instead)",
                                                    delay_empty ? "empty" : "missing"),
                       req.path()));
    return;
  }
  s.topic = std::move(*topic);
  Svc(ctx, req).Send(std::move(s), [reply = std::move(reply)](Result<backend::Sent>&& res) mutable {
    if (!res.has_value()) {
      reply(JsonResponse(
          EncodeMessageAnswer(AppCode(res.error().code()), res.error().message(), nullptr)));
      return;
    }
    HttpResponse answer = JsonResponse(EncodeMessageAnswer(200, "success", &res->message));
    // The body stays camellia's; a client that cares (chronoq send) learns from this header
    // that an in-life message with that msgId answered and nothing new was stored.
    if (res->existing) answer.headers.emplace_back(kExistingHeader, "true");
    reply(std::move(answer));
  });
}

// The answer of both pulls.
backend::Callback<Result<Messages>> ListAnswer(Reply reply) {
  return [reply = std::move(reply)](Result<Messages> res) mutable {
    if (!res.has_value()) {
      reply(JsonResponse(
          EncodeMessageListAnswer(AppCode(res.error().code()), res.error().message(), nullptr)));
      return;
    }
    reply(JsonResponse(EncodeMessageListAnswer(200, "success", &*res)));
  };
}

// pullMsg and longPollingMsg read the same parameters, in this order (the first error wins);
// longPollingMsg also its timeout.
std::optional<service::LongPollRequest> ReadPull(ParamReader& r, const HttpRequest& req,
                                                 Reply& reply, bool long_poll) {
  std::optional<std::string> topic = r.String("topic", true);
  std::optional<int64_t> ack_timeout = r.Long("ackTimeoutMillis", false);
  std::optional<int32_t> batch = r.Int("batch", false);
  std::optional<int64_t> timeout;
  if (long_poll) timeout = r.Long("longPollingTimeoutMillis", false);
  if (ReaderFailed(r, req, reply)) return std::nullopt;
  return service::LongPollRequest{service::PullRequest{std::move(*topic), batch, ack_timeout},
                                  timeout};
}

void PullMsg(const HandlerContext* ctx, HttpRequest& req, Reply reply) {
  std::optional<Params> params = ParseParams(req, reply);
  if (!params) return;
  ParamReader r(*params);
  std::optional<service::LongPollRequest> p = ReadPull(r, req, reply, false);
  if (!p) return;
  Svc(ctx, req).Pull(std::move(p->pull), ListAnswer(std::move(reply)));
}

void LongPollingMsg(const HandlerContext* ctx, HttpRequest& req, RequestContext& rc, Reply reply) {
  std::optional<Params> params = ParseParams(req, reply);
  if (!params) return;
  ParamReader r(*params);
  std::optional<service::LongPollRequest> p = ReadPull(r, req, reply, true);
  if (!p) return;
  RequestContext* conn = &rc;  // valid until the reply is given (http_types.h)
  service::LongPollTicket ticket = Svc(ctx, req).LongPoll(
      std::move(*p), [conn] { return conn->PeerAlive(); }, ListAnswer(std::move(reply)));
  if (ticket) {
    rc.OnPeerGone([service = ctx->service, ticket] { service->CancelLongPoll(ticket); });
  }
}

// Reads topic and msgId (both required), then whatever `extra` reads; replies and returns nullopt
// on a request error.
template <typename Extra>
std::optional<service::MessageRef> ReadRef(ParamReader& r, const HttpRequest& req, Reply& reply,
                                           Extra extra) {
  std::optional<std::string> topic = r.String("topic", true);
  std::optional<std::string> msg_id = r.String("msgId", true);
  extra();
  if (ReaderFailed(r, req, reply)) return std::nullopt;
  return service::MessageRef{std::move(*topic), std::move(*msg_id)};
}

backend::Callback<Status> StatusAnswer(Reply reply) {
  return [reply = std::move(reply)](Status s) mutable {
    reply(JsonResponse(s.ok() ? EncodeStatusAnswer(200, "success")
                              : EncodeStatusAnswer(AppCode(s.code()), s.message())));
  };
}

void AckMsg(const HandlerContext* ctx, HttpRequest& req, Reply reply) {
  std::optional<Params> params = ParseParams(req, reply);
  if (!params) return;
  ParamReader r(*params);
  std::optional<bool> ack;
  std::optional<std::string> reason;
  auto ref = ReadRef(r, req, reply, [&] {
    ack = r.Bool("ack", true);
    reason = r.String("reason", false);
  });
  if (!ref) return;
  Svc(ctx, req).Ack(service::AckRequest{std::move(*ref), *ack, reason.value_or("")},
                    StatusAnswer(std::move(reply)));
}

void DeleteMsg(const HandlerContext* ctx, HttpRequest& req, Reply reply) {
  std::optional<Params> params = ParseParams(req, reply);
  if (!params) return;
  ParamReader r(*params);
  std::optional<bool> release;
  auto ref = ReadRef(r, req, reply, [&] { release = r.Bool("release", false); });
  if (!ref) return;
  Svc(ctx, req).Delete(service::DeleteRequest{std::move(*ref), release.value_or(false)},
                       StatusAnswer(std::move(reply)));
}

void GetMsg(const HandlerContext* ctx, HttpRequest& req, Reply reply) {
  std::optional<Params> params = ParseParams(req, reply);
  if (!params) return;
  ParamReader r(*params);
  auto ref = ReadRef(r, req, reply, [] {});
  if (!ref) return;
  Svc(ctx, req).Get(std::move(*ref), [reply = std::move(reply)](Result<Message> res) mutable {
    reply(JsonResponse(res.has_value() ? EncodeMessageAnswer(200, "success", &*res)
                                       : EncodeMessageAnswer(AppCode(res.error().code()),
                                                             res.error().message(), nullptr)));
  });
}

}  // namespace

HttpResponse JsonResponse(std::string body) {
  HttpResponse r;
  r.status = 200;
  r.body = std::move(body);
  return r;
}

bool ReaderFailed(const ParamReader& r, const HttpRequest& req, Reply& reply) {
  if (r.ok()) return false;
  reply(RequestError(400, r.status().message(), req.path()));
  return true;
}

std::optional<Params> ParseParams(const HttpRequest& req, Reply& reply) {
  Result<Params> p = Params::Parse(req.query(), req.has_content_type, req.content_type, req.body);
  if (!p.has_value()) {
    reply(RequestError(400, p.error().message(), req.path()));
    return std::nullopt;
  }
  return std::move(p).value();
}

void AddQueueRoute(Router& router, const HandlerContext* ctx, std::string_view name,
                   auth::Operation op, std::vector<std::string> methods, SimpleHandler fn) {
  router.Add(std::string(kQueueBase) + std::string(name), op, std::move(methods),
             [ctx, fn](HttpRequest& req, RequestContext&, Reply reply) {
               fn(ctx, req, std::move(reply));
             });
}

void RegisterQueueRoutes(Router& router, const HandlerContext* ctx) {
  AddQueueRoute(router, ctx, "sendMsg", auth::Operation::kSend, {"POST"}, SendMsg);
  AddQueueRoute(router, ctx, "pullMsg", auth::Operation::kPull, {"POST"}, PullMsg);
  AddQueueRoute(router, ctx, "ackMsg", auth::Operation::kAck, {"POST"}, AckMsg);
  AddQueueRoute(router, ctx, "deleteMsg", auth::Operation::kDelete, {"POST"}, DeleteMsg);
  AddQueueRoute(router, ctx, "getMsg", auth::Operation::kGet, {"POST"}, GetMsg);
  router.Add(std::string(kQueueBase) + "longPollingMsg", auth::Operation::kLongPoll, {"POST"},
             [ctx](HttpRequest& req, RequestContext& rc, Reply reply) {
               LongPollingMsg(ctx, req, rc, std::move(reply));
             });
}

}  // namespace chronoq::http
