#include "base/scheduler.h"

namespace chronoq::base {

TimerId TimerQueue::Add(TimePoint when, UniqueFunction<void()> fn) {
  TimerId id = next_id_++;
  heap_.push(Item{when, id});
  fns_.emplace(id, std::move(fn));
  return id;
}

bool TimerQueue::Cancel(TimerId id) { return fns_.erase(id) > 0; }

void TimerQueue::DropCancelled() {
  while (!heap_.empty() && !fns_.contains(heap_.top().id)) heap_.pop();
}

TimePoint TimerQueue::NextDeadline() {
  DropCancelled();
  return heap_.empty() ? kTimeMax : heap_.top().when;
}

UniqueFunction<void()> TimerQueue::PopDue(TimePoint now) {
  DropCancelled();
  if (heap_.empty() || heap_.top().when > now) return nullptr;
  auto it = fns_.find(heap_.top().id);
  heap_.pop();
  UniqueFunction<void()> fn = std::move(it->second);
  fns_.erase(it);
  return fn;
}

ThreadScheduler::ThreadScheduler(const Clock* clock) : clock_(clock) {
  thread_ = std::thread([this] { Run(); });
}

ThreadScheduler::~ThreadScheduler() { Stop(); }

void ThreadScheduler::Stop() {
  {
    MutexLock lock(mu_);
    stop_ = true;
  }
  cv_.SignalAll();
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

TimerId ThreadScheduler::Schedule(TimePoint when, UniqueFunction<void()> fn) {
  TimerId id;
  bool wake;
  {
    MutexLock lock(mu_);
    wake = when < queue_.NextDeadline();
    id = queue_.Add(when, std::move(fn));
  }
  if (wake) cv_.Signal();
  return id;
}

bool ThreadScheduler::Cancel(TimerId id) {
  MutexLock lock(mu_);
  return queue_.Cancel(id);
}

void ThreadScheduler::Run() {
  MutexLock lock(mu_);
  while (!stop_) {
    UniqueFunction<void()> fn = queue_.PopDue(clock_->Now());
    if (fn) {
      lock.Unlock();
      fn();
      fn = nullptr;  // destroy captured state outside the lock
      lock.Lock();
      continue;
    }
    TimePoint next = queue_.NextDeadline();
    if (next == kTimeMax) {
      cv_.Wait(mu_);
    } else {
      cv_.WaitUntil(mu_, next);
    }
  }
}

TimerId ManualScheduler::Schedule(TimePoint when, UniqueFunction<void()> fn) {
  MutexLock lock(mu_);
  return queue_.Add(when, std::move(fn));
}

bool ManualScheduler::Cancel(TimerId id) {
  MutexLock lock(mu_);
  return queue_.Cancel(id);
}

size_t ManualScheduler::pending() {
  MutexLock lock(mu_);
  return queue_.size();
}

void ManualScheduler::AdvanceTo(TimePoint t) {
  MutexLock advance_lock(advance_mu_);
  for (;;) {
    UniqueFunction<void()> fn;
    {
      MutexLock lock(mu_);
      TimePoint next = queue_.NextDeadline();
      // An empty queue reports kTimeMax, which is not > t when t == kTimeMax.
      if (queue_.size() == 0 || next > t) break;
      if (next > clock_->Now()) clock_->Set(next);
      fn = queue_.PopDue(clock_->Now());
    }
    if (fn) fn();
  }
  if (t > clock_->Now()) clock_->Set(t);
}

}  // namespace chronoq::base
