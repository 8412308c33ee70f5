// The dashboard's routes (dashboard.h, docs/dashboard.md): its compiled-in files, and the two
// read-only endpoints it polls. Actions are not here: the dashboard calls the public API.
//
// Namespaces (docs/security.md): the two endpoints answer what the caller's namespace holds. An
// admin of namespace N sees N's topics under its client names (as N's clients name them in the
// public API), their series, and no node totals (they span every namespace). An admin of `*`
// (or anyone, without tokens) sees every namespace's topics, another namespace's as `ns/topic`
// with a "namespace" member (core::DisplayTopic, as /metrics shows them: names the public API
// does not take from this caller), and the node's totals.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "core/scope.h"
#include "core/validation.h"
#include "http/dashboard.h"
#include "http/dashboard_assets.h"
#include "http/handlers.h"
#include "http/json_writer.h"
#include "http/params.h"

namespace chronoq::http {
namespace {

// The page may load only its own files and talk only to this server: even if a value slipped
// into the DOM as markup, no script of it would run (docs/dashboard.md, "Security").
constexpr std::string_view kPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

constexpr int64_t kDefaultPage = 25;
constexpr int64_t kMaxPage = 100;
constexpr size_t kSparkPoints = 60;  // one per minute of the hour

// If-None-Match holds `etag` (a list, or *)? Weak comparison, as RFC 9110 section 13.1.2 asks.
bool Matches(std::string_view header, std::string_view etag) {
  if (header == "*") return true;
  size_t pos = 0;
  while (pos < header.size()) {
    size_t comma = header.find(',', pos);
    std::string_view item =
        header.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
    while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
    while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
    if (item.starts_with("W/")) item.remove_prefix(2);
    if (item == etag) return true;
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return false;
}

HttpResponse AssetResponse(const DashboardAsset& a, const HttpRequest& req) {
  HttpResponse r;
  r.content_type = a.content_type;
  r.headers.emplace_back("ETag", std::string(a.etag));
  // Always revalidated (a new binary may serve new files); the ETag makes that a 304.
  r.headers.emplace_back("Cache-Control", "no-cache");
  r.headers.emplace_back("X-Content-Type-Options", "nosniff");
  if (a.content_type.starts_with("text/html")) {
    r.headers.emplace_back("Content-Security-Policy", std::string(kPolicy));
    r.headers.emplace_back("Referrer-Policy", "no-referrer");
  }
  if (!req.if_none_match.empty() && Matches(req.if_none_match, a.etag)) {
    r.status = 304;
    return r;
  }
  r.body = std::string(a.body);
  return r;
}

HttpResponse ApiResponse(std::string body) {
  HttpResponse r = JsonResponse(std::move(body));
  r.headers.emplace_back("Cache-Control", "no-store");
  return r;
}

void WriteRate(JsonWriter& w, std::string_view key, double v) {
  w.Key(key);
  if (std::isnan(v)) {
    w.Null();
  } else {
    w.Double(std::round(v * 1000) / 1000);
  }
}

// ASCII case-insensitive substring search (topic names are mostly ASCII; other bytes must match).
bool ContainsFolded(std::string_view hay, std::string_view needle) {
  if (needle.empty()) return true;
  auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  auto it = std::search(hay.begin(), hay.end(), needle.begin(), needle.end(),
                        [&](char a, char b) { return lower(a) == lower(b); });
  return it != hay.end();
}

// The namespace whose topics the request's caller sees ("": every namespace: an admin of `*`,
// or no tokens).
std::string ViewerNamespace(const HttpRequest& req) {
  return req.caller.anonymous ? std::string() : req.caller.ns;
}

// `t` as a row for a viewer of namespace `ns`: its name there, or false when the viewer does not
// see it.
bool Visible(std::string_view ns, core::TopicInfo& t, TopicRow& row) {
  if (!ns.empty()) {
    std::optional<std::string_view> client = core::ClientTopic(ns, t.topic);
    if (!client) return false;
    row.name = std::string(*client);
  } else {
    row.name = core::DisplayTopic(t.topic);
    std::string_view topic_ns;
    std::string_view client;
    if (core::SplitScopedTopic(t.topic, &topic_ns, &client)) row.ns = std::string(topic_ns);
  }
  row.topic = std::move(t.topic);
  row.waiting = t.waiting;
  row.ready = t.ready;
  row.consuming = t.consuming;
  return true;
}

// The overview's sort keys: name ascending, the others largest first (unknown rates last).
double SortValue(const TopicRow& r, std::string_view key) {
  if (key == "waiting") return static_cast<double>(r.waiting);
  if (key == "ready") return static_cast<double>(r.ready);
  if (key == "consuming") return static_cast<double>(r.consuming);
  double v = key == "sends"         ? r.sends
             : key == "deliveries"  ? r.deliveries
             : key == "deadLetters" ? static_cast<double>(r.dead_letters_total)
                                    : 0;
  return std::isnan(v) ? -1 : v;
}

constexpr std::string_view kSortKeys[] = {"topic", "waiting",    "ready",      "consuming",
                                          "sends", "deliveries", "deadLetters"};

// GET /dashboard/api/topics?q=&offset=&limit=&sort=&deadLetters=: one page of the topics, read
// from the backend now (as getTopicInfoList), with their last rates from the history.
void Topics(Dashboard* d, HttpRequest& req, Reply reply) {
  std::optional<Params> params = ParseParams(req, reply);
  if (!params) return;
  ParamReader r(*params);
  std::string q = r.String("q", false).value_or("");
  int64_t offset = r.Long("offset", false).value_or(0);
  int64_t limit = r.Long("limit", false).value_or(kDefaultPage);
  std::string sort = r.String("sort", false).value_or("topic");
  bool dead_only = r.Bool("deadLetters", false).value_or(false);
  if (ReaderFailed(r, req, reply)) return;
  if (offset < 0)
    return reply(RequestError(400, "parameter 'offset' must not be negative", req.path()));
  if (limit < 1 || limit > kMaxPage) {
    return reply(RequestError(
        400, fmt::format("parameter 'limit' must be between 1 and {}, got {}", kMaxPage, limit),
        req.path()));
  }
  if (std::find(std::begin(kSortKeys), std::end(kSortKeys), sort) == std::end(kSortKeys)) {
    return reply(RequestError(400,
                              "parameter 'sort' must be one of topic, waiting, ready, consuming, "
                              "sends, deliveries, deadLetters",
                              req.path()));
  }
  d->service()->ListTopics([d, ns = ViewerNamespace(req), q = std::move(q), offset, limit,
                            sort = std::move(sort), dead_only, reply = std::move(reply)](
                               Result<std::vector<core::TopicInfo>> res) mutable {
    if (!res.has_value()) {
      JsonWriter w;
      w.BeginObject().Num("code", 500).Str("msg", res.error().message()).EndObject();
      return reply(ApiResponse(w.Take()));
    }
    int64_t sum[3] = {0, 0, 0};
    int64_t visible = 0;
    std::vector<TopicRow> rows;
    for (core::TopicInfo& t : *res) {
      TopicRow row;
      if (!Visible(ns, t, row)) continue;
      ++visible;
      sum[0] += row.waiting;
      sum[1] += row.ready;
      sum[2] += row.consuming;
      if (ContainsFolded(row.name, q)) rows.push_back(std::move(row));
    }
    d->history().Annotate(rows);
    if (dead_only) {
      std::erase_if(rows, [](const TopicRow& row) { return row.dead_letters_total <= 0; });
    }
    auto by_name = [](const TopicRow& a, const TopicRow& b) { return a.name < b.name; };
    const size_t end = std::min(rows.size(), static_cast<size_t>(offset + limit));
    const size_t begin = std::min(rows.size(), static_cast<size_t>(offset));
    auto order = [&](const TopicRow& a, const TopicRow& b) {
      if (sort == "topic") return by_name(a, b);
      const double va = SortValue(a, sort), vb = SortValue(b, sort);
      return va != vb ? va > vb : by_name(a, b);
    };
    std::partial_sort(rows.begin(), rows.begin() + static_cast<ptrdiff_t>(end), rows.end(), order);

    JsonWriter w;
    w.BeginObject().Num("code", 200).Str("msg", "success");
    w.Num("topicCount", visible);
    w.Num("total", static_cast<int64_t>(rows.size()));
    w.Num("offset", offset).Num("limit", limit);
    w.Key("sum").BeginObject().Num("waiting", sum[0]).Num("ready", sum[1]).Num("consuming", sum[2]);
    w.EndObject();
    w.Key("topics").BeginArray();
    for (size_t i = begin; i < end; ++i) {
      const TopicRow& row = rows[i];
      w.BeginObject().Str("topic", row.name);
      if (!row.ns.empty()) w.Str("namespace", row.ns);
      w.Num("waiting", row.waiting).Num("ready", row.ready).Num("consuming", row.consuming);
      WriteRate(w, "sends", row.sends);
      WriteRate(w, "deliveries", row.deliveries);
      WriteRate(w, "deadLetters", row.dead_letters);
      w.Key("deadLettersTotal");
      if (row.dead_letters_total < 0) {
        w.Null();
      } else {
        w.Int(row.dead_letters_total);
      }
      w.Key("tracked").Bool(row.tracked);
      w.Key("activity");
      if (!row.tracked) {
        w.Null();
      } else {
        w.BeginArray();
        for (double v : d->history().Activity(row.topic, kSparkPoints)) {
          if (std::isnan(v)) {
            w.Null();
          } else {
            w.Double(std::round(v * 1000) / 1000);
          }
        }
        w.EndArray();
      }
      w.EndObject();
    }
    w.EndArray().EndObject();
    reply(ApiResponse(w.Take()));
  });
}

// GET /dashboard/api/history?topic=&series=: the node's online state and time, the caller's
// namespace ("*": every one), and (unless series=false) the charts' series
// (DashboardHistory::WriteHistory): the topic's (named as the caller names it in the public API)
// and, for a caller of `*`, the node's totals. Asking for a topic's series gives it one from the
// next sample on.
void History(Dashboard* d, HttpRequest& req, Reply reply) {
  std::optional<Params> params = ParseParams(req, reply);
  if (!params) return;
  ParamReader r(*params);
  std::string topic = r.String("topic", false).value_or("");
  const bool series = r.Bool("series", false).value_or(true);
  if (ReaderFailed(r, req, reply)) return;
  if (topic.find(core::kScopeSeparator) != std::string::npos) {
    // Never a client's name (as the public API, service/session.h).
    Status bad = core::ValidateTopicParam("topic", topic, d->service()->limits());
    return reply(RequestError(400, bad.message(), req.path()));
  }
  const std::string ns = ViewerNamespace(req);
  const std::string internal = topic.empty() ? topic : core::ScopedTopic(ns, topic);
  const TimePoint now = d->clock()->Now();
  JsonWriter w;
  w.BeginObject().Num("code", 200).Str("msg", "success");
  w.Num("now", ToEpochMs(now));
  w.Key("online").Bool(d->service()->online());
  w.Str("namespace", ns.empty() ? "*" : ns);
  if (series) {
    d->history().Viewed(internal, now);
    w.Reserve(64 * 1024);
    d->history().WriteHistory(w, internal, ns.empty());
    w.Str("topic", topic);
  }
  w.EndObject();
  reply(ApiResponse(w.Take()));
}

}  // namespace

void RegisterDashboardRoutes(Router& router, Dashboard* dashboard) {
  for (const DashboardAsset& a : DashboardAssets()) {
    auto serve = [&a](HttpRequest& req, RequestContext&, Reply reply) {
      reply(AssetResponse(a, req));
    };
    if (a.path == "index.html") {
      router.Add("/dashboard", auth::Operation::kDashboardAssets, {"GET", "HEAD"}, serve);
      router.Add("/dashboard/", auth::Operation::kDashboardAssets, {"GET", "HEAD"}, serve);
    }
    router.Add(fmt::format("/dashboard/{}", a.path), auth::Operation::kDashboardAssets,
               {"GET", "HEAD"}, serve);
  }
  router.Add("/dashboard/api/topics", auth::Operation::kDashboard, {"GET"},
             [dashboard](HttpRequest& req, RequestContext&, Reply reply) {
               Topics(dashboard, req, std::move(reply));
             });
  router.Add("/dashboard/api/history", auth::Operation::kDashboard, {"GET"},
             [dashboard](HttpRequest& req, RequestContext&, Reply reply) {
               History(dashboard, req, std::move(reply));
             });
}

}  // namespace chronoq::http
