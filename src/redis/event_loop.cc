#include "redis/event_loop.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <map>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/check.h"
#include "base/mutex.h"

namespace chronoq::redis {

struct EventLoop::Impl {
  int epfd = -1;
  int wakefd = -1;
  std::thread thread;
  std::atomic<std::thread::id> loop_id;

  base::Mutex mu;
  std::vector<UniqueFunction<void()>> posted CQ_GUARDED_BY(mu);
  bool stopping CQ_GUARDED_BY(mu) = false;

  // Loop thread only (no lock: the analysis cannot express confinement to a thread, so the
  // methods that touch these check InLoop() in debug builds).
  struct Watched {
    FdHandler* handler;
    uint32_t events;
  };
  std::unordered_map<int, Watched> fds;
  std::multimap<Clock::time_point, TimerId> timer_order;
  std::unordered_map<TimerId, std::pair<Clock::time_point, UniqueFunction<void()>>> timers;
  TimerId next_timer = 1;

  void Wake() {
    uint64_t one = 1;
    ssize_t n = ::write(wakefd, &one, sizeof(one));
    (void)n;  // a full counter already wakes the loop
  }

  bool RunPosted() CQ_EXCLUDES(mu) {
    std::vector<UniqueFunction<void()>> batch;
    bool stop;
    {
      base::MutexLock lock(mu);
      batch.swap(posted);
      stop = stopping;
    }
    for (auto& fn : batch) fn();
    return stop && batch.empty();
  }

  void RunTimers() {
    const Clock::time_point now = Clock::now();
    while (!timer_order.empty() && timer_order.begin()->first <= now) {
      TimerId id = timer_order.begin()->second;
      timer_order.erase(timer_order.begin());
      auto it = timers.find(id);
      if (it == timers.end()) continue;
      UniqueFunction<void()> fn = std::move(it->second.second);
      timers.erase(it);
      fn();
    }
  }

  int WaitMillis() const {
    if (timer_order.empty()) return -1;
    auto until = timer_order.begin()->first - Clock::now();
    auto ms = std::chrono::ceil<std::chrono::milliseconds>(until).count();
    return ms < 0 ? 0 : static_cast<int>(std::min<int64_t>(ms, 60'000));
  }

  void Run() {
    loop_id.store(std::this_thread::get_id());
    epoll_event events[64];
    for (;;) {
      int n = ::epoll_wait(epfd, events, 64, WaitMillis());
      if (n < 0 && errno != EINTR) CQ_CHECK(false, "epoll_wait failed: {}", errno);
      for (int i = 0; i < n; ++i) {
        int fd = events[i].data.fd;
        if (fd == wakefd) {
          uint64_t v;
          ssize_t r = ::read(wakefd, &v, sizeof(v));
          (void)r;
          continue;
        }
        // Look the handler up again for each event: an earlier callback may have unwatched it.
        auto it = fds.find(fd);
        if (it == fds.end()) continue;
        uint32_t ev = events[i].events;
        if (ev & (EPOLLIN | EPOLLERR | EPOLLHUP)) {
          if ((it->second.events & EPOLLIN) != 0) it->second.handler->OnReadable();
          it = fds.find(fd);
          if (it == fds.end()) continue;
        }
        if (ev & (EPOLLOUT | EPOLLERR | EPOLLHUP)) {
          if ((it->second.events & EPOLLOUT) != 0) it->second.handler->OnWritable();
        }
      }
      RunTimers();
      if (RunPosted()) return;
    }
  }
};

EventLoop::EventLoop() : impl_(std::make_unique<Impl>()) {
  impl_->epfd = ::epoll_create1(EPOLL_CLOEXEC);
  CQ_CHECK(impl_->epfd >= 0, "epoll_create1 failed: {}", errno);
  impl_->wakefd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  CQ_CHECK(impl_->wakefd >= 0, "eventfd failed: {}", errno);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = impl_->wakefd;
  CQ_CHECK(::epoll_ctl(impl_->epfd, EPOLL_CTL_ADD, impl_->wakefd, &ev) == 0, "epoll_ctl failed");
  impl_->thread = std::thread([this] { impl_->Run(); });
}

EventLoop::~EventLoop() {
  {
    base::MutexLock lock(impl_->mu);
    impl_->stopping = true;
  }
  impl_->Wake();
  if (impl_->thread.joinable()) impl_->thread.join();
  ::close(impl_->wakefd);
  ::close(impl_->epfd);
}

void EventLoop::Post(UniqueFunction<void()> fn) {
  {
    base::MutexLock lock(impl_->mu);
    impl_->posted.push_back(std::move(fn));
  }
  impl_->Wake();
}

bool EventLoop::InLoop() const { return std::this_thread::get_id() == impl_->loop_id.load(); }

void EventLoop::Watch(int fd, bool read, bool write, FdHandler* h) {
  CQ_DCHECK(InLoop(), "EventLoop::Watch off the loop thread");
  uint32_t events = (read ? EPOLLIN : 0u) | (write ? EPOLLOUT : 0u);
  auto it = impl_->fds.find(fd);
  if (events == 0) {
    if (it != impl_->fds.end()) {
      ::epoll_ctl(impl_->epfd, EPOLL_CTL_DEL, fd, nullptr);
      impl_->fds.erase(it);
    }
    return;
  }
  epoll_event ev{};
  ev.events = events;
  ev.data.fd = fd;
  if (it == impl_->fds.end()) {
    CQ_CHECK(::epoll_ctl(impl_->epfd, EPOLL_CTL_ADD, fd, &ev) == 0, "epoll_ctl ADD failed: {}",
             errno);
    impl_->fds.emplace(fd, Impl::Watched{h, events});
  } else {
    CQ_CHECK(::epoll_ctl(impl_->epfd, EPOLL_CTL_MOD, fd, &ev) == 0, "epoll_ctl MOD failed: {}",
             errno);
    it->second = Impl::Watched{h, events};
  }
}

EventLoop::TimerId EventLoop::RunAt(Clock::time_point when, UniqueFunction<void()> fn) {
  CQ_DCHECK(InLoop(), "EventLoop::RunAt off the loop thread");
  TimerId id = impl_->next_timer++;
  impl_->timers.emplace(id, std::make_pair(when, std::move(fn)));
  impl_->timer_order.emplace(when, id);
  return id;
}

void EventLoop::Cancel(TimerId id) {
  CQ_DCHECK(InLoop(), "EventLoop::Cancel off the loop thread");
  impl_->timers.erase(id);
}

}  // namespace chronoq::redis
