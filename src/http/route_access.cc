#include "http/route_access.h"

#include <utility>

#include "http/router.h"

namespace chronoq::http {

std::optional<auth::Operation> UnroutedOperation(std::string_view path) {
  // The dashboard's files (/dashboard/js/app.js...); not its API.
  if (path.starts_with("/dashboard/") && !path.starts_with("/dashboard/api/")) {
    return auth::Operation::kDashboardAssets;
  }
  if (path.starts_with("/chronoq/test/")) return auth::Operation::kTestControl;
  return std::nullopt;
}

bool SplitTokenPrefix(std::string_view target, std::string_view* token, std::string_view* rest) {
  constexpr std::string_view kPrefix = "/t/";
  if (!target.starts_with(kPrefix)) return false;
  std::string_view after = target.substr(kPrefix.size());
  const size_t end = after.find_first_of("/?");
  *token = after.substr(0, end);
  if (end == std::string_view::npos) {
    *rest = "/";
  } else if (after[end] == '?') {
    *rest = "/";  // "/t/<token>?q": the root, its query dropped (no endpoint there)
  } else {
    *rest = after.substr(end);
  }
  return true;
}

auth::Credential TakeCredential(HttpRequest& req) {
  auth::Credential cred = auth::ParseAuthorization(
      req.has_authorization ? std::optional<std::string_view>(req.authorization) : std::nullopt);
  std::string_view prefix_token;
  std::string_view rest;
  if (SplitTokenPrefix(req.target, &prefix_token, &rest)) {
    req.target = rest;
    if (!cred.token && !cred.malformed) cred.token = prefix_token;
  }
  return cred;
}

std::optional<HttpResponse> Admit(const auth::Authenticator& authenticator,
                                  const auth::Credential& cred, std::optional<auth::Operation> op,
                                  HttpRequest& req) {
  const std::string_view path = req.path();
  auth::Decision d = authenticator.Check(cred, op);
  switch (d.verdict) {
    case auth::Verdict::kAllowed:
      req.caller = std::move(d.caller);
      return std::nullopt;
    case auth::Verdict::kUnauthenticated: {
      HttpResponse r = RequestError(401, d.message, path);
      r.headers.emplace_back("WWW-Authenticate", "Bearer");
      return r;
    }
    case auth::Verdict::kForbidden:
      return RequestError(403, d.message, path);
    case auth::Verdict::kRateLimited: {
      HttpResponse r = RequestError(429, d.message, path);
      r.headers.emplace_back("Retry-After", "1");
      return r;
    }
  }
  return std::nullopt;
}

}  // namespace chronoq::http
