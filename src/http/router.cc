#include "http/router.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "http/codec.h"
#include "http/route_access.h"

namespace chronoq::http {

HttpResponse RequestError(int http_status, std::string_view msg, std::string_view path) {
  HttpResponse r;
  r.status = http_status;
  r.body = EncodeRequestError(http_status, msg, path);
  return r;
}

void Router::Add(std::string path, auth::Operation op, std::vector<std::string> methods,
                 Handler handler) {
  auto stats = std::make_unique<RouteStats>(path);
  routes_.insert_or_assign(std::move(path),
                           Route{op, std::move(methods), std::move(handler), std::move(stats)});
}

void Router::CountAnswer(RouteStats* stats, std::chrono::steady_clock::time_point start,
                         const HttpResponse& r) {
  stats->latency.ObserveNanos(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
          .count());
  const int cls = r.status >= 500 ? 2 : r.status >= 400 ? 1 : 0;
  stats->by_class[cls].Add();
  // Every JSON answer starts with its code (codec.h).
  if (r.status == 200 && std::string_view(r.body).starts_with("{\"code\":5")) {
    stats->app_errors.Add();
  }
}

void Router::Tally::Count(const HttpResponse& r) const { CountAnswer(stats_, start_, r); }

Reply Router::Counted(RouteStats* stats, Reply reply) {
  return [stats, start = std::chrono::steady_clock::now(),
          reply = std::move(reply)](HttpResponse r) mutable {
    CountAnswer(stats, start, r);
    reply(std::move(r));
  };
}

void Router::RenderMetrics(metrics::TextWriter& w) const {
  std::vector<const RouteStats*> all;
  for (const auto& [path, route] : routes_) all.push_back(route.stats.get());
  std::sort(all.begin(), all.end(),
            [](const RouteStats* a, const RouteStats* b) { return a->route < b->route; });
  all.push_back(unmatched_.get());
  using metrics::MetricType;
  w.Family("cq_http_requests_total",
           "HTTP requests answered, per route (unknown paths: route=\"other\") and status class",
           MetricType::kCounter);
  static constexpr std::array<std::string_view, 3> kClasses = {"2xx", "4xx", "5xx"};
  for (const RouteStats* s : all) {
    for (size_t c = 0; c < kClasses.size(); ++c) {
      w.Sample("cq_http_requests_total", {{"route", s->route}, {"class", kClasses[c]}},
               static_cast<double>(s->by_class[c].value()));
    }
  }
  w.Family("cq_http_app_errors_total",
           "HTTP 200 answers whose code is 5xx: a server-side failure such as the storage failing",
           MetricType::kCounter);
  for (const RouteStats* s : all) {
    w.Sample("cq_http_app_errors_total", {{"route", s->route}},
             static_cast<double>(s->app_errors.value()));
  }
  w.Family("cq_http_request_duration_seconds",
           "Time from receiving a request to answering it, per route (long polls include their "
           "wait)",
           MetricType::kHistogram);
  for (const RouteStats* s : all) {
    const metrics::Label labels[] = {{"route", s->route}};
    w.Histogram("cq_http_request_duration_seconds", labels, s->latency.Read());
  }
}

void Router::Dispatch(HttpRequest& req, RequestContext& ctx, Reply reply) const {
  Run(req, ctx, std::move(reply), nullptr);
}

Router::Tally Router::DispatchTallied(HttpRequest& req, RequestContext& ctx, Reply reply) const {
  Tally tally;
  Run(req, ctx, std::move(reply), &tally);
  return tally;
}

void Router::Run(HttpRequest& req, RequestContext& ctx, Reply reply, Tally* tally) const {
  const bool check = auth_ != nullptr && auth_->enabled();
  std::optional<auth::Credential> cred;
  if (check) cred = TakeCredential(req);  // strips a /t/<token> prefix
  std::string_view path = req.path();
  auto it = routes_.find(path);
  RouteStats* stats = it == routes_.end() ? unmatched_.get() : it->second.stats.get();
  if (tally != nullptr) {
    tally->stats_ = stats;
    tally->start_ = std::chrono::steady_clock::now();
  } else {
    reply = Counted(stats, std::move(reply));
  }
  if (check) {
    const std::optional<auth::Operation> op =
        it == routes_.end() ? UnroutedOperation(path) : it->second.op;
    if (std::optional<HttpResponse> refused = Admit(*auth_, *cred, op, req)) {
      reply(std::move(*refused));
      return;
    }
  }
  if (it == routes_.end()) {
    reply(RequestError(404, fmt::format("no such endpoint: {}", path), path));
    return;
  }
  const Route& route = it->second;
  if (!route.methods.empty() &&
      std::find(route.methods.begin(), route.methods.end(), req.method) == route.methods.end()) {
    std::string allow = fmt::format("{}", fmt::join(route.methods, ", "));
    HttpResponse r = RequestError(
        405, fmt::format("method {} is not allowed for {}; use {}", req.method, path, allow), path);
    r.headers.emplace_back("Allow", allow);
    reply(std::move(r));
    return;
  }
  route.handler(req, ctx, std::move(reply));
}

}  // namespace chronoq::http
