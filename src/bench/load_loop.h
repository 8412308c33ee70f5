// LoadLoop: drives many keep-alive HTTP/1.1 connections from one thread with epoll, each with at
// most one request in flight, each scripted by a Session. Cheap per request (one send, one recv,
// a minimal response parse), so that on a small machine the server, not the client, is measured.
//
// Thread-safety: a LoadLoop and its sessions belong to the thread that calls Run().
#pragma once

#include <sys/epoll.h>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <queue>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "client/http_client.h"

namespace chronoq::bench {

using SteadyClock = std::chrono::steady_clock;

// What a session wants to do next.
struct Next {
  enum Kind { kSend, kWait, kDone };
  Kind kind = kDone;
  SteadyClock::time_point wake{};  // kWait: ask again at this time

  static Next Send() { return {kSend, {}}; }
  static Next WaitUntil(SteadyClock::time_point t) { return {kWait, t}; }
  static Next Done() { return {kDone, {}}; }
};

class Session {
 public:
  virtual ~Session() = default;
  // On kSend, appends one complete request to `out`.
  virtual Next NextRequest(std::string* out) = 0;
  // The answer to the last request; `latency` runs from its send to its last byte.
  virtual void OnResponse(int status, std::string_view body, std::chrono::microseconds latency) = 0;
  // The connection failed (reset, closed by the server, refused); the session is then done.
  virtual void OnError(std::string_view /*what*/) {}
  // Where its connection goes; nullptr: the loop's endpoint.
  virtual const client::Endpoint* Target() const { return nullptr; }
  // The length of the complete answer at the front of `in`, with its status and body; 0 while
  // it is incomplete. Default: an HTTP/1.1 response with Content-Length (ParseHttpAnswer).
  virtual size_t ParseAnswer(std::string_view in, int* status, std::string_view* body);
};

// An HTTP/1.1 response with Content-Length at the front of `in`: its length (0: incomplete),
// status code and body.
size_t ParseHttpAnswer(std::string_view in, int* status, std::string_view* body);

// The socket work of the bench's epoll loops (LoadLoop here, GrpcH2Loop in h2_grpc_client.h):
// one connection is a non-blocking socket `fd` and, for https, its TLS session `tls` (else null).

// Sends (*out)[*pos..] on the socket `fd`, advancing *pos: 1 when all of it is sent (then `out`
// is cleared and *pos is 0), 0 when the socket's buffer is full (wait for EPOLLOUT), -1 on an
// error (errno says which).
int SendPending(int fd, std::string* out, size_t* pos);
// SendPending through `tls` when it is not null; on -1, `*why` says what failed.
int WritePending(int fd, tls::ClientSession* tls, std::string* out, size_t* pos, std::string* why);
// Reads what the socket `fd` has into `buf`, handing each read to `got(n)`, until a read comes
// short or would block: 1, or 0 when the peer closed the connection, -1 on an error (errno says
// which) or when `got` returns false.
template <typename Got>
int RecvAvailable(int fd, char* buf, size_t size, Got&& got) {
  for (;;) {
    ssize_t n = ::recv(fd, buf, size, 0);
    if (n > 0) {
      if (!got(static_cast<size_t>(n))) return -1;
      if (static_cast<size_t>(n) < size) return 1;
      continue;
    }
    if (n == 0) return 0;
    if (errno == EINTR) continue;
    return errno == EAGAIN || errno == EWOULDBLOCK ? 1 : -1;
  }
}
// RecvAvailable through `tls` when it is not null: a TLS record at a time, until OpenSSL wants
// the socket again (what it has already decrypted would get no epoll event). On -1, `*why` says
// what failed (empty when `got` returned false).
template <typename Got>
int ReadAvailable(int fd, tls::ClientSession* tls, char* buf, size_t size, Got&& got,
                  std::string* why) {
  if (tls == nullptr) {
    bool refused = false;
    const int read = RecvAvailable(fd, buf, size, [&](size_t n) {
      refused = !got(n);
      return !refused;
    });
    if (read < 0 && !refused) *why = std::string("recv: ") + std::strerror(errno);
    return read;
  }
  for (;;) {
    const long n = tls->Read(buf, size);
    if (n > 0) {
      if (!got(static_cast<size_t>(n))) return -1;
      continue;
    }
    if (n == tls::ClientSession::kWantRead || n == tls::ClientSession::kWantWrite) return 1;
    if (n == 0) return 0;
    *why = tls->error();
    return -1;
  }
}

// Writes what a connection `c` has pending (c.out from c.out_pos, WritePending through c.tls) and
// keeps its epoll write interest (c.write_interest; the event data is `&c`) on exactly while some
// is left: 1 all written, 0 some left, -1 failed (`*why` says why).
template <typename C>
int FlushPending(int epfd, C& c, std::string* why) {
  const int sent = WritePending(c.fd, c.tls.get(), &c.out, &c.out_pos, why);
  if (sent >= 0 && c.write_interest != (sent == 0)) {
    c.write_interest = sent == 0;
    SetEpollInterest(epfd, c.fd, &c, c.write_interest);
  }
  return sent;
}

// Adds `fd` to the epoll set `epfd` (readable; event data `ptr`).
Status AddToEpoll(int epfd, int fd, void* ptr);
// Sets the epoll interest in `fd` (event data `ptr`): readable, and writable when `write`.
void SetEpollInterest(int epfd, int fd, void* ptr, bool write);
// epoll_wait with a timeout in microseconds (epoll_pwait2; where the kernel lacks it, the
// timeout rounded up to milliseconds).
int EpollWait(int epfd, std::vector<epoll_event>& events, int64_t timeout_us);
// The microseconds from now to `until`, within [0, 1 s]: the loops sleep to the microsecond (a
// millisecond timeout would spin, 0 ms, through sub-millisecond gaps, taking a core from the
// server on a small machine).
int64_t MicrosUntil(SteadyClock::time_point until);
// One turn of a loop: waits up to `timeout_us` (EpollWait) and hands each event to its
// connection (a `C`, the event's data): `flush(c)` when it is writable, then `read(c)` when it is
// readable or closed; none of them for a connection that is `dead(c)`.
template <typename C, typename Dead, typename Flush, typename Read>
void WaitAndDispatch(int epfd, std::vector<epoll_event>& events, int64_t timeout_us, Dead&& dead,
                     Flush&& flush, Read&& read) {
  const int n = EpollWait(epfd, events, timeout_us);
  for (int i = 0; i < n; ++i) {
    C& c = *static_cast<C*>(events[i].data.ptr);
    if (dead(c)) continue;
    if (events[i].events & EPOLLOUT) flush(c);
    if (dead(c)) continue;
    if (events[i].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) read(c);
  }
}

struct LoopCounters {
  int64_t responses = 0;
  int64_t connection_errors = 0;
};

class LoadLoop {
 public:
  explicit LoadLoop(client::Endpoint ep);
  ~LoadLoop();

  // Opens one connection per session. kUnavailable when the server cannot be reached.
  Status Connect(const std::vector<Session*>& sessions);

  // Runs until every session is done, `stop()` returns true, or `deadline` passes. `tick` is
  // called about every `tick_every` (progress display, stop conditions).
  void Run(SteadyClock::time_point deadline, const std::function<bool()>& stop,
           const std::function<void()>& tick,
           std::chrono::milliseconds tick_every = std::chrono::milliseconds(250));

  // Makes a waiting session ask for its next request now (e.g. a consumer woken by new work).
  void Poke(Session* s);

  const LoopCounters& counters() const { return counters_; }

 private:
  struct Conn;
  void Kick(Conn& c, SteadyClock::time_point now);
  void Flush(Conn& c);
  void OnReadable(Conn& c);
  void Fail(Conn& c, std::string_view what);

  struct Wait {
    SteadyClock::time_point at;
    uint64_t gen;
    Conn* conn;
    bool operator>(const Wait& o) const { return at > o.at; }
  };

  client::Endpoint ep_;
  int epfd_ = -1;
  std::priority_queue<Wait, std::vector<Wait>, std::greater<Wait>> waits_;
  std::vector<std::unique_ptr<Conn>> conns_;
  LoopCounters counters_;
  int active_ = 0;  // connections not done
};

}  // namespace chronoq::bench
