// Callback: where chronoq pushes a message itself at its trigger time instead of handing it to
// pullers (API-EXTENSIONS.md section 5, docs/push.md). A message carries its own, or its topic's
// configuration does. Three kinds: an HTTP(S) request, a unary gRPC call, a Kafka record.
//
// This header holds the value type, its checks (the code-400 sentences every protocol shares),
// the allowlist of targets (`push-allowed-targets`) and the compact binary form both stores keep
// (the embedded store inside the record, Redis in the message hash). Parsing the JSON object a
// client sends is the protocol's (http/callback_json.cc); the rules are here.
//
// Plain value types and pure functions.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"
#include "base/status.h"
#include "base/time.h"

namespace chronoq::core {

enum class CallbackType : uint8_t { kHttp = 0, kGrpc = 1, kKafka = 2 };
std::string_view CallbackTypeName(CallbackType t);  // "http", "grpc", "kafka"

inline constexpr Millis kDefaultCallbackTimeout = Millis(5'000);
inline constexpr Millis kMaxCallbackTimeout = Millis(600'000);
inline constexpr size_t kMaxCallbackHeaders = 32;
inline constexpr size_t kMaxCallbackTextBytes = 2048;  // a url, a header value, a broker list...
// What read answers show in place of each callback header value (service::MaskCallbackHeaders);
// refused as a value, so a callback read back and sent again cannot store the mask.
inline constexpr std::string_view kMaskedHeaderValue = "***";

struct Callback {
  CallbackType type = CallbackType::kHttp;
  Millis timeout = kDefaultCallbackTimeout;  // the whole call: connect, send, answer
  // Overrides the topic's retryIntervalMillis for this message's failed pushes.
  std::optional<Millis> retry_interval{};

  // http: `url` (http:// or https://), `method`, extra request `headers`; the body is the
  // message object as JSON, or the raw payload when `raw_body`.
  std::string url;
  std::string method = "POST";
  std::vector<std::pair<std::string, std::string>> headers;
  bool raw_body = false;

  // grpc: `target` "host:port", `method` "/pkg.Service/Method" (shared with http's method
  // field); the request bytes are the payload, base64-decoded when `base64`.
  std::string target;
  bool base64 = false;

  // kafka: `brokers` "h1:9092,h2:9092", `kafka_topic`, record `key` (empty: the msgId).
  std::string brokers;
  std::string kafka_topic;
  std::string key;

  bool operator==(const Callback&) const = default;
};

// A message's callback as its record keeps it: one pointer (most records have none, and a record
// is copied into indexes and answers), the value shared and never changed once set. Reads like
// std::optional<Callback>; compares by value.
class CallbackRef {
 public:
  CallbackRef() = default;
  CallbackRef(std::nullopt_t) {}  // NOLINT(google-explicit-constructor): reads like optional
  CallbackRef(Callback cb)        // NOLINT(google-explicit-constructor)
      : p_(std::make_shared<const Callback>(std::move(cb))) {}
  CallbackRef(const std::optional<Callback>& cb) {  // NOLINT(google-explicit-constructor)
    if (cb) p_ = std::make_shared<const Callback>(*cb);
  }

  bool has_value() const { return p_ != nullptr; }
  explicit operator bool() const { return p_ != nullptr; }
  const Callback& operator*() const { return *p_; }
  const Callback* operator->() const { return p_.get(); }
  void reset() { p_.reset(); }
  std::optional<Callback> ToOptional() const {
    return p_ ? std::optional<Callback>(*p_) : std::nullopt;
  }

  friend bool operator==(const CallbackRef& a, const CallbackRef& b) {
    return a.p_ == b.p_ || (a.p_ && b.p_ && *a.p_ == *b.p_);
  }
  friend bool operator==(const CallbackRef& a, std::nullopt_t) { return !a.p_; }
  friend bool operator==(const CallbackRef& a, const Callback& b) { return a.p_ && *a.p_ == b; }
  friend bool operator==(const CallbackRef& a, const std::optional<Callback>& b) {
    return b ? a == *b : a == std::nullopt;
  }

 private:
  std::shared_ptr<const Callback> p_;
};

// Host and port of a target, as the allowlist sees it (host lower-cased, IPv6 without brackets).
struct Endpoint {
  std::string host;
  uint16_t port = 0;
  bool operator==(const Endpoint&) const = default;
};

// Splits "host:port" or "[v6]:port". Errors name `param`.
Result<Endpoint> ParseHostPort(std::string_view param, std::string_view text);

// An http(s) callback URL as a client uses it: "http[s]://host[:port][/path][?query][#frag]",
// printable ASCII, no user information. Errors are sentences naming callback.url.
struct CallbackUrl {
  bool https = false;
  Endpoint endpoint;   // the scheme's port (80, 443) when the URL has none
  std::string target;  // origin form: "/path?query" ("/" when absent); the fragment dropped
};
Result<CallbackUrl> ParseCallbackUrl(std::string_view url);

// `push-allowed-targets`: comma-separated patterns, each `host`, `host:port`, `*.domain`,
// `*.domain:port` or `*` (every target). Empty: no target is allowed (push delivery is off until
// an operator names the targets it may reach).
class TargetAllowlist {
 public:
  TargetAllowlist() = default;
  // Errors: kInvalidArgument naming the pattern that is not valid.
  static Result<TargetAllowlist> Parse(std::string_view patterns);

  bool Allows(const Endpoint& e) const;
  bool empty() const { return patterns_.empty(); }
  const std::string& text() const { return text_; }

 private:
  struct Pattern {
    std::string host;   // lower-case; "*" every host; "*.x" a suffix match
    uint16_t port = 0;  // 0: any port
  };
  std::vector<Pattern> patterns_;
  std::string text_;
};

// The endpoints a callback reaches (one for http and grpc, every broker for kafka).
// REQUIRES: `cb` passed ValidateCallback's shape checks.
std::vector<Endpoint> EndpointsOf(const Callback& cb);

// Checks a callback's fields (sentences name "callback.<field>"), then that every endpoint it
// reaches is allowed ("callback target '10.0.0.1:80' is not allowed by push-allowed-targets
// ('127.0.0.1')"). kInvalidArgument on the first problem.
Status ValidateCallback(const Callback& cb, const TargetAllowlist& allowed);

// The binary form kept by the stores (version byte first). Decode refuses what Encode never
// writes (kCorruption).
std::string EncodeCallback(const Callback& cb);
Result<Callback> DecodeCallback(std::string_view bytes);

}  // namespace chronoq::core
