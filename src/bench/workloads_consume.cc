// e2e and burst: workloads that send messages and consume them as they fall due.
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <numeric>

#include "bench/sessions.h"
#include "bench/workloads.h"

namespace chronoq::bench {
namespace {

using std::chrono::duration;

struct Pipeline {
  ProduceState ps;
  ConsumeState cs;
  std::vector<std::unique_ptr<Session>> sessions;
};

// Producers, consumers and ackers on one loop; runs until every message was received and acked,
// or the deadline passes.
Status RunPipeline(const CommonOptions& c, Pipeline& p, int producers, int consumers, int ackers,
                   SteadyClock::time_point deadline, std::string_view name,
                   const std::function<void()>& tick = {}) {
  LoadLoop loop(c.endpoint);
  p.cs.loop = &loop;
  std::vector<Session*> all;
  for (int i = 0; i < producers; ++i) {
    p.sessions.push_back(std::make_unique<ProducerSession>(&p.ps));
    all.push_back(p.sessions.back().get());
  }
  for (int i = 0; i < consumers; ++i) {
    p.sessions.push_back(std::make_unique<ConsumerSession>(&p.cs));
    all.push_back(p.sessions.back().get());
  }
  for (int i = 0; i < ackers; ++i) {
    p.sessions.push_back(std::make_unique<AckerSession>(&p.cs));
    all.push_back(p.sessions.back().get());
    p.cs.ackers.push_back(all.back());
  }
  CQ_RETURN_IF_ERROR(loop.Connect(all));
  Progress progress(std::string(name), c.progress);
  p.ps.start = SteadyClock::now();
  loop.Run(deadline, nullptr, [&] {
    progress.Update(p.cs.unique, p.cs.expected,
                    fmt::format("sent {}  acked {}", p.ps.ok, p.cs.acked));
    if (tick) tick();
  });
  progress.Finish();
  p.cs.stop = true;
  return Status::Ok();
}

}  // namespace

void AddDeliveryFigures(Report& r, const ProduceState& ps, const ConsumeState& cs) {
  r.Int("sent_ok", ps.ok);
  r.Int("send_failures", ps.failed);
  r.Int("delivered", cs.unique);
  r.Int("missing", cs.expected - cs.unique);
  r.Int("duplicates", cs.duplicates);
  r.Int("acked", cs.acked);
  r.Int("ack_failures", cs.ack_failures);
  r.Int("pull_failures", cs.pull_failures);
  r.Latency("lateness", cs.lateness);
  r.Latency("send_latency", ps.latency);
  if (cs.expected > cs.unique)
    r.Warn(fmt::format("{} messages were never delivered", cs.expected - cs.unique));
  if (cs.duplicates > 0) r.Warn(fmt::format("{} duplicate deliveries", cs.duplicates));
  if (cs.ack && cs.acked < cs.unique) {
    r.Warn(fmt::format(
        "{} delivered messages were not acked ({} ack failures); an acker connection idle longer "
        "than the server's idle-timeout-millis (e.g. during a long --lead-ms) is closed",
        cs.unique - cs.acked, cs.ack_failures));
  }
  if (!ps.first_failure.empty()) r.Warn("first send failure: " + ps.first_failure);
  if (!cs.first_failure.empty()) r.Warn("first pull failure: " + cs.first_failure);
}

void AddE2eFigures(Report& r, const ProduceState& ps, const ConsumeState& cs, double seconds) {
  AddDeliveryFigures(r, ps, cs);
  r.Num("elapsed", seconds, "s");
  if (cs.last_receive_us > cs.first_receive_us) {
    r.Num("delivery_throughput",
          static_cast<double>(cs.unique) / ((cs.last_receive_us - cs.first_receive_us) / 1e6),
          "msgs/s");
  }
}

std::string RunPrefix(std::string_view workload) {
  std::random_device rd;
  return fmt::format("{}-{:06x}-", workload, rd() & 0xffffff);
}

SteadyClock::time_point E2eDeadline(const E2eOptions& o) {
  double send_secs = o.rate > 0 ? static_cast<double>(o.count) / o.rate : 0;
  return SteadyClock::now() +
         std::chrono::duration_cast<SteadyClock::duration>(duration<double>(send_secs)) +
         std::chrono::milliseconds(o.delay_max_ms + o.grace_ms);
}

Report E2eReport(const std::string& topic, const E2eOptions& o) {
  Report r("e2e");
  r.Str("topic", topic);
  r.Int("messages", o.count);
  r.Str("delays", fmt::format("uniform {}..{} ms", o.delay_min_ms, o.delay_max_ms));
  r.Num("send_rate_target", o.rate, "msgs/s");
  r.Int("consumers", o.consumers);
  return r;
}

void SetUpE2eSends(ProduceState& ps, const std::string& topic, const std::string& prefix,
                   const E2eOptions& o) {
  ps.count = o.count;
  ps.rate = o.rate;
  auto rng = std::make_shared<std::mt19937_64>(7);
  std::string payload = RandomPayload(o.payload_bytes, *rng);
  std::string head = "topic=" + client::UrlEncode(topic) + "&msg=" + payload + "&msgId=" + prefix;
  ps.make_body = [=](int64_t i, std::string* body) {
    int64_t delay =
        o.delay_min_ms + static_cast<int64_t>((*rng)() % (o.delay_max_ms - o.delay_min_ms + 1));
    body->append(head);
    body->append(std::to_string(i));
    body->append("&delayMillis=");
    body->append(std::to_string(delay));
  };
}

Result<Report> RunE2e(const CommonOptions& c, const E2eOptions& o) {
  std::string topic = c.topic.empty() ? FreshTopic("e2e") : c.topic;
  Pipeline p;
  p.ps.endpoint = c.endpoint;
  std::string prefix = RunPrefix("e2e");
  SetUpE2eSends(p.ps, topic, prefix, o);
  p.cs.endpoint = c.endpoint;
  if (!o.consume_server.empty()) {
    Result<client::Endpoint> ep = client::ParseServerUrl(o.consume_server);
    if (!ep.has_value()) return InvalidArgument("--consume-server: " + ep.error().message());
    p.cs.endpoint = *ep;
    p.cs.endpoint.tls_options = c.endpoint.tls_options;
  }
  p.cs.topic = topic;
  p.cs.batch = o.batch;
  p.cs.ack = o.ack;
  p.cs.Expect(prefix, o.count);

  auto deadline = E2eDeadline(o);
  Report r = E2eReport(topic, o);
  r.Int("batch", o.batch);
  if (!o.consume_server.empty()) r.Str("consume_server", o.consume_server);
  CpuMeter cpu;
  auto t0 = SteadyClock::now();
  CQ_RETURN_IF_ERROR(
      RunPipeline(c, p, o.producers, o.consumers, o.ack ? o.ackers : 0, deadline, "e2e"));
  double secs = duration<double>(SteadyClock::now() - t0).count();
  AddE2eFigures(r, p.ps, p.cs, secs);
  cpu.Report(r);
  return r;
}

Result<Report> RunBurst(const CommonOptions& c, const BurstOptions& o) {
  std::string topic = c.topic.empty() ? FreshTopic("burst") : c.topic;
  int64_t lead_ms = o.lead_ms > 0 ? o.lead_ms : 5'000 + o.count * 1000 / 25'000;
  int64_t t0_ms = NowEpochMicros() / 1000 + lead_ms;  // the second all messages fall due in
  // Shuffled slots: message i falls due at t0 + slot(i) * 1000 / slots ms.
  auto slots = std::make_shared<std::vector<int32_t>>(static_cast<size_t>(o.count));
  for (size_t i = 0; i < slots->size(); ++i) slots->at(i) = static_cast<int32_t>(i % o.slots);
  std::shuffle(slots->begin(), slots->end(), std::mt19937_64(11));

  Pipeline p;
  p.ps.endpoint = c.endpoint;
  p.ps.count = o.count;
  std::string prefix = RunPrefix("burst");
  std::mt19937_64 rng(13);
  std::string head = "topic=" + client::UrlEncode(topic) +
                     "&msg=" + RandomPayload(o.payload_bytes, rng) + "&msgId=" + prefix;
  auto late_sends = std::make_shared<int64_t>(0);
  p.ps.make_body = [=](int64_t i, std::string* body) {
    int64_t due = t0_ms + static_cast<int64_t>(slots->at(static_cast<size_t>(i))) * 1000 / o.slots;
    int64_t delay = due - NowEpochMicros() / 1000;
    if (delay <= 0) ++*late_sends;
    body->append(head);
    body->append(std::to_string(i));
    body->append("&delayMillis=");
    body->append(std::to_string(delay));
  };
  p.cs.endpoint = c.endpoint;
  p.cs.topic = topic;
  p.cs.batch = o.batch;
  p.cs.ack = o.ack;
  p.cs.ack_timeout_ms = 600'000;
  p.cs.ack_batch = o.ack_batch;
  p.cs.Expect(prefix, o.count);

  auto deadline = SteadyClock::now() + std::chrono::milliseconds(lead_ms + 1000 + o.grace_ms);
  Report r("burst");
  r.Str("topic", topic);
  r.Int("messages", o.count);
  r.Int("slots", o.slots);
  r.Int("consumers", o.consumers);
  r.Int("batch", o.batch);
  r.Str("ack", o.ack ? (o.ack_batch > 1 ? fmt::format("ackMsgBatch of up to {}", o.ack_batch)
                                        : std::string("ackMsg"))
                     : std::string("no"));
  CpuMeter cpu;
  // The server's CPU over the drain (--server-pid): from the first tick at or after the due second
  // to the end of the run (every message received and acked, or the deadline).
  double server_cpu_at_due = -1;
  int64_t server_cpu_from_us = 0;
  auto tick = [&] {
    if (c.server_pid <= 0 || server_cpu_at_due >= 0 || NowEpochMicros() < t0_ms * 1000) return;
    server_cpu_at_due = OtherProcessCpuSeconds(c.server_pid);
    server_cpu_from_us = NowEpochMicros();
  };
  CQ_RETURN_IF_ERROR(
      RunPipeline(c, p, o.producers, o.consumers, o.ack ? o.ackers : 0, deadline, "burst", tick));
  double server_cpu_at_end = c.server_pid > 0 ? OtherProcessCpuSeconds(c.server_pid) : -1;
  int64_t end_us = NowEpochMicros();
  AddDeliveryFigures(r, p.ps, p.cs);
  r.Int("sends_after_due_time", *late_sends);
  if (*late_sends > 0) {
    r.Warn(fmt::format("{} messages were sent after their due time; raise --lead-ms", *late_sends));
  }
  int64_t t0_us = t0_ms * 1000;
  if (p.cs.unique > 0) {
    double drain_secs = (p.cs.last_receive_us - std::max(t0_us, p.cs.first_receive_us)) / 1e6;
    r.Num("drain_seconds_after_first_due", (p.cs.last_receive_us - t0_us) / 1e6, "s");
    r.Num("drain_rate", drain_secs > 0 ? p.cs.unique / drain_secs : 0, "msgs/s");
    if (o.ack && p.cs.last_ack_us > 0) {
      double acked_secs = (p.cs.last_ack_us - std::max(t0_us, p.cs.first_receive_us)) / 1e6;
      r.Num("drained_and_acked_rate", acked_secs > 0 ? p.cs.acked / acked_secs : 0, "msgs/s");
    }
  }
  if (server_cpu_at_due >= 0 && server_cpu_at_end >= 0 && p.cs.unique > 0) {
    double cpu = server_cpu_at_end - server_cpu_at_due;
    double wall = (end_us - server_cpu_from_us) / 1e6;
    r.Num("server_cpu_in_drain", cpu, "s");
    r.Num("server_cpu_percent_in_drain", wall > 0 ? cpu / wall * 100.0 : 0, "% of one core");
    r.Num("server_cpu_us_per_drained_msg", cpu * 1e6 / static_cast<double>(p.cs.unique), "us");
  }
  cpu.Report(r);
  return r;
}

}  // namespace chronoq::bench
