// EventSink: what a backend tells the layer above about changes nobody asked for in that
// request: trigger times reached, ack deadlines passed, messages ended by their ttl or by running
// out of deliveries. The service (service/events.h) is the one sink; it feeds every recorder
// (camellia's getMonitorData statistics and the Prometheus counters), so each event is counted in
// one place whatever the backend.
//
// Thread-safety: OnEvents is called on any thread, without backend locks held; it must be cheap
// and must not call back into the backend.
#pragma once

#include <cstdint>
#include <string_view>

namespace chronoq::backend {

// What one step of a backend observed in one topic. Counts only grow; zero means "none".
struct TopicEvents {
  int64_t triggered = 0;         // waiting messages that reached their trigger time
  int64_t ready_gap_sum_ms = 0;  // over those: when the backend saw it, minus the trigger time
  int64_t ready_gap_max_ms = 0;
  int64_t ack_timeouts = 0;       // deliveries whose ack deadline passed (consumable again)
  int64_t expired = 0;            // ended as status 5: the ttl passed, never delivered
  int64_t retries_exhausted = 0;  // ended as status 6 (by time, or by the nack of the last try)
  int64_t dead_lettered = 0;      // of those, sent to the topic's dead-letter topic

  bool empty() const {
    return triggered == 0 && ack_timeouts == 0 && expired == 0 && retries_exhausted == 0 &&
           dead_lettered == 0;
  }
};

class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void OnEvents(std::string_view topic, const TopicEvents& events) = 0;
};

}  // namespace chronoq::backend
