// FarTimes: the trigger times of a topic's far waiting messages (topic.h), as a multiset of
// milliseconds in about four bytes per message whatever their spread.
//
// Why a multiset and not a count per distinct millisecond: at a few thousand sends per second
// over a few topics, or with trigger times spread over days, almost every far message has a
// millisecond of its own, so a map from millisecond to count costs a key, a count and the tree's
// slack per message (24 bytes and more; docs/benchmarks.md, "Far-future memory"). Here the times
// live in runs: sorted vectors of 32-bit offsets from a run's base time, at most kRunCap entries
// each (an equal-time run may exceed it: it cannot be split), the runs in a map by base time.
// A message costs its 4-byte offset plus its share of its run (a map node and a vector, under a
// byte per message when runs are full); every answer stays exact to the millisecond, so the
// nine buckets of getTopicInfo never need the store.
//
// Runs partition the time line: the run with base b holds times in [b, next base) with
// t - b < 2^32 ms (49.7 days; a time further from the run before it starts a run of its own).
// A run that grows past kRunCap splits: after the inserted time when the insert continued the
// run (ascending sends fill runs to the cap), else in halves. A run that shrinks below a quarter
// merges into a neighbour when they fit together.
//
// Thread-safety: none; the topic's shard lock guards it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include "base/time.h"

namespace chronoq::engine {

class FarTimes {
 public:
  static constexpr size_t kRunCap = 512;

  // Adds n > 0 messages triggering at t.
  void Add(TimePoint t, int64_t n);
  // Removes n > 0 messages at t; returns false (and removes nothing) when fewer are there.
  bool Remove(TimePoint t, int64_t n);

  int64_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // The earliest time, or kTimeMax.
  TimePoint First() const;
  // The latest time, or kTimeMin.
  TimePoint Last() const;
  // The earliest time strictly after t, or kTimeMax.
  TimePoint FirstAfter(TimePoint t) const;
  // How many messages trigger in [lo, hi).
  int64_t CountIn(TimePoint lo, TimePoint hi) const;
  // Calls fn(time, count) for each distinct time in [lo, hi), ascending.
  void ForEach(TimePoint lo, TimePoint hi, const std::function<void(TimePoint, int64_t)>& fn) const;

  // Runs held (for tests and memory accounting).
  size_t runs() const { return runs_.size(); }
  // Heap bytes of the offsets (vector capacities), without the map's nodes.
  size_t offset_bytes() const;

 private:
  using Runs = std::map<int64_t, std::vector<uint32_t>>;
  // The run whose range holds t, or end() when t lies before every run.
  Runs::iterator RunOf(int64_t t);
  Runs::const_iterator RunOf(int64_t t) const;
  // Splits a run past kRunCap (again until each part fits or is one time): before the appended
  // time after an append, else in halves.
  void SplitIfNeeded(Runs::iterator run, bool appended);
  // Merges a run below a quarter of kRunCap into a neighbour when they fit together.
  void MergeIfSparse(Runs::iterator run);
  // fn(base, offsets, from, to) for each run with offsets [from, to) in [lo, hi), ascending.
  void ForEachRun(
      TimePoint lo, TimePoint hi,
      const std::function<void(int64_t, const std::vector<uint32_t>&, size_t, size_t)>& fn) const;

  Runs runs_;
  int64_t size_ = 0;
};

}  // namespace chronoq::engine
