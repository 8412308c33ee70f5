#include "bench/push_receiver.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <string_view>
#include <unordered_map>

#include "bench/common.h"

namespace chronoq::bench {

namespace {

constexpr std::string_view kOk = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
constexpr std::string_view kBad =
    "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";

}  // namespace

struct PushReceiver::Conn {
  std::string in;
  std::string out;
  bool want_write = false;
  bool closing = false;  // close once `out` is written
};

namespace {

bool NameIs(std::string_view line, std::string_view name) {
  return line.size() > name.size() && line[name.size()] == ':' &&
         strncasecmp(line.data(), name.data(), name.size()) == 0;
}

std::string_view ValueOf(std::string_view line, size_t name_size) {
  std::string_view v = line.substr(name_size + 1);
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
  return v;
}

int64_t ParseInt(std::string_view s) {
  int64_t v = -1;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() ? v : -1;
}

// "triggerTime":123 in a JSON body; -1 when absent.
int64_t TriggerTime(std::string_view body) {
  constexpr std::string_view kKey = "\"triggerTime\":";
  size_t at = body.find(kKey);
  if (at == std::string_view::npos) return -1;
  std::string_view rest = body.substr(at + kKey.size());
  size_t end = 0;
  while (end < rest.size() && rest[end] >= '0' && rest[end] <= '9') ++end;
  return ParseInt(rest.substr(0, end));
}

Result<int> Listen(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return Internal(fmt::format("socket: {}", std::strerror(errno)));
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 1024) != 0) {
    std::string e = std::strerror(errno);
    ::close(fd);
    return Internal(fmt::format("receiver listen on 127.0.0.1:{}: {}", port, e));
  }
  return fd;
}

}  // namespace

struct PushReceiver::Worker {
  int listen_fd = -1;
  int epfd = -1;
  std::unordered_map<int, PushReceiver::Conn> conns;
  // Figures of this thread's requests.
  int64_t duplicates = 0;
  int64_t foreign = 0;
  int64_t bad = 0;
  int64_t connections = 0;
  Histogram lateness;
  int64_t first_us = 0;
  int64_t last_us = 0;

  ~Worker() {
    for (auto& [fd, c] : conns) ::close(fd);
    if (listen_fd >= 0) ::close(listen_fd);
    if (epfd >= 0) ::close(epfd);
  }
};

namespace {

void Close(PushReceiver::Worker& w, int fd) {
  ::epoll_ctl(w.epfd, EPOLL_CTL_DEL, fd, nullptr);
  ::close(fd);
  w.conns.erase(fd);
}

// Writes what it can of c.out; returns false when the connection is to go.
bool Flush(PushReceiver::Worker& w, int fd, PushReceiver::Conn& c) {
  size_t done = 0;
  while (done < c.out.size()) {
    ssize_t n = ::send(fd, c.out.data() + done, c.out.size() - done, MSG_NOSIGNAL);
    if (n > 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    return false;
  }
  c.out.erase(0, done);
  const bool want = !c.out.empty();
  if (want != c.want_write) {
    epoll_event ev{};
    ev.events = want ? (EPOLLIN | EPOLLOUT) : EPOLLIN;
    ev.data.fd = fd;
    ::epoll_ctl(w.epfd, EPOLL_CTL_MOD, fd, &ev);
    c.want_write = want;
  }
  return !(c.closing && c.out.empty());
}

}  // namespace

PushReceiver::PushReceiver(Options options) : options_(std::move(options)) {}

Result<std::unique_ptr<PushReceiver>> PushReceiver::Start(Options options) {
  std::unique_ptr<PushReceiver> r(new PushReceiver(std::move(options)));
  const int64_t n = std::max<int64_t>(0, r->options_.expected);
  r->seen_ = std::make_unique<std::atomic<uint8_t>[]>(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) r->seen_[i].store(0, std::memory_order_relaxed);
  const int threads = std::max(1, r->options_.threads);
  for (int i = 0; i < threads; ++i) {
    auto w = std::make_unique<Worker>();
    CQ_ASSIGN_OR_RETURN(w->listen_fd, Listen(r->port_));
    if (r->port_ == 0) {
      sockaddr_in addr{};
      socklen_t len = sizeof addr;
      ::getsockname(w->listen_fd, reinterpret_cast<sockaddr*>(&addr), &len);
      r->port_ = ntohs(addr.sin_port);
    }
    w->epfd = ::epoll_create1(EPOLL_CLOEXEC);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = w->listen_fd;
    ::epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->listen_fd, &ev);
    r->workers_.push_back(std::move(w));
  }
  PushReceiver* self = r.get();
  for (auto& w : r->workers_) {
    Worker* wp = w.get();
    r->threads_.emplace_back([self, wp] {
      pthread_setname_np(pthread_self(), "cq-bench-recv");
      std::vector<epoll_event> events(256);
      std::string buf(64 * 1024, '\0');
      while (!self->stop_.load(std::memory_order_relaxed)) {
        const int n = ::epoll_wait(wp->epfd, events.data(), static_cast<int>(events.size()), 100);
        for (int i = 0; i < n; ++i) {
          const int fd = events[i].data.fd;
          if (fd == wp->listen_fd) {
            for (;;) {
              int c = ::accept4(wp->listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
              if (c < 0) break;
              int one = 1;
              ::setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
              epoll_event ev{};
              ev.events = EPOLLIN;
              ev.data.fd = c;
              ::epoll_ctl(wp->epfd, EPOLL_CTL_ADD, c, &ev);
              wp->conns.emplace(c, PushReceiver::Conn{});
              ++wp->connections;
            }
            continue;
          }
          auto it = wp->conns.find(fd);
          if (it == wp->conns.end()) continue;
          PushReceiver::Conn& c = it->second;
          if (events[i].events & EPOLLOUT) {
            if (!Flush(*wp, fd, c)) {
              Close(*wp, fd);
              continue;
            }
          }
          if (!(events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))) continue;
          ssize_t got = ::recv(fd, buf.data(), buf.size(), 0);
          if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR)) {
            Close(*wp, fd);
            continue;
          }
          if (got < 0) continue;
          c.in.append(buf.data(), static_cast<size_t>(got));
          self->Parse(*wp, c);
          if (!Flush(*wp, fd, c)) Close(*wp, fd);
        }
      }
    });
  }
  return r;
}

// Handles every complete request in c.in, appending the answers to c.out.
void PushReceiver::Parse(Worker& w, Conn& c) {
  size_t pos = 0;
  while (!c.closing) {
    const size_t head_end = c.in.find("\r\n\r\n", pos);
    if (head_end == std::string::npos) break;
    std::string_view head(c.in.data() + pos, head_end - pos);
    int64_t length = 0;
    std::string_view msg_id;
    bool ok = true;
    size_t line_start = head.find("\r\n");
    while (line_start != std::string_view::npos) {
      line_start += 2;
      size_t line_end = head.find("\r\n", line_start);
      std::string_view line =
          head.substr(line_start, line_end == std::string_view::npos ? std::string_view::npos
                                                                     : line_end - line_start);
      if (NameIs(line, "content-length")) {
        length = ParseInt(ValueOf(line, 14));
      } else if (NameIs(line, "x-chronoq-msg-id")) {
        msg_id = ValueOf(line, 16);
      } else if (NameIs(line, "transfer-encoding")) {
        ok = false;  // a chunked body: not what the server sends
      }
      line_start = line_end;
    }
    if (!ok || length < 0) {
      ++w.bad;
      c.out.append(kBad);
      c.closing = true;
      break;
    }
    const size_t body_start = head_end + 4;
    if (c.in.size() - body_start < static_cast<size_t>(length)) break;
    std::string_view body(c.in.data() + body_start, static_cast<size_t>(length));
    Record(msg_id, TriggerTime(body), NowEpochMicros(), w);
    c.out.append(kOk);
    pos = body_start + static_cast<size_t>(length);
  }
  c.in.erase(0, pos);
}

void PushReceiver::Record(std::string_view msg_id, int64_t trigger_ms, int64_t now_us, Worker& w) {
  requests_.fetch_add(1, std::memory_order_relaxed);
  int64_t index = -1;
  if (msg_id.size() > options_.id_prefix.size() &&
      msg_id.substr(0, options_.id_prefix.size()) == options_.id_prefix) {
    index = ParseInt(msg_id.substr(options_.id_prefix.size()));
  }
  if (index < 0 || index >= options_.expected) {
    ++w.foreign;
    return;
  }
  if (seen_[index].exchange(1, std::memory_order_relaxed) != 0) {
    ++w.duplicates;
    return;
  }
  if (w.first_us == 0) w.first_us = now_us;
  w.last_us = now_us;
  if (trigger_ms >= 0) w.lateness.Record(std::max<int64_t>(0, now_us - trigger_ms * 1000));
  unique_.fetch_add(1, std::memory_order_relaxed);
}

void PushReceiver::Stop() {
  stop_ = true;
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
}

PushReceiver::~PushReceiver() { Stop(); }

PushReceiver::Figures PushReceiver::figures() const {
  Figures f;
  f.requests = requests();
  f.unique = unique();
  for (const auto& w : workers_) {
    f.duplicates += w->duplicates;
    f.foreign += w->foreign;
    f.bad += w->bad;
    f.connections += w->connections;
    f.lateness.Merge(w->lateness);
    if (w->first_us != 0 && (f.first_us == 0 || w->first_us < f.first_us)) f.first_us = w->first_us;
    f.last_us = std::max(f.last_us, w->last_us);
  }
  return f;
}

}  // namespace chronoq::bench
