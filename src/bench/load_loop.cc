#include "bench/load_loop.h"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <queue>

namespace chronoq::bench {

struct LoadLoop::Conn {
  int fd = -1;
  std::unique_ptr<tls::ClientSession> tls;  // https only
  Session* session = nullptr;
  std::string out;
  size_t out_pos = 0;
  std::string in;
  bool in_flight = false;
  bool done = false;
  bool write_interest = false;
  SteadyClock::time_point sent_at{};
  SteadyClock::time_point wake{};  // when waiting
  bool waiting = false;
  uint64_t wait_gen = 0;  // invalidates stale entries of the wake heap
};

LoadLoop::LoadLoop(client::Endpoint ep) : ep_(std::move(ep)) {
  epfd_ = ::epoll_create1(EPOLL_CLOEXEC);
}

LoadLoop::~LoadLoop() {
  for (auto& c : conns_) {
    if (c->fd >= 0) ::close(c->fd);
  }
  if (epfd_ >= 0) ::close(epfd_);
}

Status LoadLoop::Connect(const std::vector<Session*>& sessions) {
  for (Session* s : sessions) {
    const client::Endpoint* target = s->Target();
    auto conn = client::HttpConnection::Connect(target != nullptr ? *target : ep_);
    if (!conn.has_value()) return conn.error();
    auto c = std::make_unique<Conn>();
    c->tls = conn->ReleaseTls();
    c->fd = conn->ReleaseFd();  // the loop owns the socket (and its TLS session) from here
    c->session = s;
    CQ_RETURN_IF_ERROR(AddToEpoll(epfd_, c->fd, c.get()));
    conns_.push_back(std::move(c));
    ++active_;
  }
  return Status::Ok();
}

Status AddToEpoll(int epfd, int fd, void* ptr) {
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLRDHUP;
  ev.data.ptr = ptr;
  if (fd < 0 || ::epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
    return Unavailable(std::string("epoll_ctl: ") + std::strerror(errno));
  }
  return Status::Ok();
}

void SetEpollInterest(int epfd, int fd, void* ptr, bool write) {
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLRDHUP | (write ? static_cast<uint32_t>(EPOLLOUT) : 0u);
  ev.data.ptr = ptr;
  ::epoll_ctl(epfd, EPOLL_CTL_MOD, fd, &ev);
}

int SendPending(int fd, std::string* out, size_t* pos) {
  while (*pos < out->size()) {
    ssize_t n = ::send(fd, out->data() + *pos, out->size() - *pos, MSG_NOSIGNAL);
    if (n > 0) {
      *pos += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) ? 0 : -1;
  }
  out->clear();
  *pos = 0;
  return 1;
}

int WritePending(int fd, tls::ClientSession* tls, std::string* out, size_t* pos, std::string* why) {
  if (tls == nullptr) {
    const int sent = SendPending(fd, out, pos);
    if (sent < 0) *why = std::string("send: ") + std::strerror(errno);
    return sent;
  }
  while (*pos < out->size()) {
    const long n = tls->Write(out->data() + *pos, out->size() - *pos);
    if (n > 0) {
      *pos += static_cast<size_t>(n);
      continue;
    }
    if (n == tls::ClientSession::kWantRead || n == tls::ClientSession::kWantWrite) return 0;
    *why = n == 0 ? "the server closed the connection" : tls->error();
    return -1;
  }
  out->clear();
  *pos = 0;
  return 1;
}

void LoadLoop::Fail(Conn& c, std::string_view what) {
  if (c.done) return;
  ++counters_.connection_errors;
  c.done = true;
  --active_;
  ::epoll_ctl(epfd_, EPOLL_CTL_DEL, c.fd, nullptr);
  c.session->OnError(what);
}

void LoadLoop::Flush(Conn& c) {
  std::string why;
  if (FlushPending(epfd_, c, &why) < 0) Fail(c, why);
}

void LoadLoop::Kick(Conn& c, SteadyClock::time_point now) {
  if (c.done || c.in_flight) return;
  c.waiting = false;
  Next next = c.session->NextRequest(&c.out);
  switch (next.kind) {
    case Next::kSend:
      c.in_flight = true;
      c.sent_at = SteadyClock::now();
      Flush(c);
      return;
    case Next::kWait:
      c.waiting = true;
      c.wake = std::max(next.wake, now);
      waits_.push(Wait{c.wake, ++c.wait_gen, &c});
      return;
    case Next::kDone:
      c.done = true;
      --active_;
      return;
  }
}

void LoadLoop::Poke(Session* s) {
  for (auto& c : conns_) {
    if (c->session == s && c->waiting) {
      c->wake = SteadyClock::time_point::min();
      waits_.push(Wait{c->wake, ++c->wait_gen, c.get()});
    }
  }
}

void LoadLoop::OnReadable(Conn& c) {
  char buf[64 * 1024];
  std::string why;
  const int read = ReadAvailable(
      c.fd, c.tls.get(), buf, sizeof(buf),
      [&](size_t n) {
        c.in.append(buf, n);
        return true;
      },
      &why);
  if (read != 1) {
    Fail(c, read == 0 ? std::string("the server closed the connection") : why);
    return;
  }
  // One answer at a time, framed by the session's protocol.
  for (;;) {
    int status = 0;
    std::string_view body;
    size_t total = c.session->ParseAnswer(c.in, &status, &body);
    if (total == 0) return;
    auto latency =
        std::chrono::duration_cast<std::chrono::microseconds>(SteadyClock::now() - c.sent_at);
    c.in_flight = false;
    ++counters_.responses;
    c.session->OnResponse(status, body, latency);
    c.in.erase(0, total);
    if (c.done) return;
    Kick(c, SteadyClock::now());
    if (!c.in_flight) return;
  }
}

size_t ParseHttpAnswer(std::string_view in, int* status, std::string_view* body) {
  size_t head_end = in.find("\r\n\r\n");
  if (head_end == std::string_view::npos) return 0;
  std::string_view head = in.substr(0, head_end);
  *status = 0;
  if (head.size() > 12) std::from_chars(head.data() + 9, head.data() + 12, *status);
  size_t cl = head.find("Content-Length: ");
  size_t len = 0;
  if (cl != std::string_view::npos) {
    const char* p = head.data() + cl + 16;
    std::from_chars(p, head.data() + head.size(), len);
  }
  size_t total = head_end + 4 + len;
  if (in.size() < total) return 0;
  *body = in.substr(head_end + 4, len);
  return total;
}

size_t Session::ParseAnswer(std::string_view in, int* status, std::string_view* body) {
  return ParseHttpAnswer(in, status, body);
}

int EpollWait(int epfd, std::vector<epoll_event>& events, int64_t timeout_us) {
  static std::atomic<bool> no_pwait2{false};
  if (!no_pwait2.load(std::memory_order_relaxed)) {
    timespec ts{static_cast<time_t>(timeout_us / 1'000'000),
                static_cast<long>(timeout_us % 1'000'000 * 1000)};
    int n = ::epoll_pwait2(epfd, events.data(), static_cast<int>(events.size()), &ts, nullptr);
    if (n >= 0 || errno != ENOSYS) return n;
    no_pwait2.store(true, std::memory_order_relaxed);
  }
  return ::epoll_wait(epfd, events.data(), static_cast<int>(events.size()),
                      static_cast<int>((timeout_us + 999) / 1000));
}

int64_t MicrosUntil(SteadyClock::time_point until) {
  return std::clamp<int64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(until - SteadyClock::now()).count(), 0,
      1'000'000);
}

void LoadLoop::Run(SteadyClock::time_point deadline, const std::function<bool()>& stop,
                   const std::function<void()>& tick, std::chrono::milliseconds tick_every) {
  auto now = SteadyClock::now();
  for (auto& c : conns_) Kick(*c, now);
  auto next_tick = now + tick_every;
  std::vector<epoll_event> events(1024);
  while (active_ > 0) {
    now = SteadyClock::now();
    if (now >= deadline || (stop && stop())) break;
    if (now >= next_tick) {
      if (tick) tick();
      next_tick = now + tick_every;
    }
    // Wake sessions whose wait is over; find the nearest future wake.
    while (!waits_.empty()) {
      const Wait& w = waits_.top();
      Conn* c = w.conn;
      if (w.gen != c->wait_gen || !c->waiting || c->done) {
        waits_.pop();
        continue;
      }
      if (w.at > now) break;
      waits_.pop();
      Kick(*c, now);
    }
    auto nearest = std::min(next_tick, deadline);
    if (!waits_.empty()) nearest = std::min(nearest, waits_.top().at);
    WaitAndDispatch<Conn>(
        epfd_, events, MicrosUntil(nearest), [](Conn& c) { return c.done; },
        [this](Conn& c) { Flush(c); }, [this](Conn& c) { OnReadable(c); });
  }
  if (tick) tick();
}

}  // namespace chronoq::bench
