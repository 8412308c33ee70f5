// RecordingSink: a backend::EventSink for tests that adds up, per topic, what a backend reported.
// Thread-safe.
#pragma once

#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include "backend/events.h"

namespace chronoq::testutil {

class RecordingSink final : public backend::EventSink {
 public:
  void OnEvents(std::string_view topic, const backend::TopicEvents& e) override {
    std::lock_guard lock(mu_);
    backend::TopicEvents& t = topics_[std::string(topic)];
    t.triggered += e.triggered;
    t.ready_gap_sum_ms += e.ready_gap_sum_ms;
    t.ready_gap_max_ms = std::max(t.ready_gap_max_ms, e.ready_gap_max_ms);
    t.ack_timeouts += e.ack_timeouts;
    t.expired += e.expired;
    t.retries_exhausted += e.retries_exhausted;
    t.dead_lettered += e.dead_lettered;
  }
  // Everything reported for `topic` so far.
  backend::TopicEvents For(const std::string& topic) {
    std::lock_guard lock(mu_);
    auto it = topics_.find(topic);
    return it == topics_.end() ? backend::TopicEvents{} : it->second;
  }

 private:
  std::mutex mu_;
  std::map<std::string, backend::TopicEvents> topics_;
};

}  // namespace chronoq::testutil
