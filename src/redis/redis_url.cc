#include "redis/redis_url.h"

#include <fmt/format.h>

#include <charconv>

namespace chronoq::redis {
namespace {

constexpr std::string_view kStandalone = "redis://";
constexpr std::string_view kSentinel = "redis-sentinel://";
constexpr std::string_view kCluster = "redis-cluster://";

Status Bad(std::string_view url_for_msg, std::string_view what) {
  return InvalidArgument(fmt::format("invalid redis-url '{}': {}", url_for_msg, what));
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool PercentDecode(std::string_view in, std::string* out) {
  out->clear();
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] != '%') {
      out->push_back(in[i]);
      continue;
    }
    if (i + 2 >= in.size()) return false;
    int hi = HexValue(in[i + 1]);
    int lo = HexValue(in[i + 2]);
    if (hi < 0 || lo < 0) return false;
    out->push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  return true;
}

bool ParseInt(std::string_view s, int lo, int hi, int* out) {
  if (s.empty()) return false;
  int v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || v < lo || v > hi) return false;
  *out = v;
  return true;
}

Result<RedisEndpoint> ParseEndpoint(std::string_view text, std::string_view url) {
  if (text.empty()) return Bad(url, "empty host:port in the host list");
  std::string_view host;
  std::string_view port;
  if (text.front() == '[') {
    size_t close = text.find(']');
    if (close == std::string_view::npos) return Bad(url, fmt::format("'{}': unclosed '['", text));
    host = text.substr(1, close - 1);
    std::string_view rest = text.substr(close + 1);
    if (rest.empty() || rest.front() != ':') {
      return Bad(url, fmt::format("'{}': missing port (host:port)", text));
    }
    port = rest.substr(1);
  } else {
    size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) {
      return Bad(url, fmt::format("'{}': missing port (host:port)", text));
    }
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (host.find(':') != std::string_view::npos) {
      return Bad(url, fmt::format("'{}': an IPv6 address must be in brackets, [addr]:port", text));
    }
  }
  if (host.empty()) return Bad(url, fmt::format("'{}': empty host", text));
  RedisEndpoint e;
  e.host = std::string(host);
  if (!ParseInt(port, 1, 65535, &e.port)) {
    return Bad(url, fmt::format("'{}': port '{}' is not a number from 1 to 65535", text, port));
  }
  return e;
}

}  // namespace

Result<RedisUrl> ParseRedisUrl(std::string_view url) {
  RedisUrl out;
  std::string_view rest;
  if (url.starts_with(kStandalone)) {
    out.mode = RedisMode::kStandalone;
    rest = url.substr(kStandalone.size());
  } else if (url.starts_with(kSentinel)) {
    out.mode = RedisMode::kSentinel;
    rest = url.substr(kSentinel.size());
  } else if (url.starts_with(kCluster)) {
    out.mode = RedisMode::kCluster;
    rest = url.substr(kCluster.size());
  } else {
    return InvalidArgument(
        fmt::format("invalid redis-url '{}': it must start with redis://, redis-sentinel:// or "
                    "redis-cluster://",
                    url));
  }
  // Credentials: everything before the last '@' of the authority. A password holding '/' must
  // encode it (%2F), or the authority would end there.
  size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
  size_t at = authority.rfind('@');
  // Error messages never show the password: they show `shown`.
  std::string shown(url);
  if (at != std::string_view::npos) {
    std::string_view userinfo = authority.substr(0, at);
    size_t colon = userinfo.find(':');
    if (colon == std::string_view::npos) {
      return Bad("(redacted)", "credentials must be ':password@' or 'user:password@'");
    }
    if (!PercentDecode(userinfo.substr(0, colon), &out.username) ||
        !PercentDecode(userinfo.substr(colon + 1), &out.password)) {
      return Bad("(redacted)", "broken percent-encoding in the credentials");
    }
    authority = authority.substr(at + 1);
    shown = fmt::format("{}{}:***@{}{}", url.substr(0, url.size() - rest.size()), out.username,
                        authority, path);
  }
  if (authority.empty()) return Bad(shown, "no host:port");
  size_t start = 0;
  for (;;) {
    size_t comma = authority.find(',', start);
    std::string_view part = authority.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    CQ_ASSIGN_OR_RETURN(RedisEndpoint e, ParseEndpoint(part, shown));
    out.endpoints.push_back(std::move(e));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  switch (out.mode) {
    case RedisMode::kStandalone:
      if (out.endpoints.size() != 1) {
        return Bad(shown,
                   "redis:// takes one host:port (use redis-sentinel:// or "
                   "redis-cluster:// for several)");
      }
      if (!path.empty() && path != "/") {
        if (!ParseInt(path.substr(1), 0, 1'000'000, &out.db)) {
          return Bad(shown,
                     fmt::format("database '{}' is not a non-negative number", path.substr(1)));
        }
      }
      break;
    case RedisMode::kSentinel:
      if (path.size() <= 1) {
        return Bad(shown,
                   "redis-sentinel:// needs the master name: "
                   "redis-sentinel://h1:p1,h2:p2/<master-name>");
      }
      out.master_name = std::string(path.substr(1));
      if (out.master_name.find('/') != std::string::npos) {
        return Bad(shown, fmt::format("master name '{}' must not contain '/'", out.master_name));
      }
      break;
    case RedisMode::kCluster:
      if (!path.empty() && path != "/") {
        return Bad(shown, "redis-cluster:// takes no path (a cluster has no databases)");
      }
      break;
  }
  return out;
}

std::string RedisUrl::Redacted() const {
  std::string s;
  switch (mode) {
    case RedisMode::kStandalone:
      s = "redis://";
      break;
    case RedisMode::kSentinel:
      s = "redis-sentinel://";
      break;
    case RedisMode::kCluster:
      s = "redis-cluster://";
      break;
  }
  if (!username.empty() || !password.empty()) s += username + ":***@";
  for (size_t i = 0; i < endpoints.size(); ++i) {
    if (i > 0) s += ',';
    const RedisEndpoint& e = endpoints[i];
    s += e.host.find(':') != std::string::npos ? "[" + e.host + "]" : e.host;
    s += fmt::format(":{}", e.port);
  }
  if (mode == RedisMode::kStandalone && db != 0) s += fmt::format("/{}", db);
  if (mode == RedisMode::kSentinel) s += "/" + master_name;
  return s;
}

}  // namespace chronoq::redis
