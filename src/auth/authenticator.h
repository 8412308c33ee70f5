// Authenticator: the server's tokens (auth-tokens-file, tokens.h) and the one decision every
// protocol asks for each request: who is this (the presented token), and may they do this
// operation (access.h)? HTTP (Authorization header or /t/<token> prefix), gRPC (authorization
// metadata) and the dashboard API share it, and answer its verdict in their own terms (401/403,
// UNAUTHENTICATED/PERMISSION_DENIED) with its sentence.
//
// Without a tokens file the authenticator is disabled: every request is the anonymous caller,
// allowed everything, exactly as chronoq was before tokens.
//
// Reload (SIGHUP): the file is read again; a file with an error keeps the old tokens, and the
// error is logged (it names the line and why, never a token).
//
// Failures are counted by reason (cq_auth_failures_total) and logged at most once a second
// (with how many were not logged). No sentence, log line or metric holds a token.
//
// Thread-safety: all methods are thread-safe; Check never blocks on a reload (the table is
// swapped under a short lock).
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "auth/access.h"
#include "auth/tokens.h"
#include "base/clock.h"
#include "base/mutex.h"
#include "base/status.h"
#include "metrics/exposition.h"
#include "metrics/instruments.h"

namespace chronoq::auth {

enum class Verdict : uint8_t { kAllowed, kUnauthenticated, kForbidden, kRateLimited };

// Why a request was refused (the reason label of cq_auth_failures_total).
enum class Failure : uint8_t { kMissing, kMalformed, kUnknown, kForbidden, kRateLimited };
inline constexpr size_t kFailureCount = 5;

struct Decision {
  Verdict verdict = Verdict::kAllowed;
  Caller caller;        // when allowed
  std::string message;  // when refused: the sentence to answer (no token in it)
};

// What the request presented.
struct Credential {
  // The token, when one was given (the Bearer token of the header/metadata, or the path prefix).
  std::optional<std::string_view> token;
  // An authorization header/metadata was there but is not "Bearer <token>".
  bool malformed = false;
};

// "Bearer <token>" (scheme case-insensitive, spaces around the token allowed) -> the token; an
// absent header (nullopt) -> no token; anything else -> malformed.
Credential ParseAuthorization(std::optional<std::string_view> header);

class Authenticator {
 public:
  // Disabled: no tokens. `clock` (the rate limits' time) must outlive it.
  explicit Authenticator(const base::Clock* clock = base::SystemClock::Get()) : clock_(clock) {}
  Authenticator(const Authenticator&) = delete;
  Authenticator& operator=(const Authenticator&) = delete;

  // Reads the tokens file (at start): kInvalidArgument "<path> line N: why" or kIOError when it
  // cannot be read; the authenticator stays as it was. On success it is enabled.
  Status Load(const std::string& path) CQ_EXCLUDES(mu_);
  // Reads the file given to Load again (SIGHUP). On an error keeps the tokens it had, logs why
  // and returns it. Does nothing (OK) when disabled.
  Status Reload() CQ_EXCLUDES(mu_);

  bool enabled() const { return enabled_.load(std::memory_order_acquire); }
  size_t token_count() const CQ_EXCLUDES(mu_);

  // The decision for `op` with what the request presented. An Open operation is always allowed
  // (anonymously). nullopt: any valid token will do (an unknown endpoint: 401 before its 404).
  Decision Check(const Credential& cred, std::optional<Operation> op) const CQ_EXCLUDES(mu_);

  // cq_auth_failures_total{reason}, cq_auth_tokens, cq_auth_reloads_total{result}.
  void RenderMetrics(metrics::TextWriter& w) const CQ_EXCLUDES(mu_);

  uint64_t failures(Failure f) const { return failures_[static_cast<size_t>(f)].value(); }

 private:
  Decision Refuse(Failure f, Verdict v, std::string message, std::optional<Operation> op) const
      CQ_EXCLUDES(log_mu_);

  // A token's rate limit (tokens.h `rate=`): a token bucket holding at most max(1, rate).
  struct Bucket {
    double level = 0;
    TimePoint at{};
  };
  // True when a request of the entry may go now (takes one from its bucket).
  bool Admit(const TokenTable::Entry& e) const CQ_EXCLUDES(buckets_mu_);

  const base::Clock* const clock_;
  mutable base::Mutex buckets_mu_;
  // By token digest, so that a reload keeps a token's bucket.
  mutable std::map<Digest, Bucket> buckets_ CQ_GUARDED_BY(buckets_mu_);
  mutable base::Mutex mu_;
  std::string path_ CQ_GUARDED_BY(mu_);
  std::shared_ptr<const TokenTable> table_ CQ_GUARDED_BY(mu_);
  std::atomic<bool> enabled_{false};

  mutable std::array<metrics::Counter, kFailureCount> failures_;
  metrics::Counter reloads_ok_;
  metrics::Counter reloads_failed_;
  // The rate-limited log of failures.
  mutable base::Mutex log_mu_;
  mutable std::chrono::steady_clock::time_point last_log_ CQ_GUARDED_BY(log_mu_){};
  mutable uint64_t unlogged_ CQ_GUARDED_BY(log_mu_) = 0;
};

}  // namespace chronoq::auth
