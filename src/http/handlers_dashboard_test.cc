// The dashboard's routes in process (handlers_dashboard.cc, dashboard.cc) over the service and a
// fake backend: the compiled-in files with their types and validators, the overview's paged
// topics, and the history sampled on a manual clock.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <optional>
#include <string>

#include "base/clock.h"
#include "base/scheduler.h"
#include "core/scope.h"
#include "http/dashboard.h"
#include "http/dashboard_assets.h"
#include "http/handlers.h"
#include "tests/testutil/fake_backend.h"

namespace chronoq::http {
namespace {

class NoConnection final : public RequestContext {
 public:
  bool PeerAlive() const override { return true; }
  void OnPeerGone(UniqueFunction<void()>) override {}
};

std::string_view Header(const HttpResponse& r, std::string_view name) {
  for (const auto& [k, v] : r.headers) {
    if (k == name) return v;
  }
  return {};
}

class DashboardRoutesTest : public ::testing::Test {
 protected:
  DashboardRoutesTest() : clock_(FromEpochMs(1'700'000'000'000)), sched_(&clock_) {
    service_ = std::make_unique<service::QueueService>(&fake_, &clock_, &sched_,
                                                       service::ServiceOptions{});
    ctx_.service = service_.get();
    RegisterRoutes(router_, &ctx_);
    dashboard_ = std::make_unique<Dashboard>(service_.get(), &clock_, &sched_);
    RegisterDashboardRoutes(router_, dashboard_.get());
  }
  ~DashboardRoutesTest() override { dashboard_->Stop(); }

  HttpResponse Do(std::string method, std::string target, std::string if_none_match = "",
                  std::string body = "") {
    method_ = std::move(method);
    target_ = std::move(target);
    etag_ = std::move(if_none_match);
    HttpRequest req;
    req.method = method_;
    req.target = target_;
    req.if_none_match = etag_;
    req.has_content_type = !body.empty();
    req.content_type = "application/x-www-form-urlencoded";
    req.body = std::move(body);
    req.caller = caller_;  // no authenticator on this router: the caller stays as set
    std::optional<HttpResponse> out;
    NoConnection conn;
    router_.Dispatch(req, conn, Reply([&out](HttpResponse r) { out.emplace(std::move(r)); }));
    EXPECT_TRUE(out.has_value()) << target_;
    return out.value_or(HttpResponse{});
  }
  boost::json::object Json(std::string target) {
    HttpResponse r = Do("GET", std::move(target));
    EXPECT_EQ(r.status, 200) << r.body;
    return boost::json::parse(r.body).as_object();
  }
  void Send(const std::string& topic, const std::string& id, int64_t delay) {
    HttpResponse r =
        Do("POST", std::string(kQueueBase) + "sendMsg", "",
           "topic=" + topic + "&msgId=" + id + "&msg=m&delayMillis=" + std::to_string(delay));
    ASSERT_EQ(r.body.substr(0, 11), "{\"code\":200") << r.body;
  }

  base::ManualClock clock_;
  base::ManualScheduler sched_;
  testutil::FakeBackend fake_;
  std::unique_ptr<service::QueueService> service_;
  HandlerContext ctx_;
  Router router_;
  std::unique_ptr<Dashboard> dashboard_;
  std::string method_, target_, etag_;
  auth::Caller caller_;  // anonymous: a server without tokens

  static auth::Caller AdminOf(std::string ns) {
    return auth::Caller{.anonymous = false, .ns = std::move(ns), .role = auth::Role::kAdmin};
  }
};

TEST_F(DashboardRoutesTest, ThePageIsServedFromTheBinaryWithItsTypeAndValidator) {
  HttpResponse page = Do("GET", "/dashboard");
  EXPECT_EQ(page.status, 200);
  EXPECT_EQ(page.content_type, "text/html; charset=utf-8");
  EXPECT_NE(page.body.find("/dashboard/js/app.js"), std::string::npos);
  EXPECT_EQ(Header(page, "Cache-Control"), "no-cache");
  EXPECT_NE(Header(page, "Content-Security-Policy").find("script-src 'self'"), std::string::npos);
  const std::string etag(Header(page, "ETag"));
  ASSERT_FALSE(etag.empty());
  EXPECT_EQ(Do("GET", "/dashboard/").body, page.body);
  EXPECT_EQ(Do("GET", "/dashboard/index.html").body, page.body);
  // Revalidation: the same ETag is a 304 without a body; another one gets the page.
  HttpResponse again = Do("GET", "/dashboard", etag);
  EXPECT_EQ(again.status, 304);
  EXPECT_TRUE(again.body.empty());
  EXPECT_EQ(Do("GET", "/dashboard", "\"other\", W/" + etag).status, 304);
  EXPECT_EQ(Do("GET", "/dashboard", "\"other\"").status, 200);
  EXPECT_EQ(Do("POST", "/dashboard").status, 405);
}

TEST_F(DashboardRoutesTest, EveryAssetHasTheTypeOfItsExtension) {
  size_t scripts = 0;
  for (const DashboardAsset& a : DashboardAssets()) {
    HttpResponse r = Do("GET", "/dashboard/" + std::string(a.path));
    EXPECT_EQ(r.status, 200) << a.path;
    EXPECT_EQ(r.body, a.body) << a.path;
    EXPECT_EQ(Header(r, "X-Content-Type-Options"), "nosniff");
    if (a.path.ends_with(".js")) {
      EXPECT_EQ(r.content_type, "text/javascript; charset=utf-8") << a.path;
      ++scripts;
    }
    if (a.path.ends_with(".css")) {
      EXPECT_EQ(r.content_type, "text/css; charset=utf-8");
    }
  }
  EXPECT_GE(scripts, 5u);
  EXPECT_EQ(Do("GET", "/dashboard/js/missing.js").status, 404);
}

TEST_F(DashboardRoutesTest, TopicsArePagedSearchedAndSorted) {
  for (int i = 0; i < 7; ++i) Send("orders-" + std::to_string(i), "a", 60'000);
  Send("orders-3", "b", 60'000);
  Send("Payments", "a", 0);
  boost::json::object page = Json("/dashboard/api/topics?limit=3&offset=3");
  EXPECT_EQ(page["topicCount"].as_int64(), 8);
  EXPECT_EQ(page["total"].as_int64(), 8);
  const boost::json::array& rows = page["topics"].as_array();
  ASSERT_EQ(rows.size(), 3u);  // by name: Payments, orders-0, orders-1, then this page
  EXPECT_EQ(rows[0].as_object().at("topic").as_string(), "orders-2");
  EXPECT_EQ(rows[1].as_object().at("topic").as_string(), "orders-3");
  EXPECT_EQ(rows[1].as_object().at("waiting").as_int64(), 2);
  EXPECT_EQ(page["sum"].as_object().at("waiting").as_int64(), 8);
  EXPECT_EQ(page["sum"].as_object().at("ready").as_int64(), 1);

  boost::json::object found = Json("/dashboard/api/topics?q=PAY");
  ASSERT_EQ(found["total"].as_int64(), 1);
  EXPECT_EQ(found["topics"].as_array()[0].as_object().at("topic").as_string(), "Payments");
  boost::json::object deepest = Json("/dashboard/api/topics?sort=waiting&limit=1");
  EXPECT_EQ(deepest["topics"].as_array()[0].as_object().at("topic").as_string(), "orders-3");

  EXPECT_EQ(Do("GET", "/dashboard/api/topics?limit=0").status, 400);
  EXPECT_EQ(Do("GET", "/dashboard/api/topics?limit=101").status, 400);
  EXPECT_EQ(Do("GET", "/dashboard/api/topics?offset=-1").status, 400);
  HttpResponse bad_sort = Do("GET", "/dashboard/api/topics?sort=size");
  EXPECT_EQ(bad_sort.status, 400);
  EXPECT_NE(bad_sort.body.find("parameter 'sort'"), std::string::npos);
}

TEST_F(DashboardRoutesTest, TheHistoryIsSampledEveryIntervalOnTheScheduler) {
  dashboard_->Start();  // a first sample now
  Send("jobs", "a", 0);
  sched_.Advance(Millis(5'000));
  Send("jobs", "b", 0);
  sched_.Advance(Millis(5'000));
  boost::json::object h = Json("/dashboard/api/history?topic=jobs");
  EXPECT_TRUE(h["online"].as_bool());
  EXPECT_EQ(h["intervalMillis"].as_int64(), 5'000);
  const boost::json::array& times = h["times"].as_array();
  ASSERT_EQ(times.size(), 3u);
  const boost::json::object& total = h["total"].as_object();
  EXPECT_DOUBLE_EQ(total.at("sends").as_array()[1].to_number<double>(), 0.2);  // 1 in 5 s
  EXPECT_EQ(total.at("ready").as_array()[2].to_number<double>(), 2);
  EXPECT_TRUE(h["tracked"].as_bool());  // busy, and now viewed
  // series=false: the node's state only.
  boost::json::object node = Json("/dashboard/api/history?series=false");
  EXPECT_FALSE(node.contains("times"));
  service_->SetOnline(false);
  EXPECT_FALSE(Json("/dashboard/api/history?series=false")["online"].as_bool());
  // Stopped: no more samples.
  dashboard_->Stop();
  sched_.Advance(Millis(20'000));
  EXPECT_EQ(dashboard_->history().samples(), 3u);
}

// An admin of a namespace sees its topics only, under the names its clients use, and no node
// totals; an admin of '*' (here: no tokens) sees every namespace's, another's as ns/topic.
TEST_F(DashboardRoutesTest, AnAdminSeesItsNamespaceOnlyAndTheOperatorSeesEveryOne) {
  dashboard_->Start();
  caller_ = AdminOf("shop");
  Send("orders", "a", 60'000);
  caller_ = AdminOf("bank");
  Send("orders", "a", 0);
  Send("ledger", "a", 0);
  caller_ = {};
  Send("plain", "a", 0);
  sched_.Advance(Millis(5'000));

  caller_ = AdminOf("shop");
  HttpResponse raw = Do("GET", "/dashboard/api/topics");
  EXPECT_EQ(raw.body.find("\\u001f"), std::string::npos) << raw.body;
  EXPECT_EQ(raw.body.find("bank"), std::string::npos) << raw.body;
  EXPECT_EQ(raw.body.find("ledger"), std::string::npos) << raw.body;
  EXPECT_EQ(raw.body.find("plain"), std::string::npos) << raw.body;
  boost::json::object page = boost::json::parse(raw.body).as_object();
  EXPECT_EQ(page["topicCount"].as_int64(), 1);
  EXPECT_EQ(page["sum"].as_object().at("waiting").as_int64(), 1);
  EXPECT_EQ(page["sum"].as_object().at("ready").as_int64(), 0);
  ASSERT_EQ(page["topics"].as_array().size(), 1u);
  const boost::json::object& row = page["topics"].as_array()[0].as_object();
  EXPECT_EQ(row.at("topic").as_string(), "orders");
  EXPECT_FALSE(row.contains("namespace"));
  EXPECT_TRUE(row.at("tracked").as_bool());  // its series is found by its internal name
  EXPECT_EQ(Json("/dashboard/api/topics?q=ledger")["total"].as_int64(), 0);
  HttpResponse hist = Do("GET", "/dashboard/api/history?topic=orders");
  EXPECT_EQ(hist.body.find("\\u001f"), std::string::npos) << hist.body;
  boost::json::object h = boost::json::parse(hist.body).as_object();
  EXPECT_EQ(h["namespace"].as_string(), "shop");
  EXPECT_EQ(h["topic"].as_string(), "orders");
  EXPECT_TRUE(h["total"].is_null());  // the node's totals span every namespace
  EXPECT_TRUE(h["tracked"].as_bool());
  EXPECT_EQ(h["series"].as_object().at("waiting").as_array().back().to_number<double>(), 1);
  // Another namespace's internal name is never a name a client gives.
  HttpResponse bad = Do("GET", "/dashboard/api/history?topic=bank%1Fledger");
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.body.find("control character"), std::string::npos) << bad.body;

  caller_ = {};
  raw = Do("GET", "/dashboard/api/topics");
  EXPECT_EQ(raw.body.find("\\u001f"), std::string::npos) << raw.body;
  page = boost::json::parse(raw.body).as_object();
  EXPECT_EQ(page["topicCount"].as_int64(), 4);
  EXPECT_EQ(page["sum"].as_object().at("ready").as_int64(), 3);
  std::vector<std::string> names;
  for (const auto& t : page["topics"].as_array()) {
    const boost::json::object& o = t.as_object();
    names.emplace_back(o.at("topic").as_string());
    const std::string ns = names.back().substr(0, names.back().find('/'));
    if (names.back().find('/') == std::string::npos) {
      EXPECT_FALSE(o.contains("namespace")) << names.back();
    } else {
      EXPECT_EQ(o.at("namespace").as_string(), ns);
    }
  }
  EXPECT_EQ(names,
            (std::vector<std::string>{"bank/ledger", "bank/orders", "plain", "shop/orders"}));
  EXPECT_EQ(Json("/dashboard/api/topics?q=bank/")["total"].as_int64(), 2);
  h = Json("/dashboard/api/history?topic=plain");
  EXPECT_EQ(h["namespace"].as_string(), "*");
  EXPECT_TRUE(h["total"].is_object());
  EXPECT_EQ(h["total"].as_object().at("topics").as_array().back().to_number<double>(), 4);

  // Dead letters (the counters of a sample): bank's are listed to bank and to the operator only.
  HistorySample s;
  s.at = clock_.Now() + Millis(1'000);
  metrics::TopicCounts& c = s.counts.emplace_back();
  c.topic = core::ScopedTopic("bank", "ledger");
  c.counts[static_cast<int>(metrics::QueueEvent::kDeadLetter)] = 2;
  for (std::string_view t : {"shop\x1Forders", "bank\x1Forders", "bank\x1Fledger", "plain"}) {
    s.topics.push_back(core::TopicInfo{.topic = std::string(t)});
  }
  dashboard_->history().Add(s);
  const std::string dead = "/dashboard/api/topics?deadLetters=true&sort=deadLetters";
  caller_ = AdminOf("shop");
  EXPECT_EQ(Json(dead)["total"].as_int64(), 0);
  caller_ = AdminOf("bank");
  page = Json(dead);
  ASSERT_EQ(page["total"].as_int64(), 1);
  EXPECT_EQ(page["topics"].as_array()[0].as_object().at("topic").as_string(), "ledger");
  EXPECT_EQ(page["topics"].as_array()[0].as_object().at("deadLettersTotal").as_int64(), 2);
  caller_ = {};
  page = Json(dead);
  ASSERT_EQ(page["total"].as_int64(), 1);
  EXPECT_EQ(page["topics"].as_array()[0].as_object().at("topic").as_string(), "bank/ledger");
}

}  // namespace
}  // namespace chronoq::http
