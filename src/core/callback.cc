#include "core/callback.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "core/limits.h"

namespace chronoq::core {
namespace {

constexpr uint8_t kCallbackFormat = 1;

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Letters, digits, '-', '.', '_': a DNS name or an IPv4 address (IPv6 is checked apart).
bool IsHostName(std::string_view h) {
  if (h.empty() || h.size() > 253) return false;
  return std::all_of(h.begin(), h.end(), [](char c) {
    return IsAlpha(c) || IsDigit(c) || c == '-' || c == '.' || c == '_';
  });
}

bool IsIpv6(std::string_view h) {
  if (h.size() < 2 || h.find(':') == std::string_view::npos) return false;
  return std::all_of(h.begin(), h.end(), [](char c) {
    return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == ':' || c == '.';
  });
}

Result<uint16_t> ParsePort(std::string_view param, std::string_view text, std::string_view whole) {
  unsigned port = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), port);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || port == 0 ||
      port > 65535) {
    return InvalidArgument(
        fmt::format("{} has no valid port in '{}' (a port is 1..65535)", param, whole));
  }
  return static_cast<uint16_t>(port);
}

// "host[:port]" or "[v6][:port]"; default_port 0 means the port is required.
Result<Endpoint> ParseAuthority(std::string_view param, std::string_view text,
                                uint16_t default_port) {
  std::string_view host;
  std::string_view port;
  bool has_port = false;
  if (!text.empty() && text.front() == '[') {
    size_t close = text.find(']');
    if (close == std::string_view::npos) {
      return InvalidArgument(fmt::format("{} has an unclosed '[' in '{}'", param, text));
    }
    host = text.substr(1, close - 1);
    std::string_view rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') {
        return InvalidArgument(fmt::format("{} has text after ']' in '{}'", param, text));
      }
      port = rest.substr(1);
      has_port = true;
    }
    if (!IsIpv6(host)) {
      return InvalidArgument(fmt::format("{} has no valid IPv6 address in '{}'", param, text));
    }
  } else {
    size_t colon = text.rfind(':');
    host = text.substr(0, colon);
    if (colon != std::string_view::npos) {
      port = text.substr(colon + 1);
      has_port = true;
    }
    if (!IsHostName(host)) {
      return InvalidArgument(fmt::format(
          "{} has no valid host in '{}' (letters, digits, '-', '.', '_')", param, text));
    }
  }
  Endpoint e{Lower(host), default_port};
  if (has_port || default_port == 0) {
    if (!has_port) {
      return InvalidArgument(fmt::format("{} needs a port in '{}' (host:port)", param, text));
    }
    CQ_ASSIGN_OR_RETURN(e.port, ParsePort(param, port, text));
  }
  return e;
}

}  // namespace

Result<CallbackUrl> ParseCallbackUrl(std::string_view url) {
  constexpr std::string_view kParam = "callback.url";
  CallbackUrl out;
  std::string_view rest;
  std::string lower = Lower(url.substr(0, std::min<size_t>(url.size(), 8)));
  if (lower.starts_with("http://")) {
    rest = url.substr(7);
  } else if (lower.starts_with("https://")) {
    out.https = true;
    rest = url.substr(8);
  } else {
    return InvalidArgument(
        fmt::format("callback.url must start with http:// or https://, got '{}'", url));
  }
  for (char c : url) {
    auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7F) {
      return InvalidArgument(
          "callback.url may hold only printable ASCII without spaces (percent-encode the rest)");
    }
  }
  size_t end = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, end);
  if (authority.find('@') != std::string_view::npos) {
    return InvalidArgument("callback.url must not carry user information ('user@host')");
  }
  CQ_ASSIGN_OR_RETURN(out.endpoint, ParseAuthority(kParam, authority, out.https ? 443 : 80));
  // The request target: path and query, the fragment dropped (it never leaves the client).
  std::string_view target = end == std::string_view::npos ? "" : rest.substr(end);
  target = target.substr(0, target.find('#'));
  out.target =
      target.empty() || target.front() != '/' ? "/" + std::string(target) : std::string(target);
  return out;
}

namespace {

Status CheckText(std::string_view param, std::string_view value, bool required) {
  if (value.empty()) {
    if (required) return InvalidArgument(fmt::format("{} is missing", param));
    return Status::Ok();
  }
  if (value.size() > kMaxCallbackTextBytes) {
    return InvalidArgument(fmt::format("{} is {} bytes long; the limit is {} bytes", param,
                                       value.size(), kMaxCallbackTextBytes));
  }
  for (char c : value) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7F) {
      return InvalidArgument(fmt::format("{} contains a control character", param));
    }
  }
  return Status::Ok();
}

// The trimmed, non-empty items of a comma-separated list.
std::vector<std::string_view> SplitList(std::string_view text) {
  std::vector<std::string_view> out;
  while (!text.empty()) {
    size_t comma = text.find(',');
    std::string_view one = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    while (!one.empty() && one.front() == ' ') one.remove_prefix(1);
    while (!one.empty() && one.back() == ' ') one.remove_suffix(1);
    if (!one.empty()) out.push_back(one);
  }
  return out;
}

bool IsToken(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return IsAlpha(c) || IsDigit(c) ||
           std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
  });
}

Status CheckHttp(const Callback& cb) {
  CQ_RETURN_IF_ERROR(CheckText("callback.url", cb.url, true));
  CQ_RETURN_IF_ERROR(ParseCallbackUrl(cb.url).status());
  static constexpr std::string_view kMethods[] = {"GET", "POST", "PUT", "PATCH", "DELETE"};
  if (std::find(std::begin(kMethods), std::end(kMethods), cb.method) == std::end(kMethods)) {
    return InvalidArgument(fmt::format(
        "callback.method must be GET, POST, PUT, PATCH or DELETE for an http callback, got '{}'",
        cb.method));
  }
  if (cb.headers.size() > kMaxCallbackHeaders) {
    return InvalidArgument(fmt::format("callback.headers has {} entries; the limit is {}",
                                       cb.headers.size(), kMaxCallbackHeaders));
  }
  for (const auto& [name, value] : cb.headers) {
    if (!IsToken(name)) {
      return InvalidArgument(
          fmt::format("callback.headers has a name that is not a valid HTTP "
                      "header name: '{}'",
                      name));
    }
    std::string lower = Lower(name);
    if (lower == "host" || lower == "content-length" || lower == "transfer-encoding" ||
        lower == "connection" || lower.starts_with("x-chronoq-")) {
      return InvalidArgument(
          fmt::format("callback.headers may not set '{}' (chronoq sets it itself)", name));
    }
    if (value == kMaskedHeaderValue) {
      return InvalidArgument(fmt::format(
          "callback.headers.{} is '{}', what read answers show in place of a header's value; "
          "send its real value",
          name, kMaskedHeaderValue));
    }
    CQ_RETURN_IF_ERROR(CheckText(fmt::format("callback.headers.{}", name), value, false));
  }
  return Status::Ok();
}

bool IsGrpcName(std::string_view s, bool dots) {
  if (s.empty() || !(IsAlpha(s.front()) || s.front() == '_')) return false;
  return std::all_of(s.begin(), s.end(), [dots](char c) {
    return IsAlpha(c) || IsDigit(c) || c == '_' || (dots && c == '.');
  });
}

Status CheckGrpc(const Callback& cb) {
  CQ_RETURN_IF_ERROR(CheckText("callback.target", cb.target, true));
  CQ_RETURN_IF_ERROR(ParseAuthority("callback.target", cb.target, 0).status());
  CQ_RETURN_IF_ERROR(CheckText("callback.method", cb.method, true));
  std::string_view m = cb.method;
  size_t slash = m.size() > 1 ? m.find('/', 1) : std::string_view::npos;
  if (m.front() != '/' || slash == std::string_view::npos ||
      !IsGrpcName(m.substr(1, slash - 1), true) || !IsGrpcName(m.substr(slash + 1), false)) {
    return InvalidArgument(fmt::format(
        "callback.method must be a gRPC method '/package.Service/Method', got '{}'", cb.method));
  }
  return Status::Ok();
}

Status CheckKafka(const Callback& cb) {
  CQ_RETURN_IF_ERROR(CheckText("callback.brokers", cb.brokers, true));
  CQ_RETURN_IF_ERROR(CheckText("callback.topic", cb.kafka_topic, true));
  CQ_RETURN_IF_ERROR(CheckText("callback.key", cb.key, false));
  if (cb.kafka_topic.size() > 249 ||
      !std::all_of(cb.kafka_topic.begin(), cb.kafka_topic.end(), [](char c) {
        return IsAlpha(c) || IsDigit(c) || c == '.' || c == '_' || c == '-';
      })) {
    return InvalidArgument(fmt::format(
        "callback.topic must be a Kafka topic name (1 to 249 of letters, digits, '.', '_', "
        "'-'), got '{}'",
        cb.kafka_topic));
  }
  std::vector<std::string_view> brokers = SplitList(cb.brokers);
  if (brokers.empty()) return InvalidArgument("callback.brokers is missing");
  if (brokers.size() > 16) {
    return InvalidArgument(
        fmt::format("callback.brokers names {} brokers; the limit is 16", brokers.size()));
  }
  for (std::string_view one : brokers) {
    CQ_RETURN_IF_ERROR(ParseAuthority("callback.brokers", one, 0).status());
  }
  return Status::Ok();
}

// --- binary form: version, then fields in a fixed order; str = varint length + bytes.

void PutVarint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

void PutStr(std::string& out, std::string_view s) {
  PutVarint(out, s.size());
  out.append(s);
}

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  // Canonical encodings only (what PutVarint writes): no overlong form (a last byte of 0 after
  // the first) and nothing beyond 64 bits, so that one callback has one stored form.
  bool Varint(uint64_t& v) {
    v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (in_.empty()) return false;
      auto b = static_cast<uint8_t>(in_.front());
      in_.remove_prefix(1);
      if (shift == 63 && b > 1) return false;
      v |= static_cast<uint64_t>(b & 0x7F) << shift;
      if ((b & 0x80) == 0) return b != 0 || shift == 0;
    }
    return false;
  }
  bool Str(std::string& s) {
    uint64_t n = 0;
    if (!Varint(n) || n > in_.size()) return false;
    s.assign(in_.substr(0, n));
    in_.remove_prefix(n);
    return true;
  }
  bool done() const { return in_.empty(); }

 private:
  std::string_view in_;
};

}  // namespace

std::string_view CallbackTypeName(CallbackType t) {
  switch (t) {
    case CallbackType::kHttp:
      return "http";
    case CallbackType::kGrpc:
      return "grpc";
    case CallbackType::kKafka:
      return "kafka";
  }
  return "?";
}

Result<Endpoint> ParseHostPort(std::string_view param, std::string_view text) {
  return ParseAuthority(param, text, 0);
}

Result<TargetAllowlist> TargetAllowlist::Parse(std::string_view patterns) {
  TargetAllowlist out;
  out.text_ = std::string(patterns);
  for (std::string_view one : SplitList(patterns)) {
    Pattern p;
    if (one == "*") {
      p.host = "*";
    } else {
      bool wildcard = one.starts_with("*.");
      std::string_view probe = wildcard ? one.substr(2) : one;
      // A pattern without a port: parse it with a placeholder port to reuse the host checks.
      bool has_port = probe.starts_with('[') ? probe.find("]:") != std::string_view::npos
                                             : probe.find(':') != std::string_view::npos &&
                                                   probe.find(':') == probe.rfind(':');
      auto e = ParseAuthority("push-allowed-targets", probe, has_port ? 0 : 1);
      if (!e.has_value()) {
        return InvalidArgument(fmt::format(
            "push-allowed-targets has a pattern that is not host, host:port, *.domain or *: "
            "'{}'",
            one));
      }
      p.host = wildcard ? "*." + e->host : e->host;
      p.port = has_port ? e->port : 0;
    }
    out.patterns_.push_back(std::move(p));
  }
  return out;
}

bool TargetAllowlist::Allows(const Endpoint& e) const {
  for (const Pattern& p : patterns_) {
    if (p.port != 0 && p.port != e.port) continue;
    if (p.host == "*" || p.host == e.host) return true;
    if (p.host.starts_with("*.") && e.host.size() > p.host.size() - 1 &&
        e.host.ends_with(std::string_view(p.host).substr(1))) {
      return true;
    }
  }
  return false;
}

std::vector<Endpoint> EndpointsOf(const Callback& cb) {
  std::vector<Endpoint> out;
  switch (cb.type) {
    case CallbackType::kHttp:
      if (auto u = ParseCallbackUrl(cb.url); u.has_value()) out.push_back(u->endpoint);
      break;
    case CallbackType::kGrpc:
      if (auto e = ParseHostPort("callback.target", cb.target); e.has_value()) out.push_back(*e);
      break;
    case CallbackType::kKafka: {
      for (std::string_view one : SplitList(cb.brokers)) {
        if (auto e = ParseHostPort("callback.brokers", one); e.has_value()) out.push_back(*e);
      }
      break;
    }
  }
  return out;
}

Status ValidateCallback(const Callback& cb, const TargetAllowlist& allowed) {
  if (cb.timeout <= Millis(0) || cb.timeout > kMaxCallbackTimeout) {
    return InvalidArgument(fmt::format("callback.timeoutMillis must be 1..{}, got {}",
                                       kMaxCallbackTimeout.count(), cb.timeout.count()));
  }
  if (cb.retry_interval && (*cb.retry_interval < Millis(0) || *cb.retry_interval > kTenYears)) {
    return InvalidArgument(fmt::format("callback.retryIntervalMillis must be 0..{}, got {}",
                                       kTenYears.count(), cb.retry_interval->count()));
  }
  switch (cb.type) {
    case CallbackType::kHttp:
      CQ_RETURN_IF_ERROR(CheckHttp(cb));
      break;
    case CallbackType::kGrpc:
      CQ_RETURN_IF_ERROR(CheckGrpc(cb));
      break;
    case CallbackType::kKafka:
      CQ_RETURN_IF_ERROR(CheckKafka(cb));
      break;
  }
  for (const Endpoint& e : EndpointsOf(cb)) {
    if (allowed.Allows(e)) continue;
    std::string shown = e.host.find(':') != std::string::npos
                            ? fmt::format("[{}]:{}", e.host, e.port)
                            : fmt::format("{}:{}", e.host, e.port);
    if (allowed.empty()) {
      return InvalidArgument(fmt::format(
          "callback target '{}' is not allowed: push-allowed-targets is empty, so push delivery "
          "is off (set it to the hosts chronoq may call)",
          shown));
    }
    return InvalidArgument(
        fmt::format("callback target '{}' is not allowed by push-allowed-targets ('{}')", shown,
                    allowed.text()));
  }
  return Status::Ok();
}

std::string EncodeCallback(const Callback& cb) {
  std::string out;
  out.push_back(static_cast<char>(kCallbackFormat));
  out.push_back(static_cast<char>(cb.type));
  PutVarint(out, static_cast<uint64_t>(cb.timeout.count()));
  PutVarint(out, cb.retry_interval ? static_cast<uint64_t>(cb.retry_interval->count()) + 1 : 0);
  uint8_t flags = (cb.raw_body ? 1 : 0) | (cb.base64 ? 2 : 0);
  out.push_back(static_cast<char>(flags));
  PutStr(out, cb.url);
  PutStr(out, cb.method);
  PutVarint(out, cb.headers.size());
  for (const auto& [k, v] : cb.headers) {
    PutStr(out, k);
    PutStr(out, v);
  }
  PutStr(out, cb.target);
  PutStr(out, cb.brokers);
  PutStr(out, cb.kafka_topic);
  PutStr(out, cb.key);
  return out;
}

Result<Callback> DecodeCallback(std::string_view bytes) {
  auto bad = [] { return Status(Errc::kCorruption, "stored callback is malformed"); };
  if (bytes.size() < 3 || static_cast<uint8_t>(bytes[0]) != kCallbackFormat) return bad();
  Callback cb;
  auto type = static_cast<uint8_t>(bytes[1]);
  if (type > static_cast<uint8_t>(CallbackType::kKafka)) return bad();
  cb.type = static_cast<CallbackType>(type);
  Reader r(bytes.substr(2));
  uint64_t timeout = 0;
  uint64_t retry = 0;
  if (!r.Varint(timeout) || !r.Varint(retry)) return bad();
  if (timeout > static_cast<uint64_t>(kMaxCallbackTimeout.count())) return bad();
  if (retry > static_cast<uint64_t>(kTenYears.count()) + 1) return bad();
  cb.timeout = Millis(static_cast<int64_t>(timeout));
  if (retry != 0) cb.retry_interval = Millis(static_cast<int64_t>(retry - 1));
  uint64_t flag_byte = 0;
  if (!r.Varint(flag_byte) || flag_byte > 3) return bad();
  cb.raw_body = (flag_byte & 1) != 0;
  cb.base64 = (flag_byte & 2) != 0;
  uint64_t n = 0;
  if (!r.Str(cb.url) || !r.Str(cb.method) || !r.Varint(n) || n > kMaxCallbackHeaders) return bad();
  cb.headers.resize(n);
  for (auto& [k, v] : cb.headers) {
    if (!r.Str(k) || !r.Str(v)) return bad();
  }
  if (!r.Str(cb.target) || !r.Str(cb.brokers) || !r.Str(cb.kafka_topic) || !r.Str(cb.key) ||
      !r.done()) {
    return bad();
  }
  return cb;
}

}  // namespace chronoq::core
