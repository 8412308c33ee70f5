// EventLoop: one thread that runs the Redis clients' I/O: epoll over their sockets, timers on the
// steady clock, and tasks posted from other threads. hiredis contexts are not thread-safe, so
// everything that touches one runs here.
//
// Thread-safety: Post() may be called from any thread (also from the loop); the other methods
// only on the loop thread (InLoop()). Lifecycle: the constructor starts the thread; the
// destructor runs the tasks still posted, then stops it (timers that have not fired are dropped).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>

#include "base/unique_function.h"

namespace chronoq::redis {

class EventLoop {
 public:
  using Clock = std::chrono::steady_clock;
  using TimerId = uint64_t;

  // Receives the readiness of a watched file descriptor.
  class FdHandler {
   public:
    virtual ~FdHandler() = default;
    virtual void OnReadable() = 0;
    virtual void OnWritable() = 0;
  };

  EventLoop();
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  void Post(UniqueFunction<void()> fn);
  bool InLoop() const;

  // Sets which events of `fd` reach `h` (both false: stop watching).
  void Watch(int fd, bool read, bool write, FdHandler* h);
  TimerId RunAt(Clock::time_point when, UniqueFunction<void()> fn);
  void Cancel(TimerId id);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace chronoq::redis
