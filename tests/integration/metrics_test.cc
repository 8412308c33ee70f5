// GET /metrics (docs/metrics.md): the output passes `promtool check metrics`, and the figures
// move as requests are made. Counters are compared before and after, on topics unique to each
// test (the server is shared by the tests of this process). With two nodes on one Redis, every
// request goes to the first node: the figures are what one node did.
#include <cstdio>
#include <fstream>
#include <map>
#include <regex>
#include <set>

#include "tests/integration/it_util.h"
#include "tests/testutil/temp_dir.h"

namespace chronoq::it {
namespace {

// Runs `command` with a shell; answers its exit status and fills `output` (stdout and stderr).
int RunShell(const std::string& command, std::string* output) {
  FILE* p = ::popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return -1;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) output->append(buf, n);
  int rc = ::pclose(p);
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

// One scrape: sample lines by their series ("name{labels}"), and the family names with TYPE.
struct Scrape {
  std::string text;
  std::map<std::string, double> series;
  std::set<std::string> families;

  // The value of a series; -1 when absent.
  double Get(const std::string& series_key) const {
    auto it = series.find(series_key);
    return it == series.end() ? -1 : it->second;
  }
};

class MetricsTest : public ServerTest {
 protected:
  void SetUp() override {
    ServerTest::SetUp();
    // The figures are per node (docs/metrics.md): on two nodes, make every request there.
    if (!HasFatalFailure()) api().OneNode();
  }

  Scrape DoScrape() {
    ApiResponse r = api().Get("/metrics");
    EXPECT_EQ(r.status, 200) << r.Describe();
    EXPECT_EQ(r.header("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
    Scrape s;
    s.text = r.http.body;
    std::istringstream in(s.text);
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("# TYPE ", 0) == 0) {
        s.families.insert(line.substr(7, line.find(' ', 7) - 7));
        continue;
      }
      if (line.empty() || line[0] == '#') continue;
      size_t sp = line.rfind(' ');
      s.series[line.substr(0, sp)] = std::stod(line.substr(sp + 1));
    }
    return s;
  }
  static std::string Series(const std::string& name, const std::string& topic,
                            const std::string& more = {}) {
    return name + "{topic=\"" + topic + "\"" + more + "}";
  }
  static std::string Depth(const std::string& topic, const std::string& state) {
    return Series("cq_queue_messages", topic, ",state=\"" + state + "\"");
  }
  double Event(const std::string& name, const std::string& topic) {
    return DoScrape().Get(Series(name, topic));
  }
};

TEST_F(MetricsTest, PromtoolAcceptsTheOutput) {
  // Traffic on every route kind, with a topic that needs escaping.
  std::string t = Topic() + "\"quoted\\back";
  SendOk(t, "m", 0, {{"msgId", "a"}});
  ASSERT_EQ(PullOk(t).size(), 1u);
  ExpectAppCode(Ack(t, "a"), 200);
  api().Get("/no/such/path");
  Scrape s = DoScrape();
  EXPECT_NE(s.text.find("topic=\"" + Topic() + "\\\"quoted\\\\back\""), std::string::npos)
      << s.text;
  testutil::TempDir dir;
  std::string file = dir.Sub("metrics.txt");
  std::ofstream(file) << s.text;
  std::string out;
  int rc = RunShell("promtool check metrics < " + file, &out);
  ASSERT_NE(rc, 127) << "promtool is missing: run scripts/install-deps.sh";
  EXPECT_EQ(rc, 0) << out << "\n--- scrape:\n" << s.text;
}

TEST_F(MetricsTest, QueueFiguresFollowTheRequests) {
  std::string t = Topic();
  Scrape before = DoScrape();
  EXPECT_EQ(before.Get(Series("cq_queue_sends_total", t)), -1);  // not seen yet

  SendOk(t, "m", 5000, {{"msgId", "a"}});
  Scrape s = DoScrape();
  EXPECT_EQ(s.Get(Series("cq_queue_sends_total", t)), 1);
  EXPECT_EQ(s.Get(Depth(t, "waiting")), 1);
  EXPECT_EQ(s.Get(Depth(t, "ready")), 0);

  Advance(5000);
  EXPECT_EQ(DoScrape().Get(Depth(t, "ready")), 1);

  const std::string lateness = "cq_queue_trigger_lateness_seconds_count{via=\"pull\"}";
  double late_before = DoScrape().Get(lateness);
  ASSERT_EQ(PullOk(t, 1, 10'000).size(), 1u);
  s = DoScrape();
  EXPECT_EQ(s.Get(Series("cq_queue_deliveries_total", t)), 1);
  EXPECT_EQ(s.Get(Depth(t, "consuming")), 1);
  EXPECT_EQ(s.Get(lateness), late_before + 1);

  ExpectAppCode(Ack(t, "a"), 200);
  s = DoScrape();
  EXPECT_EQ(s.Get(Series("cq_queue_acks_total", t)), 1);
  EXPECT_EQ(s.Get(Depth(t, "consuming")), 0);

  // nack, delete
  SendOk(t, "m", 0, {{"msgId", "b"}});
  ASSERT_EQ(PullOk(t).size(), 1u);
  ExpectAppCode(Ack(t, "b", false), 200);
  ExpectAppCode(Delete(t, "b"), 200);
  s = DoScrape();
  EXPECT_EQ(s.Get(Series("cq_queue_nacks_total", t)), 1);
  EXPECT_EQ(s.Get(Series("cq_queue_deletions_total", t)), 1);
  EXPECT_EQ(s.Get(Series("cq_queue_retry_exhaustions_total", t)), 0);
}

TEST_F(MetricsTest, TimeoutsExpirationsAndExhaustionsAreCounted) {
  std::string t = Topic();
  // Ack timeout: delivered, deadline passes.
  SendOk(t, "m", 0, {{"msgId", "late"}});
  ASSERT_EQ(PullOk(t, 1, 1000).size(), 1u);
  Advance(1001);
  // Expiration: never delivered, ttl passes.
  std::string t2 = Topic("expire");
  SendOk(t2, "m", 0, {{"msgId", "x"}, {"ttlMillis", "1000"}});
  Advance(1001);
  // Retry exhaustion: the only delivery is nacked.
  std::string t3 = Topic("exhaust");
  SendOk(t3, "m", 0, {{"msgId", "y"}, {"maxRetry", "0"}});
  ASSERT_EQ(PullOk(t3).size(), 1u);
  ExpectAppCode(Ack(t3, "y", false), 200);
  // A shared backend counts what this node's scripts observe: let them look at the topics.
  PullOk(t, 0, 60'000);
  PullOk(t2);
  Scrape s = DoScrape();
  EXPECT_EQ(s.Get(Series("cq_queue_ack_timeouts_total", t)), 1) << s.text;
  EXPECT_EQ(s.Get(Series("cq_queue_expirations_total", t2)), 1) << s.text;
  EXPECT_EQ(s.Get(Series("cq_queue_retry_exhaustions_total", t3)), 1) << s.text;
  EXPECT_EQ(s.Get(Series("cq_queue_expirations_total", t3)), 0) << s.text;
}

TEST_F(MetricsTest, HttpRequestsAreCountedPerRouteAndClass) {
  const std::string send = "cq_http_requests_total{route=\"/camellia/delayQueue/sendMsg\",class=";
  const std::string other = "cq_http_requests_total{route=\"other\",class=\"4xx\"}";
  const std::string latency =
      "cq_http_request_duration_seconds_count{route=\"/camellia/delayQueue/sendMsg\"}";
  Scrape before = DoScrape();
  SendOk(Topic(), "m", 0);
  ExpectRequestError(api().Queue("sendMsg", {{"msg", "no topic"}}), 400,
                     "/camellia/delayQueue/sendMsg");
  api().Get("/no/such/path");
  Scrape after = DoScrape();
  EXPECT_EQ(after.Get(send + "\"2xx\"}"), before.Get(send + "\"2xx\"}") + 1);
  EXPECT_EQ(after.Get(send + "\"4xx\"}"), before.Get(send + "\"4xx\"}") + 1);
  EXPECT_EQ(after.Get(send + "\"5xx\"}"), before.Get(send + "\"5xx\"}"));
  EXPECT_EQ(after.Get(other), before.Get(other) + 1);
  EXPECT_EQ(after.Get(latency), before.Get(latency) + 2);
  // Scrapes count too.
  EXPECT_GE(after.Get("cq_http_requests_total{route=\"/metrics\",class=\"2xx\"}"), 1);
}

TEST_F(MetricsTest, ParkedLongPollsAndTheirLateness) {
  std::string t = Topic();
  const std::string lateness = "cq_queue_trigger_lateness_seconds_count{via=\"long_poll\"}";
  double before = DoScrape().Get(lateness);
  auto poller = NewClient();
  poller->OneNode();
  ASSERT_TRUE(
      poller->BeginQueue("longPollingMsg", {{"topic", t}, {"longPollingTimeoutMillis", "30000"}})
          .ok());
  ASSERT_TRUE(api().WaitParked(1));
  EXPECT_EQ(DoScrape().Get("cq_http_long_polls_parked"), 1);
  SendOk(t, "m", 0);
  ApiResponse r = poller->Finish();
  EXPECT_EQ(r.code(), 200) << r.Describe();
  ASSERT_TRUE(api().WaitParked(0));
  Scrape s = DoScrape();
  EXPECT_EQ(s.Get("cq_http_long_polls_parked"), 0);
  EXPECT_EQ(s.Get(lateness), before + 1);
  EXPECT_EQ(s.Get(Series("cq_queue_deliveries_total", t)), 1);
}

TEST_F(MetricsTest, StorageAndProcessFigures) {
  Scrape s = DoScrape();
  EXPECT_GT(s.Get("cq_process_uptime_seconds"), 0);
  EXPECT_GT(s.Get("cq_process_resident_memory_bytes"), 1 << 20);
  EXPECT_GT(s.Get("cq_process_open_fds"), 2);
  EXPECT_EQ(s.Get("cq_queue_depth_read_ok"), 1);
  const std::string storage = testutil::StorageUnderTest();
  const bool embedded = storage == "embedded";
  const bool redis = storage.rfind("redis", 0) == 0;  // redis, redis2
  for (const char* f : {"cq_storage_live_data_bytes", "cq_storage_pending_compaction_bytes",
                        "cq_storage_write_stalls_total", "cq_storage_write_stopped",
                        "cq_storage_writable", "cq_storage_data_dir_free_bytes"}) {
    EXPECT_EQ(s.families.count(f), embedded ? 1u : 0u) << f;
  }
  if (embedded) {
    EXPECT_GT(s.Get("cq_storage_data_dir_free_bytes"), 0);
    EXPECT_EQ(s.Get("cq_storage_writable"), 1);
  }
  for (const char* f : {"cq_redis_errors_total", "cq_redis_reconnects_total"}) {
    EXPECT_EQ(s.families.count(f), redis ? 1u : 0u) << f;
  }
}

// The cardinality cap: the first topics keep their label, later ones fold into "_other".
class MetricsCapTest : public MetricsTest {
 protected:
  std::vector<std::string> Flags() const override { return {"--metrics-max-topics=2"}; }
};

TEST_F(MetricsCapTest, TopicsBeyondTheCapAreFolded) {
  Scrape before = DoScrape();
  const std::string other = Series("cq_queue_sends_total", "_other");
  for (const char* tag : {"a", "b", "c", "d"}) SendOk(Topic(tag), "m", 0);
  Scrape s = DoScrape();
  int named = 0;
  for (const auto& [key, value] : s.series) {
    if (key.rfind("cq_queue_sends_total{", 0) == 0 && key != other) ++named;
  }
  EXPECT_EQ(named, 2) << s.text;
  // Earlier tests on this server may have used the two slots already.
  EXPECT_GE(s.Get(other), before.Get(other) + 2) << s.text;
}

}  // namespace
}  // namespace chronoq::it
