#include "http/server.h"

#include <poll.h>
#include <sys/socket.h>
#include <time.h>

#include <algorithm>
#include <boost/asio.hpp>
#include <boost/asio/experimental/as_tuple.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <cerrno>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_set>

#include "base/check.h"
#include "base/log.h"
#include "base/turn_end.h"
#include "http/codec.h"
#include "http/request_parser.h"
#include "http/response_writer.h"
#include "http/tls_context_internal.h"

namespace chronoq::http {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
using tcp = asio::ip::tcp;
// A TLS connection's stream over the connection's socket (which the sweep and Stop close).
using TlsStream = asio::ssl::stream<tcp::socket&>;
constexpr auto kUseTuple = asio::experimental::as_tuple(asio::use_awaitable);
constexpr const char* kLog = "cq.http";
// A refused connection (max_connections open) is answered 503 and then drained for at most this
// long; at most kMaxRefusing are drained at once, more are closed without an answer.
constexpr auto kRefusalLinger = std::chrono::seconds(1);
constexpr int kMaxRefusing = 64;
// Longest wait between two accepts while accepting fails (out of file descriptors).
constexpr auto kMaxAcceptBackoff = std::chrono::milliseconds(500);

// The clock of connection deadlines: CLOCK_MONOTONIC_COARSE, the time of the last timer tick
// (1-4 ms old). Deadlines are set three times per request and checked by a sweep every 10 ms at
// the least, so the tick's precision is enough, and a read costs about a quarter of a precise
// one (61 against 14 ns on the 2-core VM of docs/benchmarks.md, "Fifth session: the send path").
struct DeadlineClock {
  using duration = std::chrono::nanoseconds;
  using rep = duration::rep;
  using period = duration::period;
  using time_point = std::chrono::time_point<DeadlineClock>;
  [[maybe_unused]] static constexpr bool is_steady = true;  // a Clock requirement
  static time_point now() {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return time_point(std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec));
  }
};

// False once the client has closed (or reset) its side. POLLRDHUP reports the peer's FIN even
// when unread bytes (a pipelined request) are still queued, which a MSG_PEEK read would return
// first and so hide the close.
bool PeerAliveFd(int fd) {
  pollfd p{fd, POLLRDHUP, 0};
  int r = ::poll(&p, 1, 0);
  if (r <= 0) return true;  // nothing to report (or EINTR): assume alive
  return (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) == 0;
}

}  // namespace

struct HttpServer::Impl {
  struct Conn;
  struct ReplySlot;
  struct Worker {
    asio::io_context ioc{1};
    asio::executor_work_guard<asio::io_context::executor_type> guard{ioc.get_executor()};
    std::thread thread;
    std::unordered_set<Conn*> conns;  // touched only on this worker's thread
  };

  // One client connection; lives in its coroutine's frame.
  struct Conn final : RequestContext {
    struct Watch {
      UniqueFunction<void()> on_gone;
      bool gone = false;
    };
    explicit Conn(tcp::socket s) : sock(std::move(s)), fd(sock.native_handle()) {}
    bool PeerAlive() const override { return PeerAliveFd(fd); }
    void OnPeerGone(UniqueFunction<void()> fn) override {
      watch = std::make_shared<Watch>();
      watch->on_gone = std::move(fn);
    }
    tcp::socket sock;
    const int fd;
    // When the current read or write must have finished; the worker's sweep closes the
    // connection after it. time_point::max() while a request is being handled.
    DeadlineClock::time_point deadline = DeadlineClock::time_point::max();
    void DeadlineIn(std::chrono::milliseconds d) { deadline = DeadlineClock::now() + d; }
    void NoDeadline() { deadline = DeadlineClock::time_point::max(); }
    bool idle = true;  // waiting for the first byte of a request
    std::shared_ptr<Watch> watch;
    std::shared_ptr<ReplySlot> reply_slot;  // the last request's, reused when free (Dispatch)
    Router::Tally tally;                    // the request's route metrics, counted in Serve
  };

  ServerOptions opts;
  const Router* router;
  std::vector<std::unique_ptr<Worker>> workers;
  std::unique_ptr<tcp::acceptor> acceptor;
  std::atomic<bool> stopping{false};
  std::atomic<int> live{0};      // counted by Accept (so that its cap check is exact)
  std::atomic<int> refusing{0};  // refused connections still being answered
  std::atomic<uint64_t> refused{0};
  std::atomic<uint64_t> accept_errors{0};
  std::atomic<uint64_t> handshake_failures{0};
  std::chrono::milliseconds sweep_period{1000};
  uint16_t bound_port = 0;

  asio::awaitable<void> Accept();
  asio::awaitable<void> Sweep(Worker* w);
  asio::awaitable<void> Session(tcp::socket sock, Worker* w);
  asio::awaitable<void> Refuse(tcp::socket sock, Worker* w);
  void Admit(tcp::socket sock, Worker* w);
  // Stream: c.sock itself (plain HTTP) or a TlsStream over it.
  template <class Stream>
  asio::awaitable<void> Serve(Conn& c, Stream& s);
  template <class Stream>
  asio::awaitable<void> WriteRefusal(Conn& c, Stream& s);
  asio::awaitable<bool> Handshake(Conn& c, TlsStream& s);
  // Hands the request to the router: its reply when it came before this returns, else nullopt
  // and the caller waits for it with co_await AwaitReply. Neither is a coroutine of its own (a
  // frame per request).
  std::optional<HttpResponse> Dispatch(HttpRequest& req, Conn& c);
  static asio::awaitable<HttpResponse> AwaitReply(ReplySlot* slot,
                                                  asio::io_context::executor_type loop);
  template <class Stream>
  asio::awaitable<void> WriteFailure(Conn& c, Stream& s, const RequestFailure& failure);
  void ArmWatch(Conn& c);
};

HttpServer::HttpServer(ServerOptions options, const Router* router)
    : impl_(std::make_unique<Impl>()) {
  impl_->opts = std::move(options);
  impl_->router = router;
}

HttpServer::~HttpServer() {
  if (!impl_->workers.empty() && impl_->workers[0]->thread.joinable()) {
    Stop(std::chrono::milliseconds(0));
  }
}

uint16_t HttpServer::port() const { return impl_->bound_port; }
int HttpServer::connections() const { return impl_->live.load(); }
uint64_t HttpServer::refused_connections() const { return impl_->refused.load(); }
uint64_t HttpServer::accept_errors() const { return impl_->accept_errors.load(); }
uint64_t HttpServer::tls_handshake_failures() const { return impl_->handshake_failures.load(); }

Status HttpServer::Start() {
  Impl& m = *impl_;
  int n = std::max(1, m.opts.threads);
  for (int i = 0; i < n; ++i) m.workers.push_back(std::make_unique<Impl::Worker>());

  boost::system::error_code ec;
  std::string host = m.opts.host;
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  asio::ip::address addr = asio::ip::make_address(host, ec);
  if (ec) {
    tcp::resolver resolver(m.workers[0]->ioc);
    auto results = resolver.resolve(host, std::to_string(m.opts.port), ec);
    if (ec || results.empty()) {
      return InvalidArgument(
          fmt::format("cannot resolve listen host '{}': {}", host, ec.message()));
    }
    addr = results.begin()->endpoint().address();
  }
  tcp::endpoint ep(addr, m.opts.port);
  m.acceptor = std::make_unique<tcp::acceptor>(m.workers[0]->ioc);
  m.acceptor->open(ep.protocol(), ec);
  if (!ec) m.acceptor->set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) m.acceptor->bind(ep, ec);
  if (!ec) m.acceptor->listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return Unavailable(
        fmt::format("cannot listen on {}:{}: {}", m.opts.host, m.opts.port, ec.message()));
  }
  m.bound_port = m.acceptor->local_endpoint().port();
  // The sweep closes connections past their deadline: often enough for short timeouts.
  auto shortest = std::min(m.opts.idle_timeout, m.opts.request_timeout);
  if (m.opts.tls != nullptr) shortest = std::min(shortest, m.opts.handshake_timeout);
  m.sweep_period =
      std::clamp(shortest / 4, std::chrono::milliseconds(10), std::chrono::milliseconds(1000));
  asio::co_spawn(m.workers[0]->ioc, m.Accept(), asio::detached);
  for (auto& w : m.workers) asio::co_spawn(w->ioc, m.Sweep(w.get()), asio::detached);
  for (auto& w : m.workers) {
    w->thread = std::thread([w = w.get()] {
      // Store writes of this turn's requests go out together at its end (base/turn_end.h).
      base::SetTurnEndPoster([w](UniqueFunction<void()> fn) { asio::post(w->ioc, std::move(fn)); });
      w->ioc.run();
      base::SetTurnEndPoster(nullptr);
    });
  }
  return Status::Ok();
}

void HttpServer::Stop(std::chrono::milliseconds grace) {
  Impl& m = *impl_;
  if (m.stopping.exchange(true)) return;
  asio::post(m.workers[0]->ioc, [&m] {
    boost::system::error_code ec;
    m.acceptor->close(ec);
  });
  for (auto& w : m.workers) {
    asio::post(w->ioc, [w = w.get()] {
      for (Impl::Conn* c : w->conns) {
        if (c->idle) {
          boost::system::error_code ec;
          c->sock.close(ec);
        }
      }
    });
  }
  auto deadline = std::chrono::steady_clock::now() + grace;
  while (m.live.load() > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  for (auto& w : m.workers) {
    w->guard.reset();
    w->ioc.stop();
  }
  for (auto& w : m.workers) {
    if (w->thread.joinable()) w->thread.join();
  }
}

asio::awaitable<void> HttpServer::Impl::Accept() {
  size_t next = 0;
  auto backoff = std::chrono::milliseconds(0);
  uint64_t failed = 0;  // accepts failed in a row
  for (;;) {
    Worker* w = workers[next++ % workers.size()].get();
    auto [ec, sock] = co_await acceptor->async_accept(w->ioc, kUseTuple);
    if (stopping.load() || ec == asio::error::operation_aborted) co_return;
    if (ec) {
      // Out of file descriptors (EMFILE, ENFILE) or similar: the connection stays in the listen
      // backlog; wait (10 ms, doubling up to kMaxAcceptBackoff) instead of spinning on the error,
      // and take it once a descriptor is free again. Logged once per streak.
      accept_errors.fetch_add(1);
      if (failed++ == 0) {
        CQ_LOG_WARN(kLog, "accept failed: {}; retrying every {} ms at most until it succeeds",
                    ec.message(), kMaxAcceptBackoff.count());
      }
      backoff = std::min(kMaxAcceptBackoff, backoff * 2 + std::chrono::milliseconds(10));
      asio::steady_timer t(co_await asio::this_coro::executor, backoff);
      co_await t.async_wait(kUseTuple);
      continue;
    }
    if (failed > 0) {
      CQ_LOG_WARN(kLog, "accepting again after {} failed accepts", failed);
      failed = 0;
    }
    backoff = std::chrono::milliseconds(0);
    Admit(std::move(sock), w);
  }
}

// A new connection is served, or refused when max_connections are open: refused at once rather
// than left waiting in the backlog, with an answer a client can act on (503, retry later).
void HttpServer::Impl::Admit(tcp::socket sock, Worker* w) {
  boost::system::error_code ec;
  if (live.load() >= opts.max_connections) {
    refused.fetch_add(1);
    if (refusing.fetch_add(1) < kMaxRefusing) {
      asio::co_spawn(w->ioc, Refuse(std::move(sock), w), asio::detached);
    } else {
      refusing.fetch_sub(1);
      sock.close(ec);
    }
    return;
  }
  live.fetch_add(1);
  sock.set_option(tcp::no_delay(true), ec);
  asio::co_spawn(w->ioc, Session(std::move(sock), w), asio::detached);
}

asio::awaitable<void> HttpServer::Impl::Refuse(tcp::socket sock, Worker* w) {
  Conn c(std::move(sock));
  w->conns.insert(&c);
  c.DeadlineIn(kRefusalLinger);  // the sweep closes it then (over TLS, handshake included)
  if (opts.tls == nullptr) {
    co_await WriteRefusal(c, c.sock);
  } else {
    std::shared_ptr<TlsContext::Native> tls = opts.tls->Current();
    TlsStream stream(c.sock, tls->ctx);
    auto [hec] = co_await stream.async_handshake(asio::ssl::stream_base::server, kUseTuple);
    if (!hec) co_await WriteRefusal(c, stream);
  }
  w->conns.erase(&c);
  boost::system::error_code ec;
  c.sock.close(ec);
  refusing.fetch_sub(1);
}

template <class Stream>
asio::awaitable<void> HttpServer::Impl::WriteRefusal(Conn& c, Stream& s) {
  HttpResponse r;
  r.status = 503;
  r.headers.emplace_back("Retry-After", "1");
  r.body = EncodeRequestError(
      503,
      fmt::format("too many connections: {} are open (max-connections); retry later",
                  opts.max_connections),
      "");
  std::string out;
  AppendResponse(r, 11, /*keep_alive=*/false, /*head=*/false, &out);
  auto [wec, wn] = co_await asio::async_write(s, asio::buffer(out), kUseTuple);
  if (wec) co_return;
  // Closing a socket with unread bytes (the request) resets the connection, which can destroy
  // the answer before the client reads it: read (the raw bytes, TLS or not) until the client
  // closes, or the deadline.
  boost::system::error_code ec;
  c.sock.shutdown(tcp::socket::shutdown_send, ec);
  char scratch[4096];
  for (;;) {
    auto [rec, rn] = co_await c.sock.async_read_some(asio::buffer(scratch), kUseTuple);
    if (rec) break;
  }
}

// Closes the connections of one worker whose read or write deadline has passed. Deadlines are
// plain time stamps set on the hot path; this periodic check (every second, or a quarter of the
// shortest timeout) replaces a timer per operation.
asio::awaitable<void> HttpServer::Impl::Sweep(Worker* w) {
  asio::steady_timer timer(w->ioc);
  while (!stopping.load()) {
    timer.expires_after(sweep_period);
    co_await timer.async_wait(kUseTuple);
    auto now = DeadlineClock::now();
    for (Conn* c : w->conns) {
      if (c->deadline <= now) {
        boost::system::error_code ec;
        c->sock.close(ec);  // the pending read or write fails; its coroutine ends
      }
    }
  }
}

asio::awaitable<void> HttpServer::Impl::Session(tcp::socket sock, Worker* w) {
  Conn c(std::move(sock));
  w->conns.insert(&c);
  try {
    if (opts.tls == nullptr) {
      co_await Serve(c, c.sock);
    } else {
      // The context current now, kept for the connection's life (a reload does not touch it).
      std::shared_ptr<TlsContext::Native> tls = opts.tls->Current();
      TlsStream stream(c.sock, tls->ctx);
      if (co_await Handshake(c, stream)) co_await Serve(c, stream);
    }
  } catch (const std::exception& e) {
    CQ_LOG_WARN(kLog, "connection ended by an exception: {}", e.what());
  }
  w->conns.erase(&c);
  boost::system::error_code ec;
  c.sock.shutdown(tcp::socket::shutdown_both, ec);
  c.sock.close(ec);
  live.fetch_sub(1);
}

// Until the handshake completes the connection counts as idle (Stop closes it) and has
// handshake_timeout (the sweep closes it then). A client that speaks plain HTTP to the port fails
// here at its first bytes and is closed without an answer.
asio::awaitable<bool> HttpServer::Impl::Handshake(Conn& c, TlsStream& s) {
  c.DeadlineIn(opts.handshake_timeout);
  auto [ec] = co_await s.async_handshake(asio::ssl::stream_base::server, kUseTuple);
  if (!ec) co_return true;
  handshake_failures.fetch_add(1);
  boost::system::error_code pec;
  tcp::endpoint peer = c.sock.remote_endpoint(pec);
  CQ_LOG_DEBUG(kLog, "TLS handshake with {}:{} failed: {}", peer.address().to_string(), peer.port(),
               c.deadline <= DeadlineClock::now() ? "timed out" : ec.message());
  co_return false;
}

template <class Stream>
asio::awaitable<void> HttpServer::Impl::WriteFailure(Conn& c, Stream& s,
                                                     const RequestFailure& failure) {
  std::string out;
  AppendResponse(FailureResponse(failure), 11, /*keep_alive=*/false, /*head=*/false, &out);
  c.DeadlineIn(std::chrono::seconds(10));
  co_await asio::async_write(s, asio::buffer(out), kUseTuple);
}

void HttpServer::Impl::ArmWatch(Conn& c) {
  auto watch = c.watch;
  int fd = c.fd;
  c.sock.async_wait(tcp::socket::wait_read, [watch, fd](boost::system::error_code ec) {
    if (ec || PeerAliveFd(fd)) return;  // cancelled, or a pipelined request arrived
    watch->gone = true;
    if (UniqueFunction<void()> fn = std::move(watch->on_gone)) fn();
  });
}

// Where a handler's reply meets the connection's coroutine. A reply given before Dispatch returns
// (the embedded engine answers inline) is taken at once, without suspending the coroutine; a later
// one, from any thread, resumes it through the connection's executor.
struct HttpServer::Impl::ReplySlot {
  std::mutex mu;
  std::optional<HttpResponse> early;          // the reply, when it came first
  UniqueFunction<void(HttpResponse)> resume;  // set once the coroutine waits
};

std::optional<HttpResponse> HttpServer::Impl::Dispatch(HttpRequest& req, Conn& c) {
  c.watch.reset();
  // The last request's slot serves again once nothing else holds it (its reply's callbacks are
  // gone, as they nearly always are by now): one heap allocation less per request. Only this
  // coroutine copies it, so a count of one stays one; the fence orders the last holder's writes
  // (its release of the count) before the reuse, and the uncontended lock makes that order one
  // ThreadSanitizer sees too (it does not model fences).
  std::shared_ptr<ReplySlot>& slot = c.reply_slot;
  if (slot != nullptr && slot.use_count() == 1) {
    std::atomic_thread_fence(std::memory_order_acquire);
    std::lock_guard lock(slot->mu);
    slot->early.reset();
    slot->resume = nullptr;
  } else {
    slot = std::make_shared<ReplySlot>();
  }
  Reply reply([slot](HttpResponse r) {
    UniqueFunction<void(HttpResponse)> resume;
    {
      std::lock_guard lock(slot->mu);
      if (!slot->resume) {
        slot->early.emplace(std::move(r));
        return;
      }
      resume = std::move(slot->resume);
    }
    resume(std::move(r));
  });
  // Counted by Serve as it takes the answer, not through a wrapper around the reply.
  c.tally = router->DispatchTallied(req, c, std::move(reply));
  // Between two requests, no lock held: store writes asked for now run here (base/turn_end.h).
  base::TurnSafePoint();
  {
    std::lock_guard lock(slot->mu);
    if (slot->early) {
      std::optional<HttpResponse> r = std::move(slot->early);
      slot->early.reset();
      return r;
    }
  }
  if (c.watch) ArmWatch(c);
  return std::nullopt;
}

// The slot belongs to the connection, which outlives the wait. The reply resumes the connection
// through its worker loop (`loop`, Session runs on it), posted to as itself: a post through the
// coroutine's type-erased executor costs a few hundred instructions more per late reply.
asio::awaitable<HttpResponse> HttpServer::Impl::AwaitReply(ReplySlot* slot,
                                                           asio::io_context::executor_type loop) {
  return asio::async_initiate<decltype(asio::use_awaitable), void(HttpResponse)>(
      [slot, loop](auto handler) {
        auto post = [h = std::move(handler), loop](HttpResponse r) mutable {
          asio::post(
              loop, [h = std::move(h), r = std::move(r)]() mutable { std::move(h)(std::move(r)); });
        };
        std::optional<HttpResponse> arrived;
        {
          std::lock_guard lock(slot->mu);
          if (slot->early) {
            arrived = std::move(slot->early);
          } else {
            slot->resume = std::move(post);
            return;
          }
        }
        post(std::move(*arrived));  // it came while we were getting ready to wait
      },
      asio::use_awaitable);
}

template <class Stream>
asio::awaitable<void> HttpServer::Impl::Serve(Conn& c, Stream& s) {
  // The connection's unread bytes (a request's, and pipelined ones behind it), the parser that
  // reads them (reset, not rebuilt, per request) and the answer's bytes, all kept across requests.
  beast::flat_buffer buffer;
  RequestParser parser(RequestLimits{opts.max_header_bytes, opts.max_body_bytes});
  std::string out;
  auto unread = [&buffer] {
    return std::string_view(static_cast<const char*>(buffer.data().data()), buffer.size());
  };
  // Reads what the socket has (at least a byte) into the buffer: `if (!took(co_await
  // read_some()))`, false once it is closed, reset, or closed by the sweep at its deadline. Not a
  // coroutine of its own (a frame per read).
  auto read_some = [&] {
    return s.async_read_some(buffer.prepare(beast::read_size(buffer, 64 * 1024)), kUseTuple);
  };
  auto took = [&buffer](const std::tuple<boost::system::error_code, size_t>& read) {
    if (std::get<0>(read)) return false;
    buffer.commit(std::get<1>(read));
    return true;
  };
  // The connection's worker loop, where a late reply resumes it (AwaitReply).
  const asio::any_io_executor ex = co_await asio::this_coro::executor;
  const auto* own = ex.target<asio::io_context::executor_type>();
  CQ_CHECK(own != nullptr, "a connection's coroutine runs on its worker's io_context");
  const asio::io_context::executor_type loop = *own;
  for (;;) {
    c.idle = true;
    if (stopping.load()) co_return;
    if (buffer.size() == 0 && buffer.capacity() > 64 * 1024) buffer.shrink_to_fit();
    if (out.capacity() > 64 * 1024) std::string().swap(out);
    parser.Reset();
    if (buffer.size() == 0) {
      // Idle until the next request's first byte; from there the client has request_timeout to
      // send the whole request, however it spreads the bytes (slow-loris).
      c.DeadlineIn(opts.idle_timeout);
      if (!took(co_await read_some())) co_return;  // closed, or by the sweep (timed out) or Stop
    }
    c.DeadlineIn(opts.request_timeout);
    RequestParser::Step step;
    for (;;) {
      step = parser.Feed(unread());
      buffer.consume(step.consumed);
      // Idle (closed by Stop) until the header is complete, as while waiting for it.
      c.idle = step.event == RequestParser::Event::kNeedMore && !parser.header_done();
      if (step.event == RequestParser::Event::kContinue) {
        auto [wec, wn] = co_await asio::async_write(
            s, asio::buffer(kContinueAnswer.data(), kContinueAnswer.size()), kUseTuple);
        if (wec) co_return;
        continue;
      }
      if (step.event != RequestParser::Event::kNeedMore) break;
      // Still the deadline set at the request's first byte: a trickled body counts too.
      if (!took(co_await read_some())) co_return;
    }
    if (step.event == RequestParser::Event::kError) {
      co_await WriteFailure(c, s, parser.failure());
      co_return;
    }
    c.NoDeadline();

    ParsedRequest& parsed = parser.request();
    std::optional<HttpResponse> early = Dispatch(parsed.request, c);
    HttpResponse res;
    if (early) {
      res = std::move(*early);
    } else {
      res = co_await AwaitReply(c.reply_slot.get(), loop);
      if (c.watch) {
        boost::system::error_code ec;
        c.sock.cancel(ec);
      }
    }
    c.tally.Count(res);
    if (c.watch && c.watch->gone) co_return;  // the client left during a long poll
    const bool keep = KeepConnection(parsed.keep_alive, res, stopping.load());
    out.clear();
    AppendResponse(res, parsed.version, keep, parsed.head, &out);
    c.DeadlineIn(opts.request_timeout);
    auto [wec, wn] = co_await asio::async_write(s, asio::buffer(out), kUseTuple);
    if (wec || !keep) co_return;
  }
}

}  // namespace chronoq::http
