// QueueProbe: the queue's Prometheus figures (sends, deliveries, acks, nacks, deletions, trigger
// lateness, ack timeouts, expirations, retry exhaustions, dead letters, capacity refusals), bumped
// only by the service's Recorder (service/recorder.h), and rendered with the per-topic depth read
// from the backend at scrape time.
//
// Topic cardinality is bounded: the first `max_topics` topics seen (by an event or a scrape) get
// their own `topic` label value until the process restarts; every later topic is counted under
// topic="_other" (kOtherTopic). With the Redis backend, counts are what this node did or observed,
// not totals over the nodes sharing Redis; sum them over the nodes.
//
// Thread-safety: all methods are thread-safe. Add() takes one of 16 short per-shard locks (chosen
// by topic hash) to find the topic's counters, then bumps an atomic; a thread adding to the same
// topic as its last Add on this probe skips the lookup and the lock (a per-thread memo: a label's
// counters are never freed while the probe lives).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/mutex.h"
#include "base/thread_annotations.h"
#include "metrics/exposition.h"
#include "metrics/instruments.h"

namespace chronoq::metrics {

enum class QueueEvent : int {
  kSend,             // sendMsg accepted (idempotent repeats included)
  kDelivery,         // a message handed out by pullMsg or longPollingMsg
  kAck,              // ackMsg ack=true succeeded
  kNack,             // ackMsg ack=false succeeded
  kAckTimeout,       // a delivery's ack deadline passed
  kExpiration,       // ended by ttl, never delivered (status 5)
  kRetryExhaust,     // ended after its last delivery (status 6)
  kDeletion,         // deleteMsg succeeded
  kDeadLetter,       // an ended message (status 5 or 6) written to the topic's dead-letter topic
  kCapacityRefusal,  // a send or a batch item refused because the topic was full (code 429)
};
inline constexpr int kQueueEventCount = 10;

inline constexpr std::string_view kOtherTopic = "_other";

// The counters of one label (a topic with a label of its own, or kOtherTopic), as read now.
struct TopicCounts {
  std::string topic;
  std::array<uint64_t, kQueueEventCount> counts{};  // indexed by QueueEvent
};

// Depth of one topic now (a backend's TopicInfo).
struct TopicDepth {
  std::string topic;
  int64_t waiting = 0;
  int64_t ready = 0;
  int64_t consuming = 0;
};

class QueueProbe {
 public:
  explicit QueueProbe(size_t max_topics);
  QueueProbe(const QueueProbe&) = delete;
  QueueProbe& operator=(const QueueProbe&) = delete;

  void Add(std::string_view topic, QueueEvent e, uint64_t n = 1);
  // Delivery time minus trigger time of a delivered message; long_poll when a parked
  // longPollingMsg got it (it was handed out as soon as it became deliverable).
  void ObserveLateness(bool long_poll, int64_t millis);

  // Renders the counters, the lateness histogram and the depth gauges of `depths` (folded the
  // same way as the counters).
  void Render(TextWriter& w, std::span<const TopicDepth> depths);

  // Every label's counters now, kOtherTopic last (the dashboard's history samples them; their
  // sum over the labels is the node's total).
  std::vector<TopicCounts> ReadCounts();
  // Both lateness histograms (pull and long poll) added up.
  HistogramData ReadLateness() const;

  // The label value `topic` is counted under (registers it while there is room).
  std::string_view LabelFor(std::string_view topic);

 private:
  struct Cells {
    std::string label;
    std::array<Counter, kQueueEventCount> counts;
  };
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  struct Shard {
    base::Mutex mu;
    std::unordered_map<std::string, std::unique_ptr<Cells>, Hash, std::equal_to<>> topics
        CQ_GUARDED_BY(mu);
  };
  static constexpr size_t kShards = 16;

  Cells& CellsFor(std::string_view topic);
  Cells& LookUp(std::string_view topic);

  const uint64_t id_;  // this probe among all that ever lived (the per-thread memo's key)
  const size_t max_topics_;
  std::atomic<size_t> named_{0};
  std::array<Shard, kShards> shards_;
  Cells other_;
  DurationHistogram lateness_pull_;
  DurationHistogram lateness_long_poll_;
};

}  // namespace chronoq::metrics
