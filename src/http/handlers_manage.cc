// The endpoints of API-EXTENSIONS.md sections 2-3: sendMsgBatch and ackMsgBatch (JSON bodies),
// updateMsg, touchMsg, countMsg (POST), listMsg (GET). Protocol only, like handlers_queue.cc: the
// service owns the rules. A refusal of a whole batch (no such object, too many or no items, a
// msgId twice, an invalid topic) is a request error (HTTP 400): nothing was stored.
#include <fmt/format.h>

#include <boost/json/monotonic_resource.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include "http/callback_json.h"
#include "http/codec.h"
#include "http/error_map.h"
#include "http/handlers.h"
#include "http/params.h"

namespace chronoq::http {
namespace json = boost::json;
namespace {

using core::Message;

// The body as a JSON object, or a request error naming `shape` (what the body should be).
const json::object* ParseObject(const HttpRequest& req, json::value& holder,
                                json::monotonic_resource& mr, std::string_view shape,
                                Reply& reply) {
  json::error_code ec;
  holder = json::parse(req.body, ec, &mr);
  if (ec || !holder.is_object()) {
    reply(RequestError(
        400,
        fmt::format("the body must be a JSON object {}{}", shape,
                    ec ? fmt::format(" (it is not valid JSON: {})", ec.message()) : std::string()),
        req.path()));
    return nullptr;
  }
  // json::parse keeps the last of two equal keys; a parameter given twice is a request error
  // (API.md section 1), in the batch object and in its items alike.
  if (std::optional<std::string> twice = DuplicateJsonKey(req.body)) {
    reply(RequestError(400,
                       fmt::format("parameter '{}' is given twice in one object of the JSON body",
                                   twice->substr(0, 64)),
                       req.path()));
    return nullptr;
  }
  return &holder.get_object();
}

// The members of one JSON object as parameters (json_body.cc's rules: strings as given, numbers
// by their value, booleans as true/false, null as absent, objects and arrays non-scalar).
Status ObjectParams(const json::object& o, Params* out) {
  for (const auto& kv : o) {
    const json::value& v = kv.value();
    std::string text;
    bool non_scalar = false;
    switch (v.kind()) {
      case json::kind::null:
        continue;
      case json::kind::string:
        text.assign(v.get_string().data(), v.get_string().size());
        break;
      case json::kind::int64:
        text = std::to_string(v.get_int64());
        break;
      case json::kind::uint64:
        text = std::to_string(v.get_uint64());
        break;
      case json::kind::double_:
        // A fraction or an exponent is never an integer (API.md section 1), even where its value
        // is one (1e3, -0.0): keep a decimal point so that integer parsing refuses it.
        text = fmt::format("{}", v.get_double());
        if (ParseInt64(text)) text += ".0";
        break;
      case json::kind::bool_:
        text = v.get_bool() ? "true" : "false";
        break;
      case json::kind::object:
      case json::kind::array:
        non_scalar = true;
        text = json::serialize(v);
        break;
    }
    CQ_RETURN_IF_ERROR(out->Add("JSON body", std::string(kv.key()), std::move(text), non_scalar));
  }
  return Status::Ok();
}

// A string member of the batch object; a request error when present but not a string.
std::optional<std::string> StringMember(const json::object& o, std::string_view name,
                                        Status* error) {
  const json::value* v = o.if_contains(name);
  if (v == nullptr || v->is_null()) return std::nullopt;
  if (!v->is_string()) {
    *error = InvalidArgument(fmt::format("'{}' must be a string", name));
    return std::nullopt;
  }
  return std::string(v->get_string().data(), v->get_string().size());
}

// An array member of the batch object (absent: empty); a request error when not an array.
const json::array* ArrayMember(const json::object& o, std::string_view name, Status* error) {
  static const json::array kEmpty;
  const json::value* v = o.if_contains(name);
  if (v == nullptr || v->is_null()) return &kEmpty;
  if (!v->is_array()) {
    *error = InvalidArgument(fmt::format("'{}' must be an array", name));
    return nullptr;
  }
  return &v->get_array();
}

void SendMsgBatch(const HandlerContext* ctx, HttpRequest& req, Reply reply) {
  json::monotonic_resource mr;
  json::value holder;
  const json::object* body =
      ParseObject(req, holder, mr, R"({"topic":"...","msgs":[{sendMsg parameters}, ...]})", reply);
  if (body == nullptr) return;
  Status error;
  std::optional<std::string> topic = StringMember(*body, "topic", &error);
  const json::array* msgs = error.ok() ? ArrayMember(*body, "msgs", &error) : nullptr;
  if (error.ok() && !topic) error = InvalidArgument("required parameter 'topic' is missing");
  if (error.ok() && body->if_contains("msgs") == nullptr) {
    error = InvalidArgument("required parameter 'msgs' is missing");
  }
  if (error.ok()) error = Svc(ctx, req).CheckSendBatchSize(msgs->size());
  if (!error.ok()) return reply(RequestError(400, error.message(), req.path()));

  // Decode each item. One that cannot be read still goes to the service, marked so: it is
  // answered with why, and it counts in the checks of the whole batch (its size, repeated msgIds).
  service::SendBatchRequest batch;
  batch.topic = std::move(*topic);
  batch.msgs.resize(msgs->size());
  batch.unreadable.resize(msgs->size());
  for (size_t i = 0; i < msgs->size(); ++i) {
    const json::value& item = (*msgs)[i];
    Status& s = batch.unreadable[i];
    if (!item.is_object()) {
      s = InvalidArgument("must be a JSON object of sendMsg parameters");
      continue;
    }
    Params p;
    s = ObjectParams(item.get_object(), &p);
    if (s.ok() && p.Find("topic") != nullptr && *p.Find("topic") != batch.topic) {
      s = InvalidArgument("topic is given once for the whole batch, not per message");
    }
    if (s.ok() || p.Find("msgId") != nullptr) {
      ParamReader r(p);
      ReadSendFields(r, batch.msgs[i]);  // the msgId, when it is one, even if the rest fails
      if (s.ok()) s = r.status();
    }
  }
  Svc(ctx, req).SendBatch(
      std::move(batch), [reply = std::move(reply), path = std::string(req.path())](
                            Result<std::vector<Result<backend::Sent>>> res) mutable {
        if (!res.has_value()) {
          const Status& s = res.error();
          if (s.code() == Errc::kInvalidArgument)
            return reply(RequestError(400, s.message(), path));
          return reply(JsonResponse(EncodeNullAnswer(AppCode(s.code()), s.message(), {"results"})));
        }
        std::vector<ItemAnswer> answers(res->size());
        for (size_t i = 0; i < res->size(); ++i) {
          Result<backend::Sent>& r = (*res)[i];
          answers[i] = r.has_value()
                           ? ItemAnswer{200, "success", &r->message, r->existing}
                           : ItemAnswer{AppCode(r.error().code()),
                                        fmt::format("msgs[{}]: {}", i, r.error().message())};
        }
        reply(JsonResponse(EncodeSendBatchAnswer(answers)));
      });
}

// The ids of an ack or nack array: strings only.
Status ReadIds(const json::array& a, std::string_view name, std::vector<std::string>* out) {
  out->reserve(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    if (!a[i].is_string()) {
      return InvalidArgument(fmt::format("{}[{}] must be a msgId string", name, i));
    }
    out->emplace_back(a[i].get_string().data(), a[i].get_string().size());
  }
  return Status::Ok();
}

void AckMsgBatch(const HandlerContext* ctx, HttpRequest& req, Reply reply) {
  json::monotonic_resource mr;
  json::value holder;
  const json::object* body =
      ParseObject(req, holder, mr,
                  R"({"topic":"...","ack":["id", ...],"nack":["id", ...],"reason":"..."})", reply);
  if (body == nullptr) return;
  Status error;
  service::AckBatchRequest batch;
  std::optional<std::string> topic = StringMember(*body, "topic", &error);
  if (error.ok() && !topic) error = InvalidArgument("required parameter 'topic' is missing");
  std::optional<std::string> reason;
  if (error.ok()) reason = StringMember(*body, "reason", &error);
  for (auto [name, ids] : {std::pair{"ack", &batch.ack}, std::pair{"nack", &batch.nack}}) {
    if (!error.ok()) break;
    const json::array* a = ArrayMember(*body, name, &error);
    if (a != nullptr) error = ReadIds(*a, name, ids);
  }
  if (!error.ok()) return reply(RequestError(400, error.message(), req.path()));
  batch.topic = std::move(*topic);
  batch.reason = reason.value_or("");
  Svc(ctx, req).AckBatch(
      std::move(batch), [reply = std::move(reply), path = std::string(req.path())](
                            Result<std::vector<service::AckResult>> res) mutable {
        if (!res.has_value()) {
          const Status& s = res.error();
          if (s.code() == Errc::kInvalidArgument)
            return reply(RequestError(400, s.message(), path));
          return reply(JsonResponse(EncodeNullAnswer(AppCode(s.code()), s.message(), {"results"})));
        }
        std::vector<AckItemAnswer> answers;
        answers.reserve(res->size());
        for (service::AckResult& r : *res) {
          answers.push_back({std::move(r.msg_id), r.ack, AppCode(r.status.code()),
                             r.status.ok() ? "success" : r.status.message()});
        }
        reply(JsonResponse(EncodeAckBatchAnswer(answers)));
      });
}

backend::Callback<Result<Message>> MessageAnswer(Reply reply) {
  return [reply = std::move(reply)](Result<Message> res) mutable {
    reply(JsonResponse(res.has_value() ? EncodeMessageAnswer(200, "success", &*res)
                                       : EncodeMessageAnswer(AppCode(res.error().code()),
                                                             res.error().message(), nullptr)));
  };
}

// topic and msgId (required), in that order; nullopt (with the reader's error) when missing.
std::optional<service::MessageRef> Ref(ParamReader& r) {
  std::optional<std::string> topic = r.String("topic", true);
  std::optional<std::string> msg_id = r.String("msgId", true);
  if (!topic || !msg_id) return std::nullopt;
  return service::MessageRef{std::move(*topic), std::move(*msg_id)};
}

void UpdateMsg(const HandlerContext* ctx, HttpRequest& req, Reply reply) {
  std::optional<Params> params = ParseParams(req, reply);
  if (!params) return;
  ParamReader r(*params);
  service::UpdateRequest u;
  std::optional<service::MessageRef> ref = Ref(r);
  u.delay_millis = r.Long("delayMillis", false);
  u.trigger_time = r.Long("triggerTime", false);
  u.msg = r.String("msg", false);
  u.ttl_millis = r.Long("ttlMillis", false);
  u.max_retry = r.Int("maxRetry", false);  // an int, as on sendMsg (API.md section 1)
  u.priority = r.Long("priority", false);
  if (ReaderFailed(r, req, reply)) return;
  // What the request must give, like a required parameter (API.md section 2, layer 1): at least
  // one field, and not both delayMillis and triggerTime (as on sendMsg).
  if (u.delay_millis && u.trigger_time) {
    return reply(
        RequestError(400, "give either 'delayMillis' or 'triggerTime', not both", req.path()));
  }
  if (!u.delay_millis && !u.trigger_time && !u.msg && !u.ttl_millis && !u.max_retry &&
      !u.priority) {
    return reply(RequestError(400,
                              "nothing to update: give at least one of 'delayMillis', "
                              "'triggerTime', 'msg', 'ttlMillis', 'maxRetry', 'priority'",
                              req.path()));
  }
  u.ref = std::move(*ref);
  Svc(ctx, req).Update(std::move(u), MessageAnswer(std::move(reply)));
}

void TouchMsg(const HandlerContext* ctx, HttpRequest& req, Reply reply) {
  std::optional<Params> params = ParseParams(req, reply);
  if (!params) return;
  ParamReader r(*params);
  std::optional<service::MessageRef> ref = Ref(r);
  std::optional<int64_t> ack_timeout = r.Long("ackTimeoutMillis", false);
  if (ReaderFailed(r, req, reply)) return;
  Svc(ctx, req).Touch(service::TouchRequest{std::move(*ref), ack_timeout},
                      MessageAnswer(std::move(reply)));
}

void CountMsg(const HandlerContext* ctx, HttpRequest& req, Reply reply) {
  std::optional<Params> params = ParseParams(req, reply);
  if (!params) return;
  ParamReader r(*params);
  std::optional<service::MessageRef> ref = Ref(r);
  std::optional<int64_t> count = r.Long("count", false);
  if (ReaderFailed(r, req, reply)) return;
  Svc(ctx, req).Count(service::CountRequest{std::move(*ref), count},
                      MessageAnswer(std::move(reply)));
}

void ListMsg(const HandlerContext* ctx, HttpRequest& req, Reply reply) {
  std::optional<Params> params = ParseParams(req, reply);
  if (!params) return;
  ParamReader r(*params);
  service::ListRequest l;
  std::optional<std::string> topic = r.String("topic", true);
  l.status = r.Long("status", false);
  l.limit = r.Long("limit", false);
  std::optional<std::string> cursor = r.String("cursor", false);
  const bool export_fields = r.Bool("export", false).value_or(false);
  if (ReaderFailed(r, req, reply)) return;
  l.topic = std::move(*topic);
  l.cursor = cursor.value_or("");
  l.reveal_callback_headers = export_fields;  // chronoq export/import: the real values
  Svc(ctx, req).List(std::move(l), [reply = std::move(reply),
                                    export_fields](Result<backend::ListPage> res) mutable {
    reply(JsonResponse(res.has_value()
                           ? EncodeListPageAnswer(res->messages, res->next_cursor, export_fields)
                           : EncodeNullAnswer(AppCode(res.error().code()), res.error().message(),
                                              {"delayMsgList", "nextCursor"})));
  });
}

}  // namespace

void ReadSendFields(ParamReader& r, service::SendRequest& s) {
  std::optional<std::string> msg_id = r.String("msgId", false);
  std::optional<std::string> msg = r.String("msg", true);
  s.delay_millis = r.Long("delayMillis", false);
  s.ttl_millis = r.Long("ttlMillis", false);
  s.max_retry = r.Int("maxRetry", false);
  s.trigger_time = r.Long("triggerTime", false);
  s.priority = r.Long("priority", false);
  s.count_trigger = r.Long("countTrigger", false);
  if (std::optional<std::string> callback = r.JsonText("callback")) {
    Result<core::Callback> cb = ParseCallbackJson(*callback);
    if (cb.has_value()) {
      s.callback = std::move(*cb);
    } else {
      r.Fail(cb.error().message());
    }
  }
  if (msg_id) s.msg_id = std::move(*msg_id);
  if (msg) s.msg = std::move(*msg);
}

void RegisterManageRoutes(Router& router, const HandlerContext* ctx) {
  AddQueueRoute(router, ctx, "sendMsgBatch", auth::Operation::kSendBatch, {"POST"}, SendMsgBatch);
  AddQueueRoute(router, ctx, "ackMsgBatch", auth::Operation::kAckBatch, {"POST"}, AckMsgBatch);
  AddQueueRoute(router, ctx, "updateMsg", auth::Operation::kUpdate, {"POST"}, UpdateMsg);
  AddQueueRoute(router, ctx, "touchMsg", auth::Operation::kTouch, {"POST"}, TouchMsg);
  AddQueueRoute(router, ctx, "countMsg", auth::Operation::kCount, {"POST"}, CountMsg);
  AddQueueRoute(router, ctx, "listMsg", auth::Operation::kList, {"GET"}, ListMsg);
}

}  // namespace chronoq::http
