// Scheduler: runs callbacks at absolute times of a Clock. Everything in chronoq that must happen
// at a time (trigger times, ack deadlines, expiry, long-poll timeouts) goes through one, so tests
// drive time explicitly (ManualScheduler) and production sleeps exactly until the next deadline
// (ThreadScheduler); nothing polls on a fixed period.
//
// Thread-safety: Schedule and Cancel may be called from any thread, also from inside a callback.
// Callbacks must not block for long: they delay every later timer.
#pragma once

#include <cstdint>
#include <queue>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/clock.h"
#include "base/mutex.h"
#include "base/thread_annotations.h"
#include "base/unique_function.h"

namespace chronoq::base {

using TimerId = uint64_t;

class Scheduler {
 public:
  virtual ~Scheduler() = default;
  // Runs `fn` once, at or soon after `when` (at once when `when` is past). Returns an id for
  // Cancel. Callbacks due at the same time run in the order they were scheduled.
  virtual TimerId Schedule(TimePoint when, UniqueFunction<void()> fn) = 0;
  // Prevents a scheduled callback from running. Returns false when it already ran, is running,
  // or was cancelled.
  virtual bool Cancel(TimerId id) = 0;
};

// The timer queue both implementations share: a min-heap of (when, id) with lazy cancellation.
class TimerQueue {
 public:
  TimerId Add(TimePoint when, UniqueFunction<void()> fn);
  bool Cancel(TimerId id);
  // The earliest live deadline, or kTimeMax when empty.
  TimePoint NextDeadline();
  // Removes and returns the earliest callback due at or before `now`; empty function if none.
  UniqueFunction<void()> PopDue(TimePoint now);
  size_t size() const { return fns_.size(); }

 private:
  struct Item {
    TimePoint when;
    TimerId id;
    bool operator>(const Item& o) const { return when != o.when ? when > o.when : id > o.id; }
  };
  void DropCancelled();
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> heap_;
  std::unordered_map<TimerId, UniqueFunction<void()>> fns_;
  TimerId next_id_ = 1;
};

// Runs callbacks on its own thread at real time (the Clock given must be a real-time clock).
class ThreadScheduler final : public Scheduler {
 public:
  explicit ThreadScheduler(const Clock* clock);  // clock must outlive this
  ~ThreadScheduler() override;                   // stops the thread; pending callbacks never run
  TimerId Schedule(TimePoint when, UniqueFunction<void()> fn) override CQ_EXCLUDES(mu_);
  bool Cancel(TimerId id) override CQ_EXCLUDES(mu_);
  // Stops the thread and drops pending callbacks. Idempotent.
  void Stop() CQ_EXCLUDES(mu_);

 private:
  void Run() CQ_EXCLUDES(mu_);
  const Clock* clock_;
  Mutex mu_;
  CondVar cv_;
  TimerQueue queue_ CQ_GUARDED_BY(mu_);
  bool stop_ CQ_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

// Runs callbacks only when told to, on the caller's thread. Owns nothing but shares the
// ManualClock it advances.
class ManualScheduler final : public Scheduler {
 public:
  explicit ManualScheduler(ManualClock* clock) : clock_(clock) {}
  TimerId Schedule(TimePoint when, UniqueFunction<void()> fn) override CQ_EXCLUDES(mu_);
  bool Cancel(TimerId id) override CQ_EXCLUDES(mu_);

  // Moves the clock to `t`, running every callback due on the way in time order; the clock shows
  // each callback's due time while it runs. Callbacks scheduled meanwhile run too when due.
  void AdvanceTo(TimePoint t) CQ_EXCLUDES(advance_mu_, mu_);
  void Advance(Millis d) { AdvanceTo(SaturatingAdd(clock_->Now(), d)); }
  // Runs callbacks already due at the current time.
  void RunDue() { AdvanceTo(clock_->Now()); }
  size_t pending() CQ_EXCLUDES(mu_);

 private:
  ManualClock* clock_;
  Mutex advance_mu_;  // one AdvanceTo at a time; taken before mu_
  Mutex mu_;
  TimerQueue queue_ CQ_GUARDED_BY(mu_);
};

}  // namespace chronoq::base
