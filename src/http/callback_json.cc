#include "http/callback_json.h"

#include <fmt/format.h>

#include <array>
#include <boost/json/monotonic_resource.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <span>

#include "http/params.h"

namespace chronoq::http {
namespace json = boost::json;
namespace {

using core::Callback;
using core::CallbackType;

constexpr std::string_view kShape = R"({"type":"http","url":"http://host:port/path"})";

// The members each type accepts, besides "type".
constexpr std::array<std::string_view, 6> kHttpMembers = {
    "url", "method", "headers", "body", "timeoutMillis", "retryIntervalMillis"};
constexpr std::array<std::string_view, 5> kGrpcMembers = {"target", "method", "format",
                                                          "timeoutMillis", "retryIntervalMillis"};
constexpr std::array<std::string_view, 5> kKafkaMembers = {"brokers", "topic", "key",
                                                           "timeoutMillis", "retryIntervalMillis"};

Status CheckMembers(const json::object& o, CallbackType type,
                    std::span<const std::string_view> known) {
  for (const auto& kv : o) {
    std::string_view k(kv.key().data(), kv.key().size());
    if (k == "type") continue;
    bool ok = false;
    for (std::string_view n : known) ok = ok || n == k;
    if (!ok) {
      std::string names;
      for (std::string_view n : known) {
        if (!names.empty()) names += ", ";
        names += n;
      }
      return InvalidArgument(
          fmt::format("callback has an unknown member '{}' for type {} (known: {})",
                      k.substr(0, 64), core::CallbackTypeName(type), names));
    }
  }
  return Status::Ok();
}

class Reader {
 public:
  explicit Reader(const json::object& o) : o_(o) {}

  // A string member into `out` (left as it is when absent or null).
  Status Str(std::string_view name, std::string& out) {
    const json::value* v = o_.if_contains(name);
    if (v == nullptr || v->is_null()) return Status::Ok();
    if (!v->is_string()) return InvalidArgument(fmt::format("callback.{} must be a string", name));
    out.assign(v->get_string().data(), v->get_string().size());
    return Status::Ok();
  }
  Status Millis(std::string_view name, std::optional<chronoq::Millis>& out) {
    const json::value* v = o_.if_contains(name);
    if (v == nullptr || v->is_null()) return Status::Ok();
    if (v->is_int64()) {
      out = chronoq::Millis(v->get_int64());
    } else if (v->is_uint64()) {
      out = chronoq::Millis(INT64_MAX);  // beyond every limit: the range check names it
    } else {
      return InvalidArgument(fmt::format("callback.{} must be an integer", name));
    }
    return Status::Ok();
  }
  // A member naming one of two choices; `second` sets `out`.
  Status Choice(std::string_view name, std::string_view first, std::string_view second, bool& out) {
    std::string text;
    CQ_RETURN_IF_ERROR(Str(name, text));
    if (text.empty() || text == first) return Status::Ok();
    if (text == second) {
      out = true;
      return Status::Ok();
    }
    return InvalidArgument(fmt::format("callback.{} must be '{}' or '{}', got '{}'", name, first,
                                       second, text.substr(0, 64)));
  }
  Status Headers(std::vector<std::pair<std::string, std::string>>& out) {
    const json::value* v = o_.if_contains("headers");
    if (v == nullptr || v->is_null()) return Status::Ok();
    if (!v->is_object()) return InvalidArgument("callback.headers must be an object of strings");
    for (const auto& kv : v->get_object()) {
      if (!kv.value().is_string()) {
        return InvalidArgument(fmt::format("callback.headers.{} must be a string",
                                           std::string_view(kv.key()).substr(0, 64)));
      }
      out.emplace_back(std::string(kv.key()), std::string(kv.value().get_string()));
    }
    return Status::Ok();
  }

 private:
  const json::object& o_;
};

}  // namespace

Result<core::Callback> ParseCallbackJson(std::string_view text) {
  json::monotonic_resource mr;
  json::error_code ec;
  json::value v = json::parse(text, ec, &mr);
  if (ec || !v.is_object()) {
    return InvalidArgument(fmt::format("callback must be a JSON object like {}", kShape));
  }
  if (std::optional<std::string> twice = DuplicateJsonKey(text)) {
    return InvalidArgument(
        fmt::format("callback gives member '{}' twice", std::string_view(*twice).substr(0, 64)));
  }
  const json::object& o = v.get_object();
  Reader r(o);
  std::string type;
  CQ_RETURN_IF_ERROR(r.Str("type", type));
  Callback cb;
  if (type == "http") {
    cb.type = CallbackType::kHttp;
    CQ_RETURN_IF_ERROR(CheckMembers(o, cb.type, kHttpMembers));
    CQ_RETURN_IF_ERROR(r.Str("url", cb.url));
    CQ_RETURN_IF_ERROR(r.Str("method", cb.method));
    CQ_RETURN_IF_ERROR(r.Headers(cb.headers));
    CQ_RETURN_IF_ERROR(r.Choice("body", "json", "raw", cb.raw_body));
  } else if (type == "grpc") {
    cb.type = CallbackType::kGrpc;
    cb.method.clear();  // required for gRPC: no default
    CQ_RETURN_IF_ERROR(CheckMembers(o, cb.type, kGrpcMembers));
    CQ_RETURN_IF_ERROR(r.Str("target", cb.target));
    CQ_RETURN_IF_ERROR(r.Str("method", cb.method));
    CQ_RETURN_IF_ERROR(r.Choice("format", "raw", "base64", cb.base64));
  } else if (type == "kafka") {
    cb.type = CallbackType::kKafka;
    cb.method.clear();
    CQ_RETURN_IF_ERROR(CheckMembers(o, cb.type, kKafkaMembers));
    CQ_RETURN_IF_ERROR(r.Str("brokers", cb.brokers));
    CQ_RETURN_IF_ERROR(r.Str("topic", cb.kafka_topic));
    CQ_RETURN_IF_ERROR(r.Str("key", cb.key));
  } else if (type.empty()) {
    return InvalidArgument("callback.type is missing (http, grpc or kafka)");
  } else {
    return InvalidArgument(fmt::format("callback.type must be http, grpc or kafka, got '{}'",
                                       std::string_view(type).substr(0, 64)));
  }
  std::optional<chronoq::Millis> timeout;
  CQ_RETURN_IF_ERROR(r.Millis("timeoutMillis", timeout));
  if (timeout) cb.timeout = *timeout;
  CQ_RETURN_IF_ERROR(r.Millis("retryIntervalMillis", cb.retry_interval));
  return cb;
}

void WriteCallbackJson(JsonWriter& w, const core::Callback& cb) {
  w.BeginObject().Str("type", core::CallbackTypeName(cb.type));
  switch (cb.type) {
    case CallbackType::kHttp:
      w.Str("url", cb.url).Str("method", cb.method);
      if (!cb.headers.empty()) {
        w.Key("headers").BeginObject();
        for (const auto& [k, v] : cb.headers) w.Str(k, v);
        w.EndObject();
      }
      w.Str("body", cb.raw_body ? "raw" : "json");
      break;
    case CallbackType::kGrpc:
      w.Str("target", cb.target)
          .Str("method", cb.method)
          .Str("format", cb.base64 ? "base64" : "raw");
      break;
    case CallbackType::kKafka:
      w.Str("brokers", cb.brokers).Str("topic", cb.kafka_topic);
      if (!cb.key.empty()) w.Str("key", cb.key);
      break;
  }
  w.Num("timeoutMillis", cb.timeout.count());
  if (cb.retry_interval) w.Num("retryIntervalMillis", cb.retry_interval->count());
  w.EndObject();
}

}  // namespace chronoq::http
