#include "service/recorder.h"

#include <algorithm>

namespace chronoq::service {

using metrics::MonitorCounter;
using metrics::QueueEvent;

Recorder::Recorder(const base::Clock* clock, Millis monitor_interval, size_t max_topics)
    : clock_(clock), monitor_(monitor_interval), probe_(max_topics) {}

void Recorder::Sent(std::string_view topic) {
  monitor_.Add(topic, MonitorCounter::kSendMsg, 1, clock_->Now());
  probe_.Add(topic, QueueEvent::kSend);
}

void Recorder::Delivered(const std::vector<core::Message>& list, bool long_poll) {
  if (list.empty()) return;
  const std::string& topic = list.front().record.topic;
  const TimePoint now = clock_->Now();
  int64_t sum = 0;
  int64_t max = 0;
  for (const core::Message& m : list) {
    const int64_t gap = std::max<int64_t>(0, (now - m.record.trigger_time).count());
    sum += gap;
    max = std::max(max, gap);
    probe_.ObserveLateness(long_poll, gap);
  }
  const auto n = static_cast<int64_t>(list.size());
  probe_.Add(topic, QueueEvent::kDelivery, static_cast<uint64_t>(n));
  monitor_.Add(topic, MonitorCounter::kPullMsg, n, now);
  monitor_.AddPullGap(topic, n, sum, max, now);
}

void Recorder::Acked(std::string_view topic, bool ack) {
  monitor_.Add(topic, MonitorCounter::kAckMsg, 1, clock_->Now());
  probe_.Add(topic, ack ? QueueEvent::kAck : QueueEvent::kNack);
}

void Recorder::Deleted(std::string_view topic) {
  monitor_.Add(topic, MonitorCounter::kDeleteMsg, 1, clock_->Now());
  probe_.Add(topic, QueueEvent::kDeletion);
}

void Recorder::Got(std::string_view topic) {
  monitor_.Add(topic, MonitorCounter::kGetMsg, 1, clock_->Now());
}

void Recorder::OnEvents(std::string_view topic, const backend::TopicEvents& e) {
  const TimePoint now = clock_->Now();
  monitor_.Add(topic, MonitorCounter::kTriggerMsgReady, e.triggered, now);
  monitor_.AddReadyGap(topic, e.triggered, e.ready_gap_sum_ms, e.ready_gap_max_ms, now);
  monitor_.Add(topic, MonitorCounter::kTriggerMsgTimeout, e.ack_timeouts, now);
  monitor_.Add(topic, MonitorCounter::kTriggerMsgEndLife, e.expired + e.retries_exhausted, now);
  probe_.Add(topic, QueueEvent::kAckTimeout, static_cast<uint64_t>(e.ack_timeouts));
  probe_.Add(topic, QueueEvent::kExpiration, static_cast<uint64_t>(e.expired));
  probe_.Add(topic, QueueEvent::kRetryExhaust, static_cast<uint64_t>(e.retries_exhausted));
  probe_.Add(topic, QueueEvent::kDeadLetter, static_cast<uint64_t>(e.dead_lettered));
}

void Recorder::Refused(std::string_view topic, const Status& s) {
  if (s.code() == Errc::kResourceExhausted) probe_.Add(topic, QueueEvent::kCapacityRefusal);
}

}  // namespace chronoq::service
