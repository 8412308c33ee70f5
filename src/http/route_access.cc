#include "http/route_access.h"

#include <array>
#include <utility>

#include "http/router.h"

namespace chronoq::http {
namespace {

using auth::Operation;

// Every endpoint and its operation (the endpoint walk of tests/integration/auth_test.cc covers
// each one with every role).
constexpr std::array<std::pair<std::string_view, Operation>, 36> kRoutes = {{
    {"/camellia/delayQueue/sendMsg", Operation::kSend},
    {"/camellia/delayQueue/pullMsg", Operation::kPull},
    {"/camellia/delayQueue/longPollingMsg", Operation::kLongPoll},
    {"/camellia/delayQueue/ackMsg", Operation::kAck},
    {"/camellia/delayQueue/deleteMsg", Operation::kDelete},
    {"/camellia/delayQueue/getMsg", Operation::kGet},
    {"/camellia/delayQueue/sendMsgBatch", Operation::kSendBatch},
    {"/camellia/delayQueue/ackMsgBatch", Operation::kAckBatch},
    {"/camellia/delayQueue/updateMsg", Operation::kUpdate},
    {"/camellia/delayQueue/touchMsg", Operation::kTouch},
    {"/camellia/delayQueue/countMsg", Operation::kCount},
    {"/camellia/delayQueue/listMsg", Operation::kList},
    {"/camellia/delayQueue/setTopicConfig", Operation::kWriteTopicConfig},
    {"/camellia/delayQueue/getTopicConfig", Operation::kReadTopicConfig},
    {"/camellia/delayQueue/deleteTopicConfig", Operation::kWriteTopicConfig},
    {"/camellia/delayQueue/pauseTopic", Operation::kWriteTopicConfig},
    {"/camellia/delayQueue/resumeTopic", Operation::kWriteTopicConfig},
    {"/camellia/delayQueue/purgeTopic", Operation::kPurge},
    {"/camellia/delayQueue/redriveMsg", Operation::kRedrive},
    {"/camellia/delayQueue/getMsgHistory", Operation::kHistory},
    {"/camellia/delayQueue/importMsgBatch", Operation::kImport},
    {"/chronoq/admin/backup", Operation::kBackup},
    {"/camellia/delayQueue/getTopicInfo", Operation::kTopicInfo},
    {"/camellia/delayQueue/getTopicInfoList", Operation::kTopicInfo},
    {"/camellia/delayQueue/getMonitorData", Operation::kMonitorData},
    {"/metrics", Operation::kMetrics},
    {"/camellia/health/check", Operation::kHealthCheck},
    {"/camellia/health/status", Operation::kHealthCheck},
    {"/camellia/health/online", Operation::kSetHealth},
    {"/camellia/health/offline", Operation::kSetHealth},
    {"/dashboard/api/topics", Operation::kDashboard},
    {"/dashboard/api/history", Operation::kDashboard},
    {"/chronoq/test/advanceClock", Operation::kTestControl},
    {"/chronoq/test/longPolls", Operation::kTestControl},
    {"/dashboard", Operation::kDashboardAssets},
    {"/dashboard/", Operation::kDashboardAssets},
}};

}  // namespace

std::optional<auth::Operation> RouteOperation(std::string_view path) {
  for (const auto& [p, op] : kRoutes) {
    if (p == path) return op;
  }
  // The dashboard's static files (/dashboard/js/app.js...); its API is listed above.
  if (path.starts_with("/dashboard/") && !path.starts_with("/dashboard/api/")) {
    return Operation::kDashboardAssets;
  }
  if (path.starts_with("/chronoq/test/")) return Operation::kTestControl;
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

std::optional<HttpResponse> Admit(const auth::Authenticator& authenticator, HttpRequest& req) {
  if (!authenticator.enabled()) return std::nullopt;
  auth::Credential cred = auth::ParseAuthorization(
      req.has_authorization ? std::optional<std::string_view>(req.authorization) : std::nullopt);
  std::string_view prefix_token;
  std::string_view rest;
  if (SplitTokenPrefix(req.target, &prefix_token, &rest)) {
    req.target = rest;
    if (!cred.token && !cred.malformed) cred.token = prefix_token;
  }
  const std::string_view path = req.path();
  auth::Decision d = authenticator.Check(cred, RouteOperation(path));
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
