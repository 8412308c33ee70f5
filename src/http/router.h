// Router: exact-path dispatch with per-route methods. Unknown path -> HTTP 404; known path, wrong
// method -> HTTP 405 with an Allow header (API.md section 1). Routes are added before serving and
// never change afterwards, so Dispatch is thread-safe.
//
// Metrics: per route (unknown paths under route="other"), requests by status class, answers
// whose application code (API.md section 2) is a 5xx, and a latency histogram (from dispatch to
// reply; a long poll's includes its wait). Lock-free atomics.
#pragma once

#include <array>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "auth/authenticator.h"
#include "http/http_types.h"
#include "metrics/exposition.h"
#include "metrics/instruments.h"

namespace chronoq::http {

// Handles one request: must call `reply` exactly once, now or later, on any thread.
using Handler = std::function<void(HttpRequest& req, RequestContext& ctx, Reply reply)>;

class Router {
  struct RouteStats;  // below

 public:
  // `op`: the operation the endpoint is (auth/access.h), which decides who may call it when
  // tokens are on; every endpoint names one, so none is ever left without a rule.
  // `methods` empty: any method.
  void Add(std::string path, auth::Operation op, std::vector<std::string> methods, Handler handler);
  void Dispatch(HttpRequest& req, RequestContext& ctx, Reply reply) const;

  // A dispatched request's place in the route metrics, for a caller that counts the answer
  // itself: Count once with the response, before it is sent.
  class Tally {
   public:
    void Count(const HttpResponse& r) const;

   private:
    friend class Router;
    RouteStats* stats_ = nullptr;
    std::chrono::steady_clock::time_point start_{};
  };
  // Dispatch for a caller that counts the answer with the returned Tally (HttpServer): `reply`
  // reaches the handler as it is, without the counting wrapper Dispatch puts around it (a heap
  // allocation and a call per request).
  [[nodiscard]] Tally DispatchTallied(HttpRequest& req, RequestContext& ctx, Reply reply) const;

  // Authentication (docs/security.md, route_access.h): with an enabled authenticator, each
  // request is admitted for its route's operation (401/403/429 otherwise, counted under its
  // route) and carries its caller. Null (the default) or disabled: every request is anonymous,
  // as without tokens.
  // REQUIRES: set before serving; outlives the router.
  void SetAuthenticator(const auth::Authenticator* authenticator) { auth_ = authenticator; }

  // cq_http_requests_total, cq_http_app_errors_total and cq_http_request_duration_seconds.
  void RenderMetrics(metrics::TextWriter& w) const;

 private:
  // Counts of one route, by status class 2xx, 4xx, 5xx (anything below 400 counts as 2xx).
  struct RouteStats {
    explicit RouteStats(std::string r) : route(std::move(r)), latency(metrics::LatencyBuckets()) {}
    std::string route;
    std::array<metrics::Counter, 3> by_class;
    metrics::Counter app_errors;  // HTTP 200 answers with "code":5xx (server-side failures)
    metrics::DurationHistogram latency;
  };
  struct Route {
    auth::Operation op;
    std::vector<std::string> methods;
    Handler handler;
    std::unique_ptr<RouteStats> stats;
  };
  // Counts one answer of the route, `start` being when its request was dispatched.
  static void CountAnswer(RouteStats* stats, std::chrono::steady_clock::time_point start,
                          const HttpResponse& r);
  static Reply Counted(RouteStats* stats, Reply reply);
  // Dispatch's work: with `tally`, sets it and leaves `reply` as it is; without, counts through
  // Counted.
  void Run(HttpRequest& req, RequestContext& ctx, Reply reply, Tally* tally) const;
  // Transparent hashing: lookups by string_view, without a copy of the path.
  struct PathHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, Route, PathHash, std::equal_to<>> routes_;
  std::unique_ptr<RouteStats> unmatched_ = std::make_unique<RouteStats>("other");
  const auth::Authenticator* auth_ = nullptr;
};

// An HTTP error response with the standard five-field body.
HttpResponse RequestError(int http_status, std::string_view msg, std::string_view path);

}  // namespace chronoq::http
