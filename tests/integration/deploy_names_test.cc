// deploy/grafana/chronoq.json parses as a dashboard, and every metric its panels and the alert
// rules of deploy/prometheus/alerts.yml query is one the server exports. Names of one storage
// (cq_storage_*: embedded, cq_redis_*: redis) are checked on that storage's run.
#include <boost/json.hpp>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "tests/integration/it_util.h"

namespace chronoq::it {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Every cq_* identifier in `expr`.
void CollectNames(const std::string& expr, std::set<std::string>* names) {
  static const std::regex kName("cq_[a-z0-9_]+");
  for (std::sregex_iterator it(expr.begin(), expr.end(), kName), end; it != end; ++it) {
    names->insert(it->str());
  }
}

// The expr of every target of every panel (rows nest panels).
void CollectDashboardNames(const json::value& panels, std::set<std::string>* names, int* count) {
  if (!panels.is_array()) return;
  for (const json::value& p : panels.as_array()) {
    const json::object& o = p.as_object();
    if (o.contains("panels")) CollectDashboardNames(o.at("panels"), names, count);
    if (!o.contains("targets")) continue;
    for (const json::value& t : o.at("targets").as_array()) {
      ++*count;
      CollectNames(Str(t.as_object().at("expr")), names);
    }
  }
}

class DeployNamesTest : public ServerTest {
 protected:
  // The metric families the server exports now (TYPE lines), histograms with their sample names.
  std::set<std::string> Exported() {
    ApiResponse r = api().Get("/metrics");
    EXPECT_EQ(r.status, 200);
    std::set<std::string> out;
    std::istringstream in(r.http.body);
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("# TYPE ", 0) != 0) continue;
      std::istringstream words(line.substr(7));
      std::string name, type;
      words >> name >> type;
      out.insert(name);
      if (type == "histogram") {
        for (const char* suffix : {"_bucket", "_sum", "_count"}) out.insert(name + suffix);
      }
    }
    return out;
  }

  void ExpectExported(const std::set<std::string>& names, const std::string& where) {
    std::set<std::string> exported = Exported();
    const std::string storage = testutil::StorageUnderTest();
    for (const std::string& n : names) {
      if (n.rfind("cq_storage_", 0) == 0 && storage != "embedded") continue;
      if (n.rfind("cq_redis_", 0) == 0 && storage.rfind("redis", 0) != 0) continue;
      EXPECT_TRUE(exported.count(n))
          << where << " queries " << n << ", which the server (" << storage << ") does not export";
    }
  }
};

TEST_F(DeployNamesTest, DashboardQueriesExportedMetrics) {
  json::value dash =
      json::parse(ReadFile(std::string(CQ_SOURCE_DIR) + "/deploy/grafana/chronoq.json"));
  ASSERT_TRUE(dash.is_object());
  EXPECT_EQ(Str(dash.at("title")), "chronoq");
  std::set<std::string> names;
  int targets = 0;
  CollectDashboardNames(dash.at("panels"), &names, &targets);
  for (const json::value& v : dash.at("templating").at("list").as_array()) {
    CollectNames(Str(v.as_object().at("definition")), &names);
  }
  EXPECT_GE(targets, 10);
  // What the dashboard is for.
  for (const char* n :
       {"cq_queue_sends_total", "cq_queue_messages", "cq_queue_trigger_lateness_seconds_bucket",
        "cq_http_requests_total", "cq_http_long_polls_parked", "cq_queue_dead_letters_total",
        "cq_queue_capacity_refusals_total"}) {
    EXPECT_TRUE(names.count(n)) << "the dashboard does not show " << n;
  }
  ExpectExported(names, "deploy/grafana/chronoq.json");
}

TEST_F(DeployNamesTest, AlertRulesQueryExportedMetrics) {
  std::set<std::string> names;
  CollectNames(ReadFile(std::string(CQ_SOURCE_DIR) + "/deploy/prometheus/alerts.yml"), &names);
  EXPECT_TRUE(names.count("cq_queue_retry_exhaustions_total"));
  EXPECT_TRUE(names.count("cq_queue_dead_letters_total"));
  ExpectExported(names, "deploy/prometheus/alerts.yml");
}

}  // namespace
}  // namespace chronoq::it
