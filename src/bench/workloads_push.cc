// push: messages with an HTTP callback to the benchmark's own receiver (bench/push_receiver.h);
// the server delivers them itself (issue 16). Measures deliveries per second and push lateness
// (receive time minus trigger time).
#include <fmt/format.h>

#include <memory>
#include <random>
#include <thread>

#include "bench/push_receiver.h"
#include "bench/sessions.h"
#include "bench/workloads.h"

namespace chronoq::bench {

using std::chrono::duration;

Result<Report> RunPush(const CommonOptions& c, const PushBenchOptions& o) {
  if (o.count <= 0) return InvalidArgument("--count must be at least 1");
  const std::string topic = c.topic.empty() ? FreshTopic("push") : c.topic;
  const std::string prefix = RunPrefix("push");
  CQ_ASSIGN_OR_RETURN(std::unique_ptr<PushReceiver> receiver,
                      PushReceiver::Start({prefix, o.count, o.receiver_threads}));
  const std::string url = fmt::format("http://127.0.0.1:{}/push", receiver->port());
  const std::string callback =
      fmt::format(R"({{"type":"http","url":"{}","timeoutMillis":{}}})", url, o.timeout_ms);

  // at_once: every message falls due at t0 (all sent before it); else each `delay_ms` after its
  // send, sends paced at `rate`.
  const bool at_once = o.rate <= 0;
  const int64_t lead_ms = o.lead_ms > 0 ? o.lead_ms : 3'000 + o.count * 1000 / 20'000;
  const int64_t t0_ms = NowEpochMicros() / 1000 + lead_ms;
  ProduceState ps;
  ps.endpoint = c.endpoint;
  ps.count = o.count;
  ps.rate = o.rate;
  std::mt19937_64 rng(17);
  const std::string head = "topic=" + client::UrlEncode(topic) +
                           "&msg=" + RandomPayload(o.payload_bytes, rng) +
                           "&callback=" + client::UrlEncode(callback) + "&msgId=" + prefix;
  auto late_sends = std::make_shared<int64_t>(0);
  ps.make_body = [=, delay_ms = o.delay_ms](int64_t i, std::string* body) {
    int64_t delay = delay_ms;
    if (at_once) {
      delay = t0_ms - NowEpochMicros() / 1000;
      if (delay <= 0) ++*late_sends;
    }
    body->append(head);
    body->append(std::to_string(i));
    body->append("&delayMillis=");
    body->append(std::to_string(std::max<int64_t>(0, delay)));
  };

  Report r("push");
  r.Str("topic", topic);
  r.Str("receiver", url);
  r.Int("messages", o.count);
  r.Str("mode",
        at_once ? fmt::format("all due at once, {} ms after the start", lead_ms)
                : fmt::format("paced at {}/s, each due {} ms after its send", o.rate, o.delay_ms));
  r.Int("connections", o.connections);
  r.Int("receiver_threads", o.receiver_threads);
  CpuMeter cpu;
  const auto start = SteadyClock::now();
  CQ_RETURN_IF_ERROR(
      RunProducers(c, ps, o.connections, "push: sending", SteadyClock::time_point::max()).status());
  // The pushes: until every message came, or the grace after the last due time ran out.
  const int64_t last_due_ms = at_once ? t0_ms : NowEpochMicros() / 1000 + o.delay_ms;
  const int64_t deadline_ms = last_due_ms + o.grace_ms;
  Progress progress("push", c.progress);
  while (receiver->unique() < ps.ok && NowEpochMicros() / 1000 < deadline_ms) {
    progress.Update(receiver->unique(), o.count);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  progress.Finish();
  receiver->Stop();
  const PushReceiver::Figures f = receiver->figures();
  const double secs = duration<double>(SteadyClock::now() - start).count();

  r.Int("sent_ok", ps.ok);
  r.Int("send_failures", ps.failed);
  r.Int("pushed", f.unique);
  r.Int("missing", ps.ok - f.unique);
  r.Int("duplicates", f.duplicates);
  r.Int("receiver_connections", f.connections);
  r.Num("elapsed", secs, "s");
  if (f.unique > 1 && f.last_us > f.first_us) {
    // From the first push (at_once: or the due time, if later) to the last.
    const int64_t from_us = at_once ? std::max(f.first_us, t0_ms * 1000) : f.first_us;
    const double push_secs = (f.last_us - from_us) / 1e6;
    r.Num("push_seconds", push_secs, "s");
    r.Num("push_rate", push_secs > 0 ? f.unique / push_secs : 0, "pushes/s");
  }
  r.Latency("lateness", f.lateness);
  r.Latency("send_latency", ps.latency);
  if (at_once) r.Int("sends_after_due_time", *late_sends);
  if (*late_sends > 0) {
    r.Warn(fmt::format("{} messages were sent after their due time; raise --lead-ms", *late_sends));
  }
  if (ps.ok > f.unique) r.Warn(fmt::format("{} messages were never pushed", ps.ok - f.unique));
  if (f.duplicates > 0) r.Warn(fmt::format("{} messages were pushed twice", f.duplicates));
  if (f.foreign + f.bad > 0) {
    r.Warn(fmt::format("{} requests of other runs, {} unreadable", f.foreign, f.bad));
  }
  if (!ps.first_failure.empty()) r.Warn("first send failure: " + ps.first_failure);
  cpu.Report(r);
  return r;
}

}  // namespace chronoq::bench
