#include "push/push_call.h"

#include <fmt/format.h>

#include "core/callback.h"

namespace chronoq::push {
namespace {

bool IsTokenChar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

// "host:port" (an IPv6 literal in brackets) with a port in 1..65535.
bool IsHostPort(std::string_view s) { return core::ParseHostPort("target", s).has_value(); }

}  // namespace

std::string_view KindName(Kind kind) {
  switch (kind) {
    case Kind::kHttp:
      return "http";
    case Kind::kGrpc:
      return "grpc";
    case Kind::kKafka:
      return "kafka";
  }
  return "unknown";
}

Status ParseHttpUrl(std::string_view url, HttpUrl* out) {
  CQ_ASSIGN_OR_RETURN(core::CallbackUrl u, core::ParseCallbackUrl(url));
  out->tls = u.https;
  out->host = std::move(u.endpoint.host);
  out->port = u.endpoint.port;
  out->target = std::move(u.target);
  return Status::Ok();
}

std::string TargetKey(const PushCall& call) {
  switch (call.kind) {
    case Kind::kHttp: {
      HttpUrl u;
      if (!ParseHttpUrl(call.url, &u).ok()) return call.url;
      if (u.host.find(':') != std::string::npos) return fmt::format("[{}]:{}", u.host, u.port);
      return fmt::format("{}:{}", u.host, u.port);
    }
    case Kind::kGrpc:
      return call.grpc_target;
    case Kind::kKafka:
      return call.brokers;
  }
  return call.url;
}

Status ValidatePushCall(const PushCall& call) {
  if (call.timeout.count() < 1) {
    return InvalidArgument(
        fmt::format("callback timeout must be at least 1 ms, got {} ms", call.timeout.count()));
  }
  if (call.outcome_reserve.count() < 0) {
    return InvalidArgument(fmt::format("push outcome_reserve must not be negative, got {} ms",
                                       call.outcome_reserve.count()));
  }
  switch (call.kind) {
    case Kind::kHttp: {
      HttpUrl u;
      if (Status st = ParseHttpUrl(call.url, &u); !st.ok()) return st;
      if (call.method.empty()) return InvalidArgument("callback method is empty");
      // These go into header lines as they are.
      const std::pair<const char*, const std::string*> in_headers[] = {
          {"msg id", &call.msg_id}, {"topic", &call.topic}, {"content type", &call.content_type}};
      for (const auto& [what, text] : in_headers) {
        if (text->find_first_of(std::string_view("\r\n\0", 3)) != std::string::npos) {
          return InvalidArgument(fmt::format("callback {} has a line break or NUL", what));
        }
      }
      for (char c : call.method) {
        if (!IsTokenChar(c)) {
          return InvalidArgument(
              fmt::format("callback method '{}' is not an HTTP method", call.method));
        }
      }
      for (const auto& [name, value] : call.headers) {
        if (name.empty()) return InvalidArgument("callback header with an empty name");
        for (char c : name) {
          if (!IsTokenChar(c)) {
            return InvalidArgument(fmt::format("callback header name '{}' is not a token", name));
          }
        }
        for (char c : value) {
          if (c == '\r' || c == '\n' || c == '\0') {
            return InvalidArgument(
                fmt::format("callback header '{}' has a line break or NUL in its value", name));
          }
        }
      }
      return Status::Ok();
    }
    case Kind::kGrpc:
      if (!IsHostPort(call.grpc_target)) {
        return InvalidArgument(
            fmt::format("callback target '{}' must be host:port", call.grpc_target));
      }
      if (call.grpc_method.size() < 4 || call.grpc_method.front() != '/' ||
          call.grpc_method.find('/', 1) == std::string::npos || call.grpc_method.back() == '/' ||
          call.grpc_method[1] == '/') {
        return InvalidArgument(
            fmt::format("callback method '{}' must be /package.Service/Method", call.grpc_method));
      }
      return Status::Ok();
    case Kind::kKafka: {
      if (call.brokers.empty()) return InvalidArgument("callback brokers is empty");
      std::string_view rest = call.brokers;
      while (!rest.empty()) {
        const size_t comma = rest.find(',');
        std::string_view one = rest.substr(0, comma);
        if (!IsHostPort(one)) {
          return InvalidArgument(
              fmt::format("callback brokers '{}': '{}' is not host:port", call.brokers, one));
        }
        rest = comma == std::string_view::npos ? "" : rest.substr(comma + 1);
      }
      if (call.kafka_topic.empty()) return InvalidArgument("callback Kafka topic is empty");
      return Status::Ok();
    }
  }
  return InvalidArgument("callback kind is unknown");
}

}  // namespace chronoq::push
