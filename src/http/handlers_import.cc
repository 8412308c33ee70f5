// importMsgBatch (POST, JSON body; docs/api-extensions.md "Export and import", issue 21): stores
// exported messages with their full state. Protocol only: this file reads each item's fields
// with their JSON types (a field of the wrong type or a required one missing refuses that item,
// with a sentence naming it); the service checks the values and stores.
#include <fmt/format.h>

#include <boost/json/monotonic_resource.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include "http/callback_json.h"
#include "http/codec.h"
#include "http/error_map.h"
#include "http/handlers.h"
#include "http/json_writer.h"
#include "http/params.h"

namespace chronoq::http {
namespace json = boost::json;
namespace {

// Reads the members of one item, latching the first error.
class ItemReader {
 public:
  explicit ItemReader(const json::object& o, std::string prefix = "")
      : o_(o), prefix_(std::move(prefix)) {}

  void String(std::string_view name, bool required, std::string* out) {
    const json::value* v = Member(name, required);
    if (v == nullptr) return;
    if (!v->is_string()) return Fail(fmt::format("{}{} must be a string", prefix_, name));
    out->assign(v->get_string().data(), v->get_string().size());
  }
  // An integer (a JSON number without fraction or exponent, within int64).
  bool Int(std::string_view name, bool required, int64_t* out) {
    const json::value* v = Member(name, required);
    if (v == nullptr) return false;
    if (v->is_int64()) {
      *out = v->get_int64();
    } else if (v->is_uint64()) {
      Fail(fmt::format("{}{} is too large", prefix_, name));
      return false;
    } else {
      Fail(fmt::format("{}{} must be an integer", prefix_, name));
      return false;
    }
    return true;
  }
  void OptInt(std::string_view name, std::optional<int64_t>* out) {
    int64_t x = 0;
    if (Int(name, false, &x)) *out = x;
  }
  void Bool(std::string_view name, bool* out) {
    const json::value* v = Member(name, false);
    if (v == nullptr) return;
    if (!v->is_bool()) return Fail(fmt::format("{}{} must be true or false", prefix_, name));
    *out = v->get_bool();
  }
  const json::object* Object(std::string_view name) {
    const json::value* v = Member(name, false);
    if (v == nullptr) return nullptr;
    if (!v->is_object()) {
      Fail(fmt::format("{}{} must be a JSON object", prefix_, name));
      return nullptr;
    }
    return &v->get_object();
  }
  void Fail(std::string msg) {
    if (status_.ok()) status_ = InvalidArgument(std::move(msg));
  }
  const Status& status() const { return status_; }

 private:
  const json::value* Member(std::string_view name, bool required) {
    if (!status_.ok()) return nullptr;
    const json::value* v = o_.if_contains(name);
    if (v != nullptr && v->is_null()) v = nullptr;
    if (v == nullptr && required) Fail(fmt::format("{}{} is missing", prefix_, name));
    return v;
  }
  const json::object& o_;
  std::string prefix_;
  Status status_;
};

void ReadItem(const json::value& value, service::ImportItem& it) {
  if (!value.is_object()) {
    it.unreadable =
        InvalidArgument("must be a JSON object (a message as chronoq export writes it)");
    return;
  }
  ItemReader r(value.get_object());
  r.String("topic", true, &it.topic);
  r.String("msgId", true, &it.msg_id);
  r.String("msg", true, &it.msg);
  r.Int("produceTime", true, &it.produce_time);
  r.Int("triggerTime", true, &it.trigger_time);
  r.Int("expireTime", true, &it.expire_time);
  r.Int("maxRetry", true, &it.max_retry);
  r.Int("retry", true, &it.retry);
  r.Int("status", true, &it.status);
  r.Int("priority", false, &it.priority);
  r.Int("countTrigger", false, &it.count_trigger);
  r.Int("count", false, &it.count);
  r.String("lastError", false, &it.last_error);
  r.Bool("push", &it.push);
  int64_t attempts = 0;
  r.Int("attempts", false, &attempts);  // the same as retry on a push-lane message
  r.OptInt("visibleTime", &it.visible_time);
  r.OptInt("ackDeadline", &it.ack_deadline);
  r.Int("retryIntervalMillis", false, &it.retry_interval_millis);
  if (const json::object* cb = r.Object("callback")) {
    Result<core::Callback> parsed = ParseCallbackJson(json::serialize(*cb));
    if (parsed.has_value()) {
      it.callback = std::move(*parsed);
    } else {
      r.Fail(parsed.error().message());
    }
  }
  if (const json::object* dl = r.Object("deadLetter")) {
    ItemReader d(*dl, "deadLetter.");
    service::ImportItem::DeadLetter out;
    d.String("topic", true, &out.topic);
    d.Int("status", true, &out.status);
    d.Int("retry", true, &out.retry);
    d.Int("endTime", true, &out.end_time);
    if (!d.status().ok()) r.Fail(d.status().message());
    it.dead_letter = std::move(out);
  }
  it.unreadable = r.status();
}

void ImportMsgBatch(const HandlerContext* ctx, HttpRequest& req, Reply reply) {
  json::monotonic_resource mr;
  json::error_code ec;
  json::value body = json::parse(req.body, ec, &mr);
  const json::value* msgs = nullptr;
  if (!ec && body.is_object()) msgs = body.get_object().if_contains("msgs");
  if (ec || msgs == nullptr || !msgs->is_array()) {
    return reply(RequestError(
        400,
        fmt::format(R"(the body must be a JSON object {{"msgs":[message, ...]}}{})",
                    ec ? fmt::format(" (it is not valid JSON: {})", ec.message()) : std::string()),
        req.path()));
  }
  const json::array& items = msgs->get_array();
  service::ImportRequest batch;
  batch.items.resize(items.size());
  for (size_t i = 0; i < items.size(); ++i) ReadItem(items[i], batch.items[i]);
  ctx->service->Import(
      std::move(batch), [reply = std::move(reply), path = std::string(req.path())](
                            Result<std::vector<Result<service::ImportOutcome>>> res) mutable {
        if (!res.has_value()) {
          const Status& s = res.error();
          if (s.code() == Errc::kInvalidArgument) {
            return reply(RequestError(400, s.message(), path));
          }
          return reply(JsonResponse(EncodeNullAnswer(AppCode(s.code()), s.message(), {"results"})));
        }
        int64_t imported = 0, skipped = 0, refused = 0;
        JsonWriter w;
        w.BeginObject().Num("code", 200).Str("msg", "success").Key("results").BeginArray();
        for (const Result<service::ImportOutcome>& r : *res) {
          w.BeginObject();
          if (!r.has_value()) {
            ++refused;
            w.Num("code", AppCode(r.error().code())).Str("msg", r.error().message());
          } else if (*r == service::ImportOutcome::kImported) {
            ++imported;
            w.Num("code", 200).Str("msg", "imported");
          } else {
            ++skipped;
            w.Num("code", 200).Str("msg", "skipped: a message with this msgId is in life");
            w.Key("skipped").Bool(true);
          }
          w.EndObject();
        }
        w.EndArray().Num("imported", imported).Num("skipped", skipped).Num("refused", refused);
        reply(JsonResponse(w.EndObject().Take()));
      });
}

}  // namespace

void RegisterImportRoutes(Router& router, const HandlerContext* ctx) {
  AddQueueRoute(router, ctx, "importMsgBatch", auth::Operation::kImport, {"POST"}, ImportMsgBatch);
}

}  // namespace chronoq::http
