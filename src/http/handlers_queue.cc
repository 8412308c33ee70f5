#include <fmt/format.h>

#include "core/validation.h"
#include "http/codec.h"
#include "http/error_map.h"
#include "http/handlers.h"
#include "http/params.h"

namespace chronoq::http {
namespace {

using core::Message;
using Messages = std::vector<core::Message>;
using metrics::MonitorCounter;

bool ReaderFailed(const ParamReader& r, const HttpRequest& req, Reply& reply) {
  if (r.ok()) return false;
  reply(RequestError(400, r.status().message(), req.path()));
  return true;
}

void CountPulled(const HandlerContext* ctx, const std::string& topic, const Messages& list,
                 bool long_poll) {
  if (list.empty()) return;
  TimePoint now = ctx->clock->Now();
  int64_t sum = 0;
  int64_t max = 0;
  for (const Message& m : list) {
    int64_t gap = std::max<int64_t>(0, (now - m.record.trigger_time).count());
    sum += gap;
    max = std::max(max, gap);
    ctx->probe->ObserveLateness(long_poll, gap);
  }
  auto n = static_cast<int64_t>(list.size());
  ctx->probe->Add(topic, metrics::QueueEvent::kDelivery, static_cast<uint64_t>(n));
  ctx->monitor->Add(topic, MonitorCounter::kPullMsg, n, now);
  ctx->monitor->AddPullGap(topic, n, sum, max, now);
}

struct TopicAndId {
  std::string topic;
  std::string msg_id;
};

void SendMsg(const HandlerContext* ctx, HttpRequest& req, Reply reply) {
  std::optional<Params> params = ParseParams(req, reply);
  if (!params) return;
  ParamReader r(*params);
  std::optional<std::string> topic = r.String("topic", true);
  std::optional<std::string> msg_id = r.String("msgId", false);
  std::optional<std::string> msg = r.String("msg", true);
  std::optional<int64_t> delay = r.Long("delayMillis", true);
  std::optional<int64_t> ttl = r.Long("ttlMillis", false);
  std::optional<int32_t> max_retry = r.Int("maxRetry", false);
  if (ReaderFailed(r, req, reply)) return;

  Status v = core::ValidateTopic(*topic, ctx->limits);
  if (v.ok() && msg_id && !msg_id->empty()) v = core::ValidateMsgId(*msg_id, ctx->limits);
  if (v.ok()) v = core::ValidatePayload(*msg, ctx->limits);
  if (v.ok()) v = core::ValidateDelay(Millis(*delay), ctx->limits);
  if (!v.ok()) {
    reply(JsonResponse(EncodeMessageAnswer(400, v.message(), nullptr)));
    return;
  }
  core::NewMessage m;
  m.topic = std::move(*topic);
  m.msg_id = msg_id ? std::move(*msg_id) : std::string();
  m.payload = std::move(*msg);
  m.delay = Millis(*delay);
  m.ttl = ttl && *ttl > 0 ? Millis(*ttl) : ctx->defaults.ttl;
  m.max_retry = max_retry && *max_retry >= 0 ? *max_retry : ctx->defaults.max_retry;
  std::string name = m.topic;
  ctx->backend->Send(
      std::move(m), [ctx, name, reply = std::move(reply)](Result<Message> res) mutable {
        if (!res.has_value()) {
          reply(JsonResponse(
              EncodeMessageAnswer(AppCode(res.error().code()), res.error().message(), nullptr)));
          return;
        }
        ctx->monitor->Add(name, MonitorCounter::kSendMsg, 1, ctx->clock->Now());
        ctx->probe->Add(name, metrics::QueueEvent::kSend);
        reply(JsonResponse(EncodeMessageAnswer(200, "success", &*res)));
      });
}

struct PullParams {
  std::string topic;
  int32_t batch;
  Millis ack_timeout;
  std::optional<int64_t> long_poll_timeout;
};

// Shared by pullMsg and longPollingMsg; replies and returns nullopt on any error.
std::optional<PullParams> ReadPull(const HandlerContext* ctx, HttpRequest& req, Reply& reply,
                                   bool long_poll) {
  std::optional<Params> params = ParseParams(req, reply);
  if (!params) return std::nullopt;
  ParamReader r(*params);
  std::optional<std::string> topic = r.String("topic", true);
  std::optional<int64_t> ack_timeout = r.Long("ackTimeoutMillis", false);
  std::optional<int32_t> batch = r.Int("batch", false);
  std::optional<int64_t> lp_timeout;
  if (long_poll) lp_timeout = r.Long("longPollingTimeoutMillis", false);
  if (ReaderFailed(r, req, reply)) return std::nullopt;
  Status v = core::ValidateTopic(*topic, ctx->limits);
  if (!v.ok()) {
    reply(JsonResponse(EncodeMessageListAnswer(400, v.message(), nullptr)));
    return std::nullopt;
  }
  PullParams p;
  p.topic = std::move(*topic);
  p.batch = batch && *batch > 0 ? std::min(*batch, ctx->limits.max_pull_batch) : 1;
  p.ack_timeout =
      ack_timeout && *ack_timeout > 0 ? Millis(*ack_timeout) : ctx->defaults.ack_timeout;
  p.long_poll_timeout = lp_timeout;
  return p;
}

// Completion for both pulls: encodes the list and counts it.
LongPollDone PullAnswer(const HandlerContext* ctx, std::string topic, bool long_poll, Reply reply) {
  return [ctx, topic = std::move(topic), long_poll,
          reply = std::move(reply)](Result<Messages> res) mutable {
    if (!res.has_value()) {
      reply(JsonResponse(
          EncodeMessageListAnswer(AppCode(res.error().code()), res.error().message(), nullptr)));
      return;
    }
    CountPulled(ctx, topic, *res, long_poll);
    reply(JsonResponse(EncodeMessageListAnswer(200, "success", &*res)));
  };
}

void PullMsg(const HandlerContext* ctx, HttpRequest& req, Reply reply) {
  std::optional<PullParams> p = ReadPull(ctx, req, reply, false);
  if (!p) return;
  engine::PullRequest pr{p->topic, p->batch, p->ack_timeout};
  ctx->backend->Pull(std::move(pr), PullAnswer(ctx, p->topic, false, std::move(reply)));
}

void LongPollingMsg(const HandlerContext* ctx, HttpRequest& req, RequestContext& rc, Reply reply) {
  std::optional<PullParams> p = ReadPull(ctx, req, reply, true);
  if (!p) return;
  LongPollRequest lp;
  lp.topic = p->topic;
  lp.batch = p->batch;
  lp.ack_timeout = p->ack_timeout;
  lp.timeout = p->long_poll_timeout && *p->long_poll_timeout > 0
                   ? std::min(Millis(*p->long_poll_timeout), ctx->limits.max_long_polling_timeout)
                   : ctx->defaults.long_polling_timeout;
  RequestContext* conn = &rc;  // valid until the reply is given (http_types.h)
  auto waiter = ctx->waiters->Park(
      std::move(lp), [conn] { return conn->PeerAlive(); },
      PullAnswer(ctx, p->topic, true, std::move(reply)));
  rc.OnPeerGone([waiters = ctx->waiters, waiter] { waiters->Cancel(waiter); });
}

// Reads topic and msgId (both required), then whatever `extra` reads; replies and returns nullopt
// on any error. Missing -> HTTP 400; present but invalid -> code 400 in the endpoint's own shape,
// built by `encode`.
template <typename Encode, typename Extra>
std::optional<TopicAndId> ReadTopicAndId(const HandlerContext* ctx, ParamReader& r,
                                         HttpRequest& req, Reply& reply, Encode encode,
                                         Extra extra) {
  std::optional<std::string> topic = r.String("topic", true);
  std::optional<std::string> msg_id = r.String("msgId", true);
  extra();
  if (ReaderFailed(r, req, reply)) return std::nullopt;
  Status v = core::ValidateTopic(*topic, ctx->limits);
  if (v.ok()) v = core::ValidateMsgId(*msg_id, ctx->limits);
  if (!v.ok()) {
    reply(JsonResponse(encode(400, v.message())));
    return std::nullopt;
  }
  return TopicAndId{std::move(*topic), std::move(*msg_id)};
}

engine::Callback<Status> StatusAnswer(const HandlerContext* ctx, std::string topic,
                                      MonitorCounter c, metrics::QueueEvent e, Reply reply) {
  return [ctx, topic = std::move(topic), c, e, reply = std::move(reply)](Status s) mutable {
    if (!s.ok()) {
      reply(JsonResponse(EncodeStatusAnswer(AppCode(s.code()), s.message())));
      return;
    }
    ctx->monitor->Add(topic, c, 1, ctx->clock->Now());
    ctx->probe->Add(topic, e);
    reply(JsonResponse(EncodeStatusAnswer(200, "success")));
  };
}

std::string StatusBody(int code, std::string_view msg) { return EncodeStatusAnswer(code, msg); }

void AckMsg(const HandlerContext* ctx, HttpRequest& req, Reply reply) {
  std::optional<Params> params = ParseParams(req, reply);
  if (!params) return;
  ParamReader r(*params);
  std::optional<bool> ack;
  auto ids = ReadTopicAndId(ctx, r, req, reply, StatusBody, [&] { ack = r.Bool("ack", true); });
  if (!ids) return;
  std::string topic = ids->topic;
  ctx->backend->Ack(std::move(ids->topic), std::move(ids->msg_id), *ack,
                    StatusAnswer(ctx, std::move(topic), MonitorCounter::kAckMsg,
                                 *ack ? metrics::QueueEvent::kAck : metrics::QueueEvent::kNack,
                                 std::move(reply)));
}

void DeleteMsg(const HandlerContext* ctx, HttpRequest& req, Reply reply) {
  std::optional<Params> params = ParseParams(req, reply);
  if (!params) return;
  ParamReader r(*params);
  std::optional<bool> release;
  auto ids =
      ReadTopicAndId(ctx, r, req, reply, StatusBody, [&] { release = r.Bool("release", false); });
  if (!ids) return;
  std::string topic = ids->topic;
  ctx->backend->Delete(std::move(ids->topic), std::move(ids->msg_id), release.value_or(false),
                       StatusAnswer(ctx, std::move(topic), MonitorCounter::kDeleteMsg,
                                    metrics::QueueEvent::kDeletion, std::move(reply)));
}

void GetMsg(const HandlerContext* ctx, HttpRequest& req, Reply reply) {
  std::optional<Params> params = ParseParams(req, reply);
  if (!params) return;
  ParamReader r(*params);
  auto ids = ReadTopicAndId(
      ctx, r, req, reply,
      [](int code, std::string_view msg) { return EncodeMessageAnswer(code, msg, nullptr); },
      [] {});
  if (!ids) return;
  std::string topic = ids->topic;
  ctx->backend->Get(std::move(ids->topic), std::move(ids->msg_id),
                    [ctx, topic, reply = std::move(reply)](Result<Message> res) mutable {
                      if (!res.has_value()) {
                        reply(JsonResponse(EncodeMessageAnswer(AppCode(res.error().code()),
                                                               res.error().message(), nullptr)));
                        return;
                      }
                      ctx->monitor->Add(topic, MonitorCounter::kGetMsg, 1, ctx->clock->Now());
                      reply(JsonResponse(EncodeMessageAnswer(200, "success", &*res)));
                    });
}

}  // namespace

HttpResponse JsonResponse(std::string body) {
  HttpResponse r;
  r.status = 200;
  r.body = std::move(body);
  return r;
}

std::optional<Params> ParseParams(const HttpRequest& req, Reply& reply) {
  Result<Params> p = Params::Parse(req.query(), req.has_content_type, req.content_type, req.body);
  if (!p.has_value()) {
    reply(RequestError(400, p.error().message(), req.path()));
    return std::nullopt;
  }
  return std::move(p).value();
}

void RegisterQueueRoutes(Router& router, const HandlerContext* ctx) {
  auto path = [](std::string_view name) { return std::string(kQueueBase) + std::string(name); };
  auto simple = [ctx](void (*fn)(const HandlerContext*, HttpRequest&, Reply)) {
    return [ctx, fn](HttpRequest& req, RequestContext&, Reply reply) {
      fn(ctx, req, std::move(reply));
    };
  };
  router.Add(path("sendMsg"), {"POST"}, simple(SendMsg));
  router.Add(path("pullMsg"), {"POST"}, simple(PullMsg));
  router.Add(path("ackMsg"), {"POST"}, simple(AckMsg));
  router.Add(path("deleteMsg"), {"POST"}, simple(DeleteMsg));
  router.Add(path("getMsg"), {"POST"}, simple(GetMsg));
  router.Add(path("longPollingMsg"), {"POST"},
             [ctx](HttpRequest& req, RequestContext& rc, Reply reply) {
               LongPollingMsg(ctx, req, rc, std::move(reply));
             });
}

}  // namespace chronoq::http
