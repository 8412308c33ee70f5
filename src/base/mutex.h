// Mutex, AdaptiveMutex, MutexLock, CondVar: the locks of chronoq, declared as capabilities so
// that clang's -Wthread-safety checks every CQ_GUARDED_BY / CQ_REQUIRES written against them
// (base/thread_annotations.h; the check runs in `make check`, docs/testing.md). std::mutex and
// std::lock_guard carry no annotations in libstdc++, so the analysis cannot see them: code that
// guards data takes these instead.
//
//   Mutex          a plain pthread mutex, what std::mutex is on Linux.
//   AdaptiveMutex  spins briefly before sleeping (glibc's adaptive mutex). For short critical
//                  sections contended by a few threads, such as the engine's shard locks, it
//                  avoids most futex sleeps and wake-ups, which cost a context switch each.
//   MutexLock      holds a mutex for its scope (it may let go and take it again within it).
//   CondVar        a condition variable waited on with a Mutex held.
//
// Usage:
//   base::Mutex mu_;
//   int count_ CQ_GUARDED_BY(mu_) = 0;
//   void Bump() CQ_EXCLUDES(mu_) { base::MutexLock lock(mu_); ++count_; }
//
// A predicate wait is a loop, so that the analysis sees the guarded reads under the lock (a
// lambda is analysed as a function of its own, without the caller's locks):
//   while (queue_.empty() && !stop_) cv_.Wait(mu_);
//
// Thread-safety: Mutex and CondVar are thread-safe; a MutexLock belongs to the thread that made
// it. Not recursive, not copyable, not movable.
#pragma once

#include <pthread.h>
#include <time.h>

#include <chrono>
#include <type_traits>

#include "base/thread_annotations.h"

namespace chronoq::base {

class CQ_CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  ~Mutex() { pthread_mutex_destroy(&mu_); }
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() CQ_ACQUIRE() { pthread_mutex_lock(&mu_); }
  void Unlock() CQ_RELEASE() { pthread_mutex_unlock(&mu_); }
  bool TryLock() CQ_TRY_ACQUIRE(true) { return pthread_mutex_trylock(&mu_) == 0; }
  // Tells the analysis that the calling thread holds this mutex, where it cannot follow (a lock
  // taken for a set of objects in a loop). Checks nothing at run time.
  void AssertHeld() const CQ_ASSERT_CAPABILITY(this) {}

 protected:
  explicit Mutex(int type) {
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, type);
    pthread_mutex_init(&mu_, &attr);
    pthread_mutexattr_destroy(&attr);
  }

 private:
  friend class CondVar;
  pthread_mutex_t mu_ = PTHREAD_MUTEX_INITIALIZER;
};

class CQ_CAPABILITY("mutex") AdaptiveMutex final : public Mutex {
 public:
  AdaptiveMutex() : Mutex(PTHREAD_MUTEX_ADAPTIVE_NP) {}
};

class CQ_SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) CQ_ACQUIRE(mu) : mu_(mu) { mu_.Lock(); }
  ~MutexLock() CQ_RELEASE() {
    if (held_) mu_.Unlock();
  }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  // Lets go of the mutex within the scope (to run a callback, say); Lock() takes it again.
  void Unlock() CQ_RELEASE() {
    mu_.Unlock();
    held_ = false;
  }
  void Lock() CQ_ACQUIRE() {
    mu_.Lock();
    held_ = true;
  }

 private:
  Mutex& mu_;  // outlives this (the caller's)
  bool held_ = true;
};

class CondVar {
 public:
  CondVar() = default;
  ~CondVar() { pthread_cond_destroy(&cv_); }
  CondVar(const CondVar&) = delete;
  CondVar& operator=(const CondVar&) = delete;

  // Releases `mu`, sleeps until signalled (or spuriously), takes `mu` again: wait in a loop.
  void Wait(Mutex& mu) CQ_REQUIRES(mu) { pthread_cond_wait(&cv_, &mu.mu_); }
  // Like Wait, but returns false once `deadline` has passed (on the system or steady clock).
  template <typename Clock, typename Duration>
  bool WaitUntil(Mutex& mu, std::chrono::time_point<Clock, Duration> deadline) CQ_REQUIRES(mu) {
    static_assert(std::is_same_v<Clock, std::chrono::system_clock> ||
                      std::is_same_v<Clock, std::chrono::steady_clock>,
                  "CondVar waits on the system or the steady clock");
    // The deadline's own duration is split, never converted to nanoseconds as a whole, so a
    // far millisecond deadline cannot overflow.
    const auto since = deadline.time_since_epoch();
    const auto secs = std::chrono::floor<std::chrono::seconds>(since);
    timespec ts{};
    ts.tv_sec = static_cast<time_t>(secs.count());
    ts.tv_nsec = static_cast<long>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(since - secs).count());
    const clockid_t clock =
        std::is_same_v<Clock, std::chrono::system_clock> ? CLOCK_REALTIME : CLOCK_MONOTONIC;
    return pthread_cond_clockwait(&cv_, &mu.mu_, clock, &ts) == 0;
  }
  template <typename Rep, typename Period>
  bool WaitFor(Mutex& mu, std::chrono::duration<Rep, Period> d) CQ_REQUIRES(mu) {
    return WaitUntil(mu, std::chrono::steady_clock::now() + d);
  }

  void Signal() { pthread_cond_signal(&cv_); }
  void SignalAll() { pthread_cond_broadcast(&cv_); }

 private:
  pthread_cond_t cv_ = PTHREAD_COND_INITIALIZER;
};

}  // namespace chronoq::base
