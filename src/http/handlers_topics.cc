// The endpoints of API-EXTENSIONS.md section 4: setTopicConfig, pauseTopic, resumeTopic,
// deleteTopicConfig, purgeTopic, redriveMsg (POST) and getTopicConfig (GET). Protocol only, like
// handlers_manage.cc: the service checks the values (ValidateTopicConfig) and the backend resolves
// and stores. setTopicConfig refuses parameter names it does not know (a misspelt `capacty` would
// otherwise leave the topic unlimited without a word); the camellia endpoints ignore them.
#include <fmt/format.h>

#include "http/callback_json.h"
#include "http/codec.h"
#include "http/error_map.h"
#include "http/handlers.h"
#include "http/params.h"

namespace chronoq::http {
namespace {

backend::Callback<Result<service::TopicConfigView>> ConfigAnswer(Reply reply) {
  return [reply = std::move(reply)](Result<service::TopicConfigView> res) mutable {
    reply(JsonResponse(res.has_value() ? EncodeTopicConfigAnswer(200, "success", &*res)
                                       : EncodeTopicConfigAnswer(AppCode(res.error().code()),
                                                                 res.error().message(), nullptr)));
  };
}

// purgeTopic's and redriveMsg's answer: {"code":200,"msg":"success","<key>":N}, or the error with
// "<key>":null.
backend::Callback<Result<int64_t>> CountAnswer(Reply reply, std::string_view key) {
  return [reply = std::move(reply), key](Result<int64_t> res) mutable {
    reply(JsonResponse(res.has_value() ? EncodeCountAnswer(key, *res)
                                       : EncodeNullAnswer(AppCode(res.error().code()),
                                                          res.error().message(), {key})));
  };
}

void SetTopicConfig(const HandlerContext* ctx, HttpRequest& req, Reply reply) {
  std::optional<Params> params = ParseParams(req, reply);
  if (!params) return;
  if (const std::string_view* unknown = params->FirstUnknown(
          {"topic", "capacity", "ttlMillis", "maxRetry", "ackTimeoutMillis", "retryIntervalMillis",
           "deadLetterTopic", "paused", "callback", "history"})) {
    return reply(RequestError(
        400,
        fmt::format("unknown parameter '{}': setTopicConfig takes topic, capacity, ttlMillis, "
                    "maxRetry, ackTimeoutMillis, retryIntervalMillis, deadLetterTopic, paused, "
                    "callback, history",
                    unknown->substr(0, 64)),
        req.path()));
  }
  ParamReader r(*params);
  service::TopicConfigRequest c;
  std::optional<std::string> topic = r.String("topic", true);
  c.capacity = r.Long("capacity", false);
  c.ttl_millis = r.Long("ttlMillis", false);
  c.max_retry = r.Long("maxRetry", false);
  c.ack_timeout_millis = r.Long("ackTimeoutMillis", false);
  c.retry_interval_millis = r.Long("retryIntervalMillis", false);
  c.dead_letter_topic = r.String("deadLetterTopic", false);
  c.paused = r.Bool("paused", false);
  c.history = r.Bool("history", false);
  // callback: a JSON object (or its text in a form field) sets it; "" removes it (none, which
  // shadows nothing below: the file and server layers have no callback).
  if (const std::string_view* cb = params->Find("callback")) {
    if (cb->empty()) {
      c.callback = std::optional<core::Callback>();
    } else if (Result<core::Callback> parsed = ParseCallbackJson(*cb); parsed.has_value()) {
      c.callback = std::move(*parsed);
    } else {
      r.Fail(parsed.error().message());
    }
  }
  if (ReaderFailed(r, req, reply)) return;
  // What the request must give (API.md section 2, layer 1), like updateMsg's "nothing to update".
  if (!c.capacity && !c.ttl_millis && !c.max_retry && !c.ack_timeout_millis &&
      !c.retry_interval_millis && !c.dead_letter_topic && !c.paused && !c.callback && !c.history) {
    return reply(RequestError(400,
                              "nothing to set: give at least one of 'capacity', 'ttlMillis', "
                              "'maxRetry', 'ackTimeoutMillis', 'retryIntervalMillis', "
                              "'deadLetterTopic', 'paused', 'callback', 'history'",
                              req.path()));
  }
  c.topic = std::move(*topic);
  Svc(ctx, req).SetTopicConfig(std::move(c), ConfigAnswer(std::move(reply)));
}

// pauseTopic / resumeTopic: setTopicConfig with `paused` alone.
void SetPaused(const HandlerContext* ctx, HttpRequest& req, Reply reply, bool paused) {
  std::optional<Params> params = ParseParams(req, reply);
  if (!params) return;
  ParamReader r(*params);
  std::optional<std::string> topic = r.String("topic", true);
  if (ReaderFailed(r, req, reply)) return;
  service::TopicConfigRequest c;
  c.topic = std::move(*topic);
  c.paused = paused;
  Svc(ctx, req).SetTopicConfig(std::move(c), ConfigAnswer(std::move(reply)));
}

void PauseTopic(const HandlerContext* ctx, HttpRequest& req, Reply reply) {
  SetPaused(ctx, req, std::move(reply), true);
}

void ResumeTopic(const HandlerContext* ctx, HttpRequest& req, Reply reply) {
  SetPaused(ctx, req, std::move(reply), false);
}

// The topic parameter alone (required); nullopt when the reply was given.
std::optional<std::string> TopicOnly(HttpRequest& req, Reply& reply) {
  std::optional<Params> params = ParseParams(req, reply);
  if (!params) return std::nullopt;
  ParamReader r(*params);
  std::optional<std::string> topic = r.String("topic", true);
  if (ReaderFailed(r, req, reply)) return std::nullopt;
  return topic;
}

void GetTopicConfig(const HandlerContext* ctx, HttpRequest& req, Reply reply) {
  std::optional<std::string> topic = TopicOnly(req, reply);
  if (!topic) return;
  Svc(ctx, req).GetTopicConfig(std::move(*topic), ConfigAnswer(std::move(reply)));
}

void DeleteTopicConfig(const HandlerContext* ctx, HttpRequest& req, Reply reply) {
  std::optional<std::string> topic = TopicOnly(req, reply);
  if (!topic) return;
  Svc(ctx, req).DeleteTopicConfig(std::move(*topic), [reply = std::move(reply)](Status s) mutable {
    reply(JsonResponse(
        EncodeStatusAnswer(AppCode(s.code()), s.ok() ? std::string_view("success") : s.message())));
  });
}

void PurgeTopic(const HandlerContext* ctx, HttpRequest& req, Reply reply) {
  std::optional<Params> params = ParseParams(req, reply);
  if (!params) return;
  ParamReader r(*params);
  service::PurgeRequest p;
  std::optional<std::string> topic = r.String("topic", true);
  p.status = r.Long("status", false);
  if (ReaderFailed(r, req, reply)) return;
  p.topic = std::move(*topic);
  Svc(ctx, req).Purge(std::move(p), CountAnswer(std::move(reply), "purged"));
}

void RedriveMsg(const HandlerContext* ctx, HttpRequest& req, Reply reply) {
  std::optional<Params> params = ParseParams(req, reply);
  if (!params) return;
  ParamReader r(*params);
  service::RedriveRequest d;
  std::optional<std::string> topic = r.String("topic", true);
  d.msg_id = r.String("msgId", false);
  d.limit = r.Long("limit", false);
  d.delay_millis = r.Long("delayMillis", false);
  if (ReaderFailed(r, req, reply)) return;
  d.topic = std::move(*topic);
  Svc(ctx, req).Redrive(std::move(d), CountAnswer(std::move(reply), "redriven"));
}

}  // namespace

void RegisterTopicRoutes(Router& router, const HandlerContext* ctx) {
  AddQueueRoute(router, ctx, "setTopicConfig", auth::Operation::kWriteTopicConfig, {"POST"},
                SetTopicConfig);
  AddQueueRoute(router, ctx, "getTopicConfig", auth::Operation::kReadTopicConfig, {"GET"},
                GetTopicConfig);
  AddQueueRoute(router, ctx, "deleteTopicConfig", auth::Operation::kWriteTopicConfig, {"POST"},
                DeleteTopicConfig);
  AddQueueRoute(router, ctx, "pauseTopic", auth::Operation::kWriteTopicConfig, {"POST"},
                PauseTopic);
  AddQueueRoute(router, ctx, "resumeTopic", auth::Operation::kWriteTopicConfig, {"POST"},
                ResumeTopic);
  AddQueueRoute(router, ctx, "purgeTopic", auth::Operation::kPurge, {"POST"}, PurgeTopic);
  AddQueueRoute(router, ctx, "redriveMsg", auth::Operation::kRedrive, {"POST"}, RedriveMsg);
}

}  // namespace chronoq::http
