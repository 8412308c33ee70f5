#include "push/push_call.h"

#include <fmt/format.h>

#include <charconv>

namespace chronoq::push {
namespace {

bool IsTokenChar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool IsHostChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_';
}

// "host:port" with a non-empty host (an IPv6 literal in brackets) and a port in 1..65535.
bool IsHostPort(std::string_view s) {
  const size_t colon = s.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  std::string_view port = s.substr(colon + 1);
  int n = 0;
  auto [p, ec] = std::from_chars(port.data(), port.data() + port.size(), n);
  if (ec != std::errc() || p != port.data() + port.size() || n < 1 || n > 65535) return false;
  std::string_view host = s.substr(0, colon);
  if (host.front() == '[') return host.size() > 2 && host.back() == ']';
  for (char c : host) {
    if (!IsHostChar(c)) return false;
  }
  return true;
}

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
  constexpr std::string_view kHttp = "http://";
  constexpr std::string_view kHttps = "https://";
  auto lower_prefix = [&](std::string_view p) {
    if (url.size() < p.size()) return false;
    for (size_t i = 0; i < p.size(); ++i) {
      char c = url[i];
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      if (c != p[i]) return false;
    }
    return true;
  };
  HttpUrl parsed;
  if (lower_prefix(kHttps)) {
    parsed.tls = true;
    parsed.port = 443;
  } else if (!lower_prefix(kHttp)) {
    return InvalidArgument(
        fmt::format("callback url '{}' must start with http:// or https://", url));
  }
  std::string_view rest = url.substr(parsed.tls ? kHttps.size() : kHttp.size());
  if (const size_t hash = rest.find('#'); hash != std::string_view::npos) {
    rest = rest.substr(0, hash);
  }
  const size_t path_at = rest.find_first_of("/?");
  std::string_view authority = rest.substr(0, path_at);
  std::string_view target = path_at == std::string_view::npos ? "" : rest.substr(path_at);
  if (authority.find('@') != std::string_view::npos) {
    return InvalidArgument(fmt::format("callback url '{}': user information is not allowed", url));
  }
  std::string_view port_text;
  if (!authority.empty() && authority.front() == '[') {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos || close < 2) {
      return InvalidArgument(fmt::format("callback url '{}': bad IPv6 address", url));
    }
    parsed.host = std::string(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') {
        return InvalidArgument(fmt::format("callback url '{}': bad host", url));
      }
      port_text = after.substr(1);
    }
  } else {
    const size_t colon = authority.find(':');
    parsed.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port_text = authority.substr(colon + 1);
    for (char c : parsed.host) {
      if (!IsHostChar(c)) {
        return InvalidArgument(fmt::format("callback url '{}': bad host", url));
      }
    }
  }
  if (parsed.host.empty()) {
    return InvalidArgument(fmt::format("callback url '{}' has no host", url));
  }
  if (!port_text.empty() || authority.back() == ':') {
    int n = 0;
    auto [p, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), n);
    if (port_text.empty() || ec != std::errc() || p != port_text.data() + port_text.size() ||
        n < 1 || n > 65535) {
      return InvalidArgument(fmt::format("callback url '{}': bad port", url));
    }
    parsed.port = static_cast<uint16_t>(n);
  }
  for (char c : target) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) {
      return InvalidArgument(
          fmt::format("callback url '{}': spaces and control characters must be escaped", url));
    }
  }
  if (target.empty()) {
    parsed.target = "/";
  } else if (target.front() == '?') {
    parsed.target = "/" + std::string(target);
  } else {
    parsed.target = std::string(target);
  }
  *out = std::move(parsed);
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
