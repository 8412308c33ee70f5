// produce, backlog and longpoll: workloads that send.
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <thread>

#include "bench/sessions.h"
#include "bench/workloads.h"
#include "client/json.h"

namespace chronoq::bench {
namespace {

using std::chrono::duration;

// Fills ps with a body maker for `topic`, random payloads and delays in [min, max].
void SetUpSends(ProduceState& ps, const std::string& topic, size_t payload_bytes, int64_t delay_min,
                int64_t delay_max) {
  auto rng = std::make_shared<std::mt19937_64>(42);
  auto payload = std::make_shared<std::string>(RandomPayload(payload_bytes, *rng));
  std::string prefix = "topic=" + client::UrlEncode(topic) + "&msg=";
  ps.make_body = [=](int64_t, std::string* body) {
    int64_t delay = delay_min == delay_max
                        ? delay_min
                        : delay_min + static_cast<int64_t>((*rng)() % (delay_max - delay_min + 1));
    body->append(prefix);
    body->append(*payload);
    body->append("&delayMillis=");
    body->append(std::to_string(delay));
  };
}

// Makes every request a sendMsgBatch of `batch` messages (delay `delay`, random payload of
// `payload_bytes` letters and digits, which need no JSON escaping).
void SetUpBatches(ProduceState& ps, const std::string& topic, size_t payload_bytes, int64_t delay,
                  int batch) {
  auto rng = std::make_shared<std::mt19937_64>(43);
  std::string item_prefix = "{\"msg\":\"" + RandomPayload(payload_bytes, *rng) +
                            "\",\"delayMillis\":" + std::to_string(delay) + "}";
  ps.batch = batch;
  ps.batch_prefix = "{\"topic\":" + JsonString(topic) + ",\"msgs\":[";
  ps.make_item = [item = std::move(item_prefix)](int64_t, std::string* json) {
    json->append(item);
  };
}

}  // namespace

void AddProduceFigures(Report& r, const ProduceState& ps, double seconds) {
  r.Int("sent_ok", ps.ok);
  r.Int("failed", ps.failed);
  r.Num("elapsed", seconds, "s");
  r.Num("throughput", seconds > 0 ? static_cast<double>(ps.ok) / seconds : 0, "msgs/s");
  r.Latency("send_latency", ps.latency);
  if (!ps.first_failure.empty()) r.Warn("first failure: " + ps.first_failure);
}

Status ConnectProducers(LoadLoop& loop, ProduceState& ps, int n,
                        std::vector<std::unique_ptr<ProducerSession>>* sessions) {
  std::vector<Session*> ptrs;
  for (int i = 0; i < n; ++i) {
    sessions->push_back(std::make_unique<ProducerSession>(&ps));
    ptrs.push_back(sessions->back().get());
  }
  return loop.Connect(ptrs);
}

Result<double> RunProducers(const CommonOptions& c, ProduceState& ps, int connections,
                            std::string_view name, SteadyClock::time_point deadline) {
  LoadLoop loop(c.endpoint);
  std::vector<std::unique_ptr<ProducerSession>> sessions;
  CQ_RETURN_IF_ERROR(ConnectProducers(loop, ps, connections, &sessions));
  Progress progress(std::string(name), c.progress);
  ps.start = SteadyClock::now();
  auto t0 = SteadyClock::now();
  loop.Run(deadline, nullptr, [&] {
    progress.Update(ps.ok + ps.failed, ps.count == INT64_MAX ? 0 : ps.count,
                    ps.failed ? fmt::format("{} failed", ps.failed) : "");
  });
  progress.Finish();
  return duration<double>(SteadyClock::now() - t0).count();
}

Result<Report> RunProduce(const CommonOptions& c, const ProduceOptions& o) {
  std::string topic = c.topic.empty() ? FreshTopic("produce") : c.topic;
  ProduceState ps;
  ps.endpoint = c.endpoint;
  ps.count = o.count;
  ps.rate = o.rate;
  SetUpSends(ps, topic, o.payload_bytes, o.delay_min_ms, o.delay_max_ms);
  if (o.batch > 1) SetUpBatches(ps, topic, o.payload_bytes, o.delay_min_ms, o.batch);
  Report r("produce");
  r.Str("topic", topic);
  r.Int("connections", o.connections);
  r.Int("batch", o.batch);
  r.Int("payload_bytes", static_cast<int64_t>(o.payload_bytes));
  CpuMeter cpu;
  CQ_ASSIGN_OR_RETURN(
      double secs, RunProducers(c, ps, o.connections, "produce", SteadyClock::time_point::max()));
  AddProduceFigures(r, ps, secs);
  cpu.Report(r, ps.ok);
  return r;
}

Result<Report> RunBacklog(const CommonOptions& c, const BacklogOptions& o) {
  std::string topic = c.topic.empty() ? FreshTopic("backlog") : c.topic;
  Report r("backlog");
  r.Str("topic", topic);
  r.Int("messages", o.count);
  r.Int("delay_ms", o.delay_ms);
  const int64_t delay_max = std::max(o.delay_ms, o.delay_max_ms);
  if (delay_max > o.delay_ms) r.Int("delay_max_ms", delay_max);
  int64_t rss0 = c.server_pid > 0 ? ProcessRssBytes(c.server_pid) : -1;
  int64_t disk0 = o.data_dir.empty() ? -1 : DirectoryBytes(o.data_dir);

  ProduceState ps;
  ps.endpoint = c.endpoint;
  ps.count = o.count;
  SetUpSends(ps, topic, o.payload_bytes, o.delay_ms, delay_max);
  if (o.topics > 1) {
    r.Int("topics", o.topics);
    auto rng = std::make_shared<std::mt19937_64>(42);
    auto payload = std::make_shared<std::string>(RandomPayload(o.payload_bytes, *rng));
    std::vector<std::string> heads;
    for (int t = 0; t < o.topics; ++t) {
      heads.push_back(
          "topic=" + client::UrlEncode(t == 0 ? topic : fmt::format("{}-{}", topic, t)) +
          "&msg=" + *payload + "&delayMillis=");
    }
    const int64_t lo = o.delay_ms;
    ps.make_body = [heads = std::move(heads), rng, lo, delay_max](int64_t i, std::string* body) {
      body->append(heads[static_cast<size_t>(i) % heads.size()]);
      const int64_t delay =
          delay_max == lo ? lo : lo + static_cast<int64_t>((*rng)() % (delay_max - lo + 1));
      body->append(std::to_string(delay));
    };
  }
  CQ_ASSIGN_OR_RETURN(
      double secs, RunProducers(c, ps, o.connections, "backlog", SteadyClock::time_point::max()));
  AddProduceFigures(r, ps, secs);
  std::this_thread::sleep_for(std::chrono::seconds(1));  // let background flushes settle

  if (rss0 >= 0) {
    int64_t rss1 = ProcessRssBytes(c.server_pid);
    r.Int("server_rss_before", rss0, "bytes");
    r.Int("server_rss_after", rss1, "bytes");
    r.Num("rss_bytes_per_message", static_cast<double>(rss1 - rss0) / std::max<int64_t>(1, ps.ok));
  } else {
    r.Warn("no --server-pid: RSS figures skipped");
  }
  if (disk0 >= 0) {
    int64_t disk1 = DirectoryBytes(o.data_dir);
    r.Int("disk_bytes_before", disk0, "bytes");
    r.Int("disk_bytes_after", disk1, "bytes");
    r.Num("disk_bytes_per_message",
          static_cast<double>(disk1 - disk0) / std::max<int64_t>(1, ps.ok));
  }
  if (!o.restart_cmd.empty()) {
    auto t0 = SteadyClock::now();
    int rc = std::system(o.restart_cmd.c_str());
    if (rc != 0) r.Warn(fmt::format("restart command exited with {}", rc));
    // Serving = health check answers and the backlog is visible again.
    double to_health = -1;
    double to_backlog = -1;
    while (SteadyClock::now() - t0 < std::chrono::seconds(120)) {
      auto conn = client::HttpConnection::Connect(c.endpoint, std::chrono::milliseconds(200));
      if (conn.has_value()) {
        auto h = conn->Request("GET", "/camellia/health/check");
        if (h.has_value() && h->status == 200) {
          if (to_health < 0) to_health = duration<double>(SteadyClock::now() - t0).count();
          auto info = conn->Request(
              "GET", "/camellia/delayQueue/getTopicInfo?topic=" + client::UrlEncode(topic));
          if (info.has_value()) {
            auto doc = client::Json::Parse(info->body);
            // The first topic holds its share of the messages (all of them with one topic).
            const int64_t share = (ps.ok + o.topics - 1) / o.topics;
            if (doc.has_value() && (*doc)["data"]["waitingQueueSize"].AsInt() >= share) {
              to_backlog = duration<double>(SteadyClock::now() - t0).count();
              break;
            }
          }
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    r.Num("restart_to_health_check", to_health, "s");
    r.Num("restart_to_backlog_visible", to_backlog, "s");
    if (to_backlog < 0) r.Warn("after the restart the backlog did not become visible within 120 s");
  }
  return r;
}

namespace {

// A parked long poll on an empty topic, re-issued whenever it is answered.
class ParkedSession final : public Session {
 public:
  ParkedSession(const client::Endpoint& ep, const std::string& topic, int64_t* answered,
                int64_t* failures, bool* stop)
      : answered_(answered), failures_(failures), stop_(stop) {
    request_ = FormPost(ep, "/camellia/delayQueue/longPollingMsg",
                        "topic=" + client::UrlEncode(topic) + "&longPollingTimeoutMillis=60000");
  }
  Next NextRequest(std::string* out) override {
    if (*stop_) return Next::Done();
    out->append(request_);
    return Next::Send();
  }
  void OnResponse(int status, std::string_view body, std::chrono::microseconds) override {
    ++*answered_;
    if (status != 200 || !IsSuccess(body)) ++*failures_;
  }
  void OnError(std::string_view) override { ++*failures_; }

 private:
  std::string request_;
  int64_t* answered_;
  int64_t* failures_;
  bool* stop_;
};

}  // namespace

Result<Report> RunLongPoll(const CommonOptions& c, const LongPollOptions& o) {
  std::string topic = c.topic.empty() ? FreshTopic("longpoll") : c.topic;
  Report r("longpoll");
  r.Int("parked_long_polls", o.parked);
  r.Int("producer_connections", o.connections);
  r.Num("phase_seconds", o.seconds, "s");
  auto phase = std::chrono::duration_cast<SteadyClock::duration>(duration<double>(o.seconds));

  // Phase 1: produce alone.
  ProduceState base;
  base.endpoint = c.endpoint;
  base.count = INT64_MAX;
  SetUpSends(base, topic, o.payload_bytes, 3'600'000, 3'600'000);
  CQ_ASSIGN_OR_RETURN(double s1, RunProducers(c, base, o.connections, "longpoll: baseline",
                                              SteadyClock::now() + phase));
  double rps0 = base.ok / s1;

  // Phase 2: park the long polls, then produce again beside them.
  int64_t answered = 0;
  int64_t lp_failures = 0;
  bool stop = false;
  LoadLoop loop(c.endpoint);
  std::vector<std::unique_ptr<Session>> sessions;
  std::vector<Session*> ptrs;
  std::string empty_topic = topic + "-empty";
  for (int i = 0; i < o.parked; ++i) {
    sessions.push_back(
        std::make_unique<ParkedSession>(c.endpoint, empty_topic, &answered, &lp_failures, &stop));
    ptrs.push_back(sessions.back().get());
  }
  ProduceState with;
  with.endpoint = c.endpoint;
  with.count = INT64_MAX;
  SetUpSends(with, topic, o.payload_bytes, 3'600'000, 3'600'000);
  std::vector<Session*> producers;
  for (int i = 0; i < o.connections; ++i) {
    sessions.push_back(std::make_unique<ProducerSession>(&with));
    producers.push_back(sessions.back().get());
  }
  const double refused_before = ServerMetric(c.endpoint, "cq_http_connections_refused_total");
  CQ_RETURN_IF_ERROR(loop.Connect(ptrs));
  // Let the long polls reach the server and park before producing.
  loop.Run(SteadyClock::now() + std::chrono::seconds(2), nullptr, nullptr);
  int64_t parked_errors_before = loop.counters().connection_errors;
  const int64_t answered_before = answered;
  // What the server says it holds: every long poll parked, none answered early by a cap.
  const double parked_at_server = ServerMetric(c.endpoint, "cq_http_long_polls_parked");
  CQ_RETURN_IF_ERROR(loop.Connect(producers));
  CpuMeter cpu;
  with.start = SteadyClock::now();
  auto t0 = SteadyClock::now();
  Progress progress("longpoll: with parked polls", c.progress);
  loop.Run(t0 + phase, nullptr, [&] { progress.Update(with.ok, 0); });
  progress.Finish();
  double s2 = duration<double>(SteadyClock::now() - t0).count();
  stop = true;
  with.stop = true;
  double rps1 = with.ok / s2;

  r.Num("baseline_throughput", rps0, "msgs/s");
  r.Latency("baseline_send_latency", base.latency);
  r.Num("throughput_with_parked", rps1, "msgs/s");
  r.Latency("send_latency_with_parked", with.latency);
  r.Num("throughput_cost_percent", rps0 > 0 ? (1 - rps1 / rps0) * 100 : 0, "%");
  r.Int("send_failures", base.failed + with.failed);
  r.Int("long_polls_answered_early", answered);
  r.Int("long_poll_errors", lp_failures + parked_errors_before);
  r.Int("parked_at_server", static_cast<int64_t>(parked_at_server));
  const double refused_after = ServerMetric(c.endpoint, "cq_http_connections_refused_total");
  if (refused_before >= 0 && refused_after >= 0) {
    r.Int("connections_refused", static_cast<int64_t>(refused_after - refused_before));
  }
  if (parked_at_server >= 0 && parked_at_server < o.parked) {
    r.Warn(fmt::format(
        "only {} of {} long polls were parked at the server before producing ({} answered at "
        "once: a max-parked-long-polls cap, or max-connections)",
        parked_at_server, o.parked, answered_before));
  }
  cpu.Report(r);
  if (!with.first_failure.empty()) r.Warn("first send failure: " + with.first_failure);
  return r;
}

}  // namespace chronoq::bench
