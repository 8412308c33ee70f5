// Coalescer: group commit of one kind of request per topic (RedisBackend's sends and acks,
// docs/redis.md "Sizing"). At most `in_flight` scripts of a topic run at a time from this node;
// requests arriving meanwhile wait, and when a script answers they go together, merged into
// one script (whole requests in arrival order, up to `max_items` items and `max_bytes`, at
// least one request). One script for many requests: Redis pays the script's prelude, its
// configuration read and its statistics once, and the node sends one command and one
// publication. Private to src/redis/.
//
// Part: a request, with `size_t items() const` and `size_t bytes() const`.
// Thread-safety: all methods from any thread.
#pragma once

#include <cstddef>
#include <iterator>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "base/mutex.h"

namespace chronoq::redis {

template <typename Part>
class Coalescer {
 public:
  Coalescer(int in_flight, size_t max_items, size_t max_bytes)
      : in_flight_(in_flight), max_items_(max_items), max_bytes_(max_bytes) {}

  // The requests to run now: `p` alone when the topic has a free slot (taken), else nothing
  // (`p` waits).
  std::vector<Part> Admit(const std::string& topic, Part p) CQ_EXCLUDES(mu_) {
    std::vector<Part> run;
    base::MutexLock lock(mu_);
    Queue& q = queues_[topic];
    if (q.inflight >= in_flight_) {
      q.waiting.push_back(std::move(p));
      return run;
    }
    ++q.inflight;
    run.push_back(std::move(p));
    return run;
  }

  // A script of `topic` answered: the waiting requests to run next in its slot, merged (empty:
  // none waits, and the slot is free).
  std::vector<Part> Done(const std::string& topic) CQ_EXCLUDES(mu_) {
    std::vector<Part> run;
    base::MutexLock lock(mu_);
    auto it = queues_.find(topic);
    if (it == queues_.end()) return run;
    Queue& q = it->second;
    if (q.waiting.empty()) {
      if (--q.inflight == 0) queues_.erase(it);
      return run;
    }
    size_t n = 0, items = 0, bytes = 0;
    for (; n < q.waiting.size(); ++n) {
      const Part& p = q.waiting[n];
      if (n > 0 && (items + p.items() > max_items_ || bytes + p.bytes() > max_bytes_)) break;
      items += p.items();
      bytes += p.bytes();
    }
    const auto end = q.waiting.begin() + static_cast<std::ptrdiff_t>(n);
    run.assign(std::make_move_iterator(q.waiting.begin()), std::make_move_iterator(end));
    q.waiting.erase(q.waiting.begin(), end);
    return run;
  }

 private:
  struct Queue {
    int inflight = 0;           // scripts of the topic in flight from this node
    std::vector<Part> waiting;  // requests waiting for a slot, in arrival order
  };
  const int in_flight_;
  const size_t max_items_;
  const size_t max_bytes_;
  base::Mutex mu_;
  std::map<std::string, Queue> queues_ CQ_GUARDED_BY(mu_);
};

}  // namespace chronoq::redis
