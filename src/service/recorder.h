// Recorder: the one place where queue events are counted. Every event, whether a request caused
// it (a send, a delivery, an ack) or time did (a trigger, an ack timeout, an end of life, which
// backends report as backend::EventSink), is recorded here once, into both recorders:
// camellia's getMonitorData statistics (metrics::MonitorRecorder) and the Prometheus counters
// (metrics::QueueProbe). Protocol layers never count queue events themselves.
//
// Thread-safety: all methods are thread-safe (the recorders are).
#pragma once

#include <string_view>
#include <vector>

#include "backend/events.h"
#include "base/clock.h"
#include "base/status.h"
#include "core/message.h"
#include "metrics/monitor.h"
#include "metrics/queue_probe.h"

namespace chronoq::service {

class Recorder final : public backend::EventSink {
 public:
  // `max_topics`: topics with a label of their own in the Prometheus counters (the rest are
  // folded into topic="_other"). REQUIRES: `clock` outlives the recorder.
  Recorder(const base::Clock* clock, Millis monitor_interval, size_t max_topics);

  // A send answered with success (an idempotent repeat included).
  void Sent(std::string_view topic);
  // Messages of one topic handed out by a pull or a long poll: counts, and the lateness of each
  // (delivery time minus trigger time).
  void Delivered(const std::vector<core::Message>& list, bool long_poll);
  void Acked(std::string_view topic, bool ack);
  void Deleted(std::string_view topic);
  void Got(std::string_view topic);
  // A send or batch item the backend refused: counted when the topic was full
  // (kResourceExhausted); other refusals are not queue events.
  void Refused(std::string_view topic, const Status& s);
  // What a backend observed by itself (backend::EventSink).
  void OnEvents(std::string_view topic, const backend::TopicEvents& e) override;

  metrics::MonitorRecorder& monitor() { return monitor_; }
  metrics::QueueProbe& probe() { return probe_; }

 private:
  const base::Clock* const clock_;
  metrics::MonitorRecorder monitor_;
  metrics::QueueProbe probe_;
};

}  // namespace chronoq::service
