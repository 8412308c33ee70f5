#include "auth/authenticator.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "base/log.h"

namespace chronoq::auth {
namespace {

constexpr const char* kLog = "cq.auth";
constexpr std::array<std::string_view, kFailureCount> kFailureNames = {
    "missing", "malformed", "unknown", "forbidden", "rate_limited"};

bool IEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i];
    char y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

Result<TokenTable> ReadTokens(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return IOError(fmt::format("cannot read auth-tokens-file {}", path));
  std::ostringstream text;
  text << in.rdbuf();
  return TokenTable::Parse(text.str(), fmt::format("auth-tokens-file {}", path));
}

}  // namespace

Credential ParseAuthorization(std::optional<std::string_view> header) {
  Credential c;
  if (!header) return c;
  std::string_view h = Trim(*header);
  constexpr std::string_view kScheme = "bearer";
  if (h.size() <= kScheme.size() || !IEquals(h.substr(0, kScheme.size()), kScheme) ||
      (h[kScheme.size()] != ' ' && h[kScheme.size()] != '\t')) {
    c.malformed = true;
    return c;
  }
  std::string_view token = Trim(h.substr(kScheme.size()));
  if (token.empty() || token.find_first_of(" \t") != std::string_view::npos) {
    c.malformed = true;
    return c;
  }
  c.token = token;
  return c;
}

Status Authenticator::Load(const std::string& path) {
  Result<TokenTable> t = ReadTokens(path);
  if (!t.has_value()) return t.error();
  base::MutexLock lock(mu_);
  path_ = path;
  table_ = std::make_shared<const TokenTable>(std::move(*t));
  enabled_.store(true, std::memory_order_release);
  return Status::Ok();
}

Status Authenticator::Reload() {
  std::string path;
  {
    base::MutexLock lock(mu_);
    if (!enabled()) return Status::Ok();
    path = path_;
  }
  Result<TokenTable> t = ReadTokens(path);
  if (!t.has_value()) {
    reloads_failed_.Add();
    CQ_LOG_ERROR(kLog, "reload of the tokens failed; the previous tokens stay in force: {}",
                 t.error().message());
    return t.error();
  }
  const size_t n = t->size();
  {
    base::MutexLock lock(mu_);
    table_ = std::make_shared<const TokenTable>(std::move(*t));
  }
  reloads_ok_.Add();
  CQ_LOG_INFO(kLog, "reloaded auth-tokens-file {}: {} tokens", path, n);
  return Status::Ok();
}

size_t Authenticator::token_count() const {
  base::MutexLock lock(mu_);
  return table_ ? table_->size() : 0;
}

Decision Authenticator::Refuse(Failure f, Verdict v, std::string message,
                               std::optional<Operation> op) const {
  failures_[static_cast<size_t>(f)].Add();
  const auto now = std::chrono::steady_clock::now();
  uint64_t skipped = 0;
  {
    base::MutexLock lock(log_mu_);
    if (now - last_log_ < std::chrono::seconds(1)) {
      ++unlogged_;
      return Decision{v, Caller{}, std::move(message)};
    }
    last_log_ = now;
    skipped = unlogged_;
    unlogged_ = 0;
  }
  CQ_LOG_WARN(kLog, "refused a request to {} ({}){}",
              op ? OperationName(*op) : std::string_view("an unknown endpoint"),
              kFailureNames[static_cast<size_t>(f)],
              skipped == 0 ? std::string()
                           : fmt::format("; {} more refusals since the last line", skipped));
  return Decision{v, Caller{}, std::move(message)};
}

Decision Authenticator::Check(const Credential& cred, std::optional<Operation> op) const {
  if (!enabled() || (op && Open(*op))) return Decision{};
  if (cred.malformed) {
    return Refuse(Failure::kMalformed, Verdict::kUnauthenticated,
                  "the authorization is not 'Bearer <token>'", op);
  }
  if (!cred.token) {
    return Refuse(Failure::kMissing, Verdict::kUnauthenticated,
                  "authentication required: give a token as 'Authorization: Bearer <token>'", op);
  }
  std::shared_ptr<const TokenTable> table;
  {
    base::MutexLock lock(mu_);
    table = table_;
  }
  const TokenTable::Entry* entry = table->Lookup(*cred.token);
  std::optional<Caller> caller;
  if (entry != nullptr) caller = entry->caller;
  if (!caller) {
    return Refuse(Failure::kUnknown, Verdict::kUnauthenticated, "the token is not valid", op);
  }
  if (op && !Allows(*caller, *op)) {
    const std::string_view article = caller->role == Role::kAdmin ? "an" : "a";
    std::string who = caller->ns.empty()
                          ? fmt::format("{} {} token", article, RoleName(caller->role))
                          : fmt::format("{} {} token of namespace '{}'", article,
                                        RoleName(caller->role), caller->ns);
    return Refuse(
        Failure::kForbidden, Verdict::kForbidden,
        fmt::format("{} may not {}: that needs {}", who, OperationName(*op), RolesAllowed(*op)),
        op);
  }
  if (entry->rate > 0 && !Admit(*entry)) {
    return Refuse(Failure::kRateLimited, Verdict::kRateLimited,
                  fmt::format("the token's rate limit ({} requests per second) is reached; retry "
                              "later",
                              entry->rate),
                  op);
  }
  return Decision{Verdict::kAllowed, std::move(*caller), {}};
}

bool Authenticator::Admit(const TokenTable::Entry& e) const {
  const double cap = std::max(1.0, e.rate);
  const TimePoint now = clock_->Now();
  base::MutexLock lock(buckets_mu_);
  auto [it, fresh] = buckets_.try_emplace(e.digest, Bucket{cap, now});
  Bucket& b = it->second;
  if (!fresh && now > b.at) {
    b.level = std::min(cap, b.level + e.rate * static_cast<double>((now - b.at).count()) / 1000.0);
  }
  b.at = std::max(b.at, now);
  if (b.level < 1.0) return false;
  b.level -= 1.0;
  return true;
}

void Authenticator::RenderMetrics(metrics::TextWriter& w) const {
  using metrics::MetricType;
  w.Family("cq_auth_failures_total",
           "Requests refused by authentication (missing, malformed or unknown token: 401 / "
           "UNAUTHENTICATED), authorization (forbidden: 403 / PERMISSION_DENIED) or the token's "
           "rate limit (rate_limited: 429 / RESOURCE_EXHAUSTED)",
           MetricType::kCounter);
  for (size_t i = 0; i < kFailureCount; ++i) {
    w.Sample("cq_auth_failures_total", {{"reason", kFailureNames[i]}},
             static_cast<double>(failures_[i].value()));
  }
  w.Family("cq_auth_tokens", "Tokens in force (auth-tokens-file); 0 without authentication",
           MetricType::kGauge);
  w.Sample("cq_auth_tokens", {}, static_cast<double>(token_count()));
  w.Family("cq_auth_reloads_total", "Reloads of auth-tokens-file (SIGHUP), by result",
           MetricType::kCounter);
  w.Sample("cq_auth_reloads_total", {{"result", "ok"}}, static_cast<double>(reloads_ok_.value()));
  w.Sample("cq_auth_reloads_total", {{"result", "error"}},
           static_cast<double>(reloads_failed_.value()));
}

}  // namespace chronoq::auth
