#include "metrics/queue_probe.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <vector>

namespace chronoq::metrics {
namespace {

struct EventFamily {
  std::string_view name;
  std::string_view help;
};

// Indexed by QueueEvent.
constexpr std::array<EventFamily, kQueueEventCount> kEventFamilies = {{
    {"cq_queue_sends_total", "Messages accepted by sendMsg (idempotent repeats included)"},
    {"cq_queue_deliveries_total", "Messages handed out by pullMsg and longPollingMsg"},
    {"cq_queue_acks_total", "Successful ackMsg with ack=true"},
    {"cq_queue_nacks_total", "Successful ackMsg with ack=false"},
    {"cq_queue_ack_timeouts_total", "Deliveries whose ack deadline passed without an ack"},
    {"cq_queue_expirations_total", "Messages ended by their ttl without a delivery (status 5)"},
    {"cq_queue_retry_exhaustions_total",
     "Messages ended after their last delivery: nacked, ack timeout or ttl (status 6)"},
    {"cq_queue_deletions_total", "Successful deleteMsg"},
    {"cq_queue_dead_letters_total",
     "Messages of the topic that ended (status 5 or 6) and were written to its dead-letter topic"},
    {"cq_queue_capacity_refusals_total",
     "Sends and sendMsgBatch items refused because the topic held capacity messages (code 429)"},
}};

std::atomic<uint64_t> next_probe_id{1};

}  // namespace

QueueProbe::QueueProbe(size_t max_topics)
    : id_(next_probe_id.fetch_add(1, std::memory_order_relaxed)),
      max_topics_(max_topics),
      lateness_pull_(LatenessBuckets()),
      lateness_long_poll_(LatenessBuckets()) {
  other_.label = std::string(kOtherTopic);
}

QueueProbe::Cells& QueueProbe::CellsFor(std::string_view topic) {
  // The last topic this thread counted on this probe: a thread's sends mostly repeat a topic
  // (a connection's producer). Keyed by the probe's id, never reused, so that a memo of a probe
  // that is gone matches no other.
  struct Memo {
    uint64_t probe = 0;
    std::string topic;
    Cells* cells = nullptr;
  };
  thread_local Memo memo;
  if (memo.probe == id_ && memo.topic == topic) return *memo.cells;
  Cells& cells = LookUp(topic);
  memo.probe = id_;
  memo.topic.assign(topic);
  memo.cells = &cells;
  return cells;
}

QueueProbe::Cells& QueueProbe::LookUp(std::string_view topic) {
  Shard& shard = shards_[std::hash<std::string_view>{}(topic) % kShards];
  base::MutexLock lock(shard.mu);
  auto it = shard.topics.find(topic);
  if (it != shard.topics.end()) return *it->second;
  // Reserve a name slot; give it back when the cap is reached.
  if (named_.fetch_add(1, std::memory_order_relaxed) >= max_topics_) {
    named_.fetch_sub(1, std::memory_order_relaxed);
    return other_;
  }
  auto cells = std::make_unique<Cells>();
  cells->label = std::string(topic);
  Cells& out = *cells;
  shard.topics.emplace(std::string(topic), std::move(cells));
  return out;
}

void QueueProbe::Add(std::string_view topic, QueueEvent e, uint64_t n) {
  if (n == 0) return;
  CellsFor(topic).counts[static_cast<int>(e)].Add(n);
}

void QueueProbe::ObserveLateness(bool long_poll, int64_t millis) {
  (long_poll ? lateness_long_poll_ : lateness_pull_).ObserveMillis(millis);
}

std::vector<TopicCounts> QueueProbe::ReadCounts() {
  std::vector<TopicCounts> out;
  auto read = [&out](const Cells& c) {
    TopicCounts& t = out.emplace_back();
    t.topic = c.label;
    for (int e = 0; e < kQueueEventCount; ++e) t.counts[e] = c.counts[e].value();
  };
  for (Shard& shard : shards_) {
    base::MutexLock lock(shard.mu);
    for (const auto& [name, cells] : shard.topics) read(*cells);
  }
  read(other_);
  return out;
}

HistogramData QueueProbe::ReadLateness() const {
  HistogramData sum = lateness_pull_.Read();
  const HistogramData lp = lateness_long_poll_.Read();
  for (size_t i = 0; i < sum.counts.size(); ++i) sum.counts[i] += lp.counts[i];
  sum.count += lp.count;
  sum.sum_seconds += lp.sum_seconds;
  return sum;
}

std::string_view QueueProbe::LabelFor(std::string_view topic) { return CellsFor(topic).label; }

void QueueProbe::Render(TextWriter& w, std::span<const TopicDepth> depths) {
  // Depth first: it may name topics seen only now.
  std::map<std::string_view, std::array<int64_t, 3>> depth;
  for (const TopicDepth& d : depths) {
    std::array<int64_t, 3>& sum = depth[LabelFor(d.topic)];
    sum[0] += d.waiting;
    sum[1] += d.ready;
    sum[2] += d.consuming;
  }
  w.Family("cq_queue_messages",
           "In-life messages per topic and state (waiting, ready, consuming), read at scrape time",
           MetricType::kGauge);
  static constexpr std::array<std::string_view, 3> kStates = {"waiting", "ready", "consuming"};
  for (const auto& [label, counts] : depth) {
    for (size_t i = 0; i < kStates.size(); ++i) {
      w.Sample("cq_queue_messages", {{"topic", label}, {"state", kStates[i]}},
               static_cast<double>(counts[i]));
    }
  }

  std::vector<const Cells*> all;
  for (Shard& shard : shards_) {
    base::MutexLock lock(shard.mu);
    for (const auto& [name, cells] : shard.topics) all.push_back(cells.get());
  }
  std::sort(all.begin(), all.end(),
            [](const Cells* a, const Cells* b) { return a->label < b->label; });
  all.push_back(&other_);
  for (int e = 0; e < kQueueEventCount; ++e) {
    const EventFamily& f = kEventFamilies[e];
    w.Family(f.name, f.help, MetricType::kCounter);
    for (const Cells* c : all) {
      w.Sample(f.name, {{"topic", c->label}}, static_cast<double>(c->counts[e].value()));
    }
  }

  w.Family("cq_queue_trigger_lateness_seconds",
           "Delivery time minus trigger time of delivered messages; via=long_poll: handed to a "
           "parked long poll as soon as deliverable (the server's own lateness)",
           MetricType::kHistogram);
  const Label pull[] = {{"via", "pull"}};
  const Label long_poll[] = {{"via", "long_poll"}};
  w.Histogram("cq_queue_trigger_lateness_seconds", pull, lateness_pull_.Read());
  w.Histogram("cq_queue_trigger_lateness_seconds", long_poll, lateness_long_poll_.Read());
}

}  // namespace chronoq::metrics
