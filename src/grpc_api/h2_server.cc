// gRPC over our own HTTP/2 server (h2_server.h; the default engine): the connections' I/O and the
// server. Each connection lives on one worker thread (its io_context; store writes asked for in a
// turn of it go out together at the turn's end, base/turn_end.h): TLS first when configured
// (ALPN h2), then its HTTP/2 session (h2_session.h), fed what the socket reads; everything the
// session has to send after a read is written with one write (one write in flight at a time).
// Limits (GrpcOptions): max-connections at the accept; one timer per connection, armed at the
// earliest of its TLS handshake's deadline, its idle timeout and its calls' deadlines. Shutdown:
// health NOT_SERVING, GOAWAY (a notice, then the last stream taken), connections close as their
// calls are answered, or at the deadline.
#include "grpc_api/h2_server.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "base/log.h"
#include "base/turn_end.h"
#include "grpc_api/api_context.h"
#include "grpc_api/consume_streams.h"
#include "grpc_api/h2_own_session.h"
#include "grpc_api/h2_session.h"
#include "grpc_api/h2_stream.h"
#include "tls/server_context.h"

namespace chronoq::grpc_api {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
constexpr const char* kLog = "cq.grpc";

// Shutdown: the final GOAWAY follows the notice after this (a round trip, for the streams the
// client opened meanwhile), unless the deadline is sooner.
constexpr std::chrono::milliseconds kGoawayDelay{50};
constexpr auto kNoDeadline = std::chrono::steady_clock::time_point::max();

class H2Server;

class Conn final : public H2Link, public std::enable_shared_from_this<Conn> {
 public:
  Conn(H2Server* server, asio::io_context* ioc, tcp::socket sock);
  Conn(const Conn&) = delete;
  Conn& operator=(const Conn&) = delete;

  void Start();
  void Close();
  // Shutdown (H2Session::Notice, GoAway); a connection still in its TLS handshake closes.
  void Notice() {
    if (closed_) return;
    if (!session_->started()) return Close();
    session_->Notice();
    Flush();
  }
  void GoAway() {
    if (closed_) return;
    if (!session_->started()) return Close();
    session_->GoAway();
    Flush();
  }

  // H2Link.
  H2Out* out() override { return session_.get(); }
  void Run(UniqueFunction<void()> fn) override {
    if (!ioc_->get_executor().running_in_this_thread()) return Post(std::move(fn));
    // Inline; maybe from another connection's callbacks on this thread (a Send waking a stream
    // here): this one writes now, unless it is reading or writing already (it flushes after).
    fn();
    Flush();
  }
  void AfterSend(UniqueFunction<void()> fn) override { after_send_.push_back(std::move(fn)); }
  void Post(UniqueFunction<void()> fn) override {
    asio::post(*ioc_, [self = shared_from_this(), fn = std::move(fn)]() mutable {
      fn();
      self->Flush();
    });
  }
  void Flush() override;
  bool OnThread() const override { return ioc_->get_executor().running_in_this_thread(); }
  void ArmDeadline(std::chrono::steady_clock::time_point t) override;
  std::shared_ptr<void> Hold() override { return shared_from_this(); }
  std::weak_ptr<void> WeakHold() override { return weak_from_this(); }

 private:
  void StartSession();
  // The timer: closes a connection whose TLS handshake is late, ends one with no call open for
  // the idle timeout, answers the calls past their deadline; then armed again.
  void OnTimer();
  // When the handshake or idle timeout is to be checked next.
  std::chrono::steady_clock::time_point NextLimitCheck(std::chrono::steady_clock::time_point now);
  // The socket's or, over TLS, the TLS stream's.
  template <class Handler>
  void ReadSome(Handler&& h) {
    if (tls_ != nullptr) return tls_->async_read_some(asio::buffer(rbuf_.get(), kReadBytes), h);
    sock_.async_read_some(asio::buffer(rbuf_.get(), kReadBytes), h);
  }
  template <class Handler>
  void WriteAll(Handler&& h) {
    if (tls_ != nullptr) return asio::async_write(*tls_, asio::buffer(wbuf_), h);
    asio::async_write(sock_, asio::buffer(wbuf_), h);
  }
  void Read();

  H2Server* server_;
  asio::io_context* ioc_;
  tcp::socket sock_;
  // The limits' and the session's deadlines: armed at the earliest.
  asio::steady_timer timer_;
  std::chrono::steady_clock::time_point armed_ = kNoDeadline;
  std::unique_ptr<H2Framing> session_;  // nghttp2's, or the own framing's (grpc-engine=h2)
  static constexpr size_t kReadBytes = 64 * 1024;
  std::unique_ptr<uint8_t[]> rbuf_ = std::make_unique<uint8_t[]>(kReadBytes);
  std::string wbuf_;
  bool writing_ = false;
  bool in_recv_ = false;
  bool in_send_ = false;  // in Flush (what its callbacks ask for goes with the same write)
  std::vector<UniqueFunction<void()>> after_send_;  // H2Host::AfterSend's
  bool closed_ = false;
  // TLS (null: h2c) and its handshake's deadline.
  std::unique_ptr<asio::ssl::stream<tcp::socket&>> tls_;
  bool handshaking_ = false;
  bool ended_ = false;  // idle: GOAWAY sent, no more limit checks
  std::chrono::steady_clock::time_point handshake_deadline_;
};

class H2Server final : public GrpcServer {
 public:
  H2Server(const GrpcOptions& o, service::QueueService* service, const base::Clock* clock,
           base::Scheduler* scheduler)
      : opts_(o), stats_(std::make_shared<MethodStats>()) {
    api_.service = service;
    api_.clock = clock;
    api_.scheduler = scheduler;
    api_.stats = stats_.get();
    api_.streams = &streams_;
    api_.authenticator = o.authenticator;
    services_ = std::make_unique<H2Services>(&api_);
    env_.api = &api_;
    env_.services = services_.get();
    env_.max_request_bytes = o.max_msg_bytes + kEnvelopeBytes;
    env_.rst_stream_burst = o.rst_stream_burst;
    env_.rst_stream_per_second = o.rst_stream_per_second;
  }
  ~H2Server() override { Shutdown(std::chrono::milliseconds(0)); }

  Status Start() {
    if (opts_.tls != nullptr) {
      CQ_ASSIGN_OR_RETURN(tls_, tls::ServerContext::Create(*opts_.tls, {.alpn_h2 = true}));
    }
    const int n = std::max(1, opts_.threads);
    for (int i = 0; i < n; ++i) workers_.push_back(std::make_unique<Worker>());
    boost::system::error_code ec;
    std::string host = opts_.host;
    if (host.size() > 2 && host.front() == '[' && host.back() == ']')
      host = host.substr(1, host.size() - 2);
    asio::ip::address addr = asio::ip::make_address(host, ec);
    tcp::endpoint ep(addr, opts_.port);
    acceptor_ = std::make_unique<tcp::acceptor>(workers_[0]->ioc);
    if (!ec) acceptor_->open(ep.protocol(), ec);
    if (!ec) acceptor_->set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) acceptor_->bind(ep, ec);
    if (!ec) acceptor_->listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
      return Status(Errc::kUnavailable, fmt::format("grpc-listen: cannot listen on {}:{}: {}",
                                                    opts_.host, opts_.port, ec.message()));
    }
    port_ = acceptor_->local_endpoint().port();
    Accept();
    for (auto& w : workers_) {
      w->thread = std::thread([w = w.get()] {
        // Store writes of this turn's calls go out together at its end, as on the HTTP workers
        // (base/turn_end.h): no hop to the store's writer thread and back per call.
        base::SetTurnEndPoster(
            [w](UniqueFunction<void()> fn) { asio::post(w->ioc, std::move(fn)); });
        w->ioc.run();
        base::SetTurnEndPoster(nullptr);
      });
    }
    return Status::Ok();
  }

  void AddMetrics(metrics::Registry& registry) {
    registry.Add([stats = stats_](metrics::TextWriter& w) { stats->Render(w); });
    registry.Add([refused = refused_](metrics::TextWriter& w) {
      w.Family("cq_grpc_connections_refused_total",
               "gRPC connections closed at once because max-connections were open (h2 and "
               "nghttp2 engines)",
               metrics::MetricType::kCounter);
      w.Sample("cq_grpc_connections_refused_total", {}, static_cast<double>(refused->load()));
    });
  }

  uint16_t port() const override { return port_; }
  size_t streams() const override { return streams_.size(); }
  void EndStreams() override { streams_.EndAll(); }
  Status ReloadTls(const tls::TlsIdentity& identity) override {
    if (tls_ == nullptr) return Status(Errc::kInvalidState, "the gRPC server is not using TLS");
    return tls_->Reload(identity);
  }

  void Shutdown(std::chrono::milliseconds deadline) override {
    if (workers_.empty() || stopping_.exchange(true)) return;
    const auto now = std::chrono::steady_clock::now();
    const auto until = now + deadline;
    services_->Shutdown();  // health: NOT_SERVING (queued before the GOAWAYs)
    streams_.EndAll();      // Consume streams end with OK
    asio::post(workers_[0]->ioc, [this] {
      boost::system::error_code ec;
      acceptor_->close(ec);
    });
    ForEachConn([](Conn& c) { c.Notice(); });
    std::this_thread::sleep_until(std::min(until, now + kGoawayDelay));
    ForEachConn([](Conn& c) { c.GoAway(); });
    while (live_.load() > 0 && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    // Past the deadline: what is still open is cut (parked calls cancelled, streams ended).
    ForEachConn([](Conn& c) { c.Close(); });
    for (auto& w : workers_) w->guard.reset();
    for (auto& w : workers_) {
      if (w->thread.joinable()) w->thread.join();
    }
  }

  const H2SessionEnv* env() const { return &env_; }
  const GrpcOptions& options() const { return opts_; }
  const tls::ServerContext* tls() const { return tls_.get(); }
  // A connection of the worker running `ioc` closed (on that worker's thread).
  void Unlist(asio::io_context* ioc, Conn* c) {
    for (auto& w : workers_) {
      if (&w->ioc == ioc && w->conns.erase(c) > 0) live_.fetch_sub(1);
    }
  }

 private:
  struct Worker {
    asio::io_context ioc{1};
    asio::executor_work_guard<asio::io_context::executor_type> guard{ioc.get_executor()};
    std::thread thread;
    std::unordered_set<Conn*> conns;  // this worker's thread only
  };

  // Runs `fn` on each open connection, on its thread.
  template <typename Fn>
  void ForEachConn(Fn fn) {
    for (auto& w : workers_) {
      asio::post(w->ioc, [w = w.get(), fn] {
        // `fn` may close (and unlist) a connection: over a copy.
        std::vector<std::shared_ptr<Conn>> conns;
        for (Conn* c : w->conns) conns.push_back(c->shared_from_this());
        for (auto& c : conns) fn(*c);
      });
    }
  }

  void Accept() {
    Worker* w = workers_[next_++ % workers_.size()].get();
    acceptor_->async_accept(w->ioc, [this, w](boost::system::error_code ec, tcp::socket sock) {
      if (stopping_.load() || ec == asio::error::operation_aborted) return;
      if (!ec && live_.load() >= opts_.max_connections) {
        // max-connections: closed at once (the client sees the connection end, UNAVAILABLE).
        // Counted before the close, which the client may see at once.
        refused_->fetch_add(1);
        boost::system::error_code ignored;
        sock.close(ignored);
      } else if (!ec) {
        boost::system::error_code ignored;
        sock.set_option(tcp::no_delay(true), ignored);
        live_.fetch_add(1);
        asio::post(w->ioc, [this, w, sock = std::move(sock)]() mutable {
          auto c = std::make_shared<Conn>(this, &w->ioc, std::move(sock));
          w->conns.insert(c.get());
          c->Start();
        });
      }
      Accept();
    });
  }

  GrpcOptions opts_;
  std::shared_ptr<MethodStats> stats_;
  ConsumeStreams streams_;
  ApiContext api_;
  std::unique_ptr<H2Services> services_;  // health, reflection
  H2SessionEnv env_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::unique_ptr<tcp::acceptor> acceptor_;
  size_t next_ = 0;
  uint16_t port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> live_{0};
  // Connections beyond max_connections (shared with the registry's collector).
  std::shared_ptr<std::atomic<uint64_t>> refused_ = std::make_shared<std::atomic<uint64_t>>(0);
  std::unique_ptr<tls::ServerContext> tls_;  // TLS; null: h2c
};

Conn::Conn(H2Server* server, asio::io_context* ioc, tcp::socket sock)
    : server_(server),
      ioc_(ioc),
      sock_(std::move(sock)),
      timer_(*ioc),
      session_(server->options().engine == "h2"
                   ? std::unique_ptr<H2Framing>(std::make_unique<H2OwnSession>(server->env(), this))
                   : std::make_unique<H2Session>(server->env(), this)) {}

// TLS first (ALPN h2, tls/server_context.h), with the context current now.
void Conn::Start() {
  const auto now = std::chrono::steady_clock::now();
  handshake_deadline_ = now + server_->options().handshake_timeout;
  if (server_->tls() == nullptr) return StartSession();
  handshaking_ = true;
  ArmDeadline(handshake_deadline_);
  {
    asio::ssl::context ctx(server_->tls()->Acquire());  // the stream takes its own reference
    tls_ = std::make_unique<asio::ssl::stream<tcp::socket&>>(sock_, ctx);
  }
  tls_->async_handshake(asio::ssl::stream_base::server,
                        [self = shared_from_this()](boost::system::error_code ec) {
                          if (self->closed_) return;
                          self->handshaking_ = false;
                          if (ec) {
                            CQ_LOG_DEBUG(kLog, "TLS handshake failed: {}", ec.message());
                            return self->Close();
                          }
                          self->StartSession();
                        });
}

void Conn::OnTimer() {
  armed_ = kNoDeadline;
  if (closed_) return;
  const auto now = std::chrono::steady_clock::now();
  if (handshaking_) {
    if (now >= handshake_deadline_) return Close();
  } else if (session_->started()) {
    const auto idle_since = session_->idle_since();
    if (!ended_ && idle_since != kNoDeadline &&
        now - idle_since >= server_->options().idle_timeout) {
      session_->Terminate();  // GOAWAY, then closed once it is written
      ended_ = true;
    }
    session_->SweepDeadlines();  // arms the next deadline
  }
  if (!ended_) ArmDeadline(NextLimitCheck(now));
  Flush();
}

std::chrono::steady_clock::time_point Conn::NextLimitCheck(
    std::chrono::steady_clock::time_point now) {
  if (handshaking_) return handshake_deadline_;
  // Idle: when its timeout ends; calls open: checked again a timeout later.
  const auto idle_since = session_->idle_since();
  return (idle_since == kNoDeadline ? now : idle_since) + server_->options().idle_timeout;
}

void Conn::StartSession() {
  session_->Start();
  ArmDeadline(NextLimitCheck(std::chrono::steady_clock::now()));
  Flush();
  Read();
}

void Conn::Close() {
  if (closed_) return;
  closed_ = true;
  boost::system::error_code ec;
  sock_.shutdown(tcp::socket::shutdown_both, ec);
  sock_.close(ec);
  timer_.cancel();
  session_->Close();
  // Writes handed to nghttp2 whose completion was not reported yet (a closing Flush).
  std::vector<UniqueFunction<void()>> fns = std::move(after_send_);
  after_send_.clear();
  for (auto& fn : fns) fn();
  server_->Unlist(ioc_, this);
}

void Conn::Read() {
  ReadSome([self = shared_from_this()](boost::system::error_code ec, size_t n) {
    if (self->closed_) return;
    if (ec) return self->Close();
    self->in_recv_ = true;
    const bool ok = self->session_->Receive(self->rbuf_.get(), n);
    self->in_recv_ = false;
    if (!ok) return self->Close();
    self->Flush();
    // Between two reads, no lock held: store writes asked to go out soon run here.
    base::TurnSafePoint();
    if (!self->closed_) self->Read();
  });
}

void Conn::Flush() {
  if (writing_ || closed_ || in_recv_ || in_send_ || !session_->started()) return;
  wbuf_.clear();
  in_send_ = true;
  for (;;) {
    const uint8_t* data = nullptr;
    ssize_t n = closed_ ? 0 : session_->Send(&data);
    if (n < 0) {
      in_send_ = false;
      return Close();
    }
    if (n > 0) {
      wbuf_.append(reinterpret_cast<const char*>(data), static_cast<size_t>(n));
      continue;
    }
    if (after_send_.empty()) break;
    // What nghttp2's callbacks left to do (a Consume stream's next message, say): done now, and
    // what it submits goes with this write (as much as the client's windows let through).
    std::vector<UniqueFunction<void()>> fns = std::move(after_send_);
    after_send_.clear();
    for (auto& fn : fns) fn();
  }
  in_send_ = false;
  if (closed_) return;
  if (wbuf_.empty()) {
    if (!session_->WantsIo()) Close();
    return;
  }
  writing_ = true;
  WriteAll([self = shared_from_this()](boost::system::error_code ec, size_t) {
    self->writing_ = false;
    if (ec) return self->Close();
    self->Flush();
  });
}

void Conn::ArmDeadline(std::chrono::steady_clock::time_point t) {
  if (t >= armed_ || closed_) return;
  armed_ = t;
  timer_.expires_at(t);
  timer_.async_wait([weak = weak_from_this()](boost::system::error_code ec) {
    if (ec == asio::error::operation_aborted) return;
    if (auto c = weak.lock()) c->OnTimer();
  });
}

}  // namespace

Result<std::unique_ptr<GrpcServer>> StartH2Server(const GrpcOptions& options,
                                                  service::QueueService* service,
                                                  const base::Clock* clock,
                                                  base::Scheduler* scheduler,
                                                  metrics::Registry* registry) {
  auto server = std::make_unique<H2Server>(options, service, clock, scheduler);
  CQ_RETURN_IF_ERROR(server->Start());
  if (registry != nullptr) server->AddMetrics(*registry);
  return std::unique_ptr<GrpcServer>(std::move(server));
}

}  // namespace chronoq::grpc_api
