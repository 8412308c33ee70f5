// EXPERIMENTAL: gRPC over our own HTTP/2 server (h2_server.h). Each connection lives on one
// worker thread (its io_context) and owns an nghttp2 server session: what the socket reads goes
// through nghttp2_session_mem_recv, whose callbacks collect each stream's headers and body; a
// request complete (END_STREAM) is decoded and handed to the service; the answer (inline, or
// posted back to the connection's thread) is submitted as HEADERS, DATA and trailers; everything
// nghttp2 has to send after a read is written with one write (one write in flight at a time).
#include "grpc_api/h2_server.h"

#include <fmt/format.h>
#include <nghttp2/nghttp2.h>

#include <algorithm>
#include <atomic>
#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <chrono>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "base/log.h"
#include "grpc_api/api_context.h"
#include "grpc_api/h2_limits.h"
#include "grpc_api/h2_routes.h"
#include "grpc_api/h2_stream.h"
#include "tls/server_context.h"

namespace chronoq::grpc_api {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
constexpr const char* kLog = "cq.grpc";

// gRPC status codes used here.
constexpr int kInternal = 13;
// A waiting Pull takes no message this close to its deadline (as delay_queue_service.cc's).
constexpr std::chrono::milliseconds kDeadlineMargin{20};
constexpr int kResourceExhausted = 8;

// grpc-timeout: 1 to 8 digits and a unit (H, M, S, m, u, n); anything else: no deadline.
std::chrono::nanoseconds ParseTimeout(std::string_view v) {
  constexpr auto kNever = std::chrono::nanoseconds(std::chrono::hours(24 * 365));
  if (v.size() < 2 || v.size() > 9) return kNever;
  int64_t n = 0;
  for (char c : v.substr(0, v.size() - 1)) {
    if (c < '0' || c > '9') return kNever;
    n = n * 10 + (c - '0');
  }
  switch (v.back()) {
    case 'H':
      return std::chrono::hours(n);
    case 'M':
      return std::chrono::minutes(n);
    case 'S':
      return std::chrono::seconds(n);
    case 'm':
      return std::chrono::milliseconds(n);
    case 'u':
      return std::chrono::microseconds(n);
    case 'n':
      return std::chrono::nanoseconds(n);
    default:
      return kNever;
  }
}

nghttp2_nv Nv(std::string_view name, std::string_view value, uint8_t flags) {
  return nghttp2_nv{reinterpret_cast<uint8_t*>(const_cast<char*>(name.data())),
                    reinterpret_cast<uint8_t*>(const_cast<char*>(value.data())), name.size(),
                    value.size(), flags};
}
// A name and value that outlive the submission (string literals).
nghttp2_nv StaticNv(std::string_view name, std::string_view value) {
  return Nv(name, value, NGHTTP2_NV_FLAG_NO_COPY_NAME | NGHTTP2_NV_FLAG_NO_COPY_VALUE);
}

using Answer = H2Answer;

// One HTTP/2 stream: a call.
struct Stream {
  std::string path;
  std::optional<std::string> authorization;
  // grpc-timeout: when the client gives up (max: never).
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  std::string body;  // the request's bytes (gRPC frames)
  // A parked Pull, cancelled when the stream closes first; `gone` tells its long poll.
  service::LongPollTicket ticket;
  std::shared_ptr<std::atomic<bool>> gone;
  bool refused = false;  // answered before its end (too large)
  std::string out;       // the answer's DATA
  size_t out_pos = 0;
  // A call of the standard services (health, reflection; h2_stream.h): its own deframing and
  // writing.
  std::shared_ptr<H2StreamState> streaming;
};

class H2Server;

class Conn : public std::enable_shared_from_this<Conn> {
 public:
  Conn(H2Server* server, asio::io_context* ioc, tcp::socket sock);
  ~Conn() {
    if (session_ != nullptr) nghttp2_session_del(session_);
  }
  Conn(const Conn&) = delete;
  Conn& operator=(const Conn&) = delete;

  void Start();
  void Close();
  // Each sweep of its worker (h2_limits.h): closes a connection whose TLS handshake is late, ends
  // one with no call open for the idle timeout.
  void Sweep(std::chrono::steady_clock::time_point now);
  // Ends the session: GOAWAY, then closes once what is in flight is written.
  void Terminate() {
    if (closed_) return;
    if (session_ == nullptr) return Close();  // in its TLS handshake
    nghttp2_session_terminate_session(session_, NGHTTP2_NO_ERROR);
    Flush();
  }
  // The answer of stream `id`, from any thread.
  void Complete(int32_t id, Answer a);
  // Standard services (h2_stream.h): opens the call at its HEADERS, routes its frames; true when
  // the frame was the streaming call's.
  bool StreamingFrame(const nghttp2_frame* frame, Stream* s);

 private:
  void StartSession();
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
  void Flush();
  void Submit(int32_t id, Answer a);
  void Dispatch(int32_t id, Stream* s);
  void CancelParked(Stream& s);
  void Refuse(int32_t id, Stream* s, int code, std::string message) {
    s->refused = true;
    Submit(id, Answer{code, std::move(message), {}});
  }

  static int OnBeginHeaders(nghttp2_session* session, const nghttp2_frame* frame, void* user);
  static int OnHeader(nghttp2_session* session, const nghttp2_frame* frame, const uint8_t* name,
                      size_t namelen, const uint8_t* value, size_t valuelen, uint8_t flags,
                      void* user);
  static int OnDataChunk(nghttp2_session* session, uint8_t flags, int32_t id, const uint8_t* data,
                         size_t len, void* user);
  static int OnFrameRecv(nghttp2_session* session, const nghttp2_frame* frame, void* user);
  static int OnStreamClose(nghttp2_session* session, int32_t id, uint32_t error_code, void* user);
  static ssize_t ReadBody(nghttp2_session* session, int32_t id, uint8_t* buf, size_t length,
                          uint32_t* data_flags, nghttp2_data_source* source, void* user);

  H2Server* server_;
  asio::io_context* ioc_;
  tcp::socket sock_;
  nghttp2_session* session_ = nullptr;
  std::unique_ptr<uint8_t[]> rbuf_ = std::make_unique<uint8_t[]>(kReadBytes);
  std::string wbuf_;
  bool writing_ = false;
  bool in_recv_ = false;
  bool closed_ = false;
  // The open streams (nghttp2's stream user data points into them; nghttp2_session_del does not
  // report the streams it drops).
  std::unordered_map<int32_t, std::unique_ptr<Stream>> streams_;
  static constexpr size_t kReadBytes = 64 * 1024;
  // Limits: TLS (null: h2c) and its handshake's deadline, since when no call is open, the
  // client's budget of resets.
  std::unique_ptr<asio::ssl::stream<tcp::socket&>> tls_;
  bool handshaking_ = false;
  std::chrono::steady_clock::time_point handshake_deadline_;
  std::chrono::steady_clock::time_point idle_since_ = std::chrono::steady_clock::now();
  ResetBudget resets_;
};

class H2Server final : public GrpcServer {
 public:
  H2Server(const GrpcOptions& o, service::QueueService* service)
      : opts_(o), stats_(std::make_shared<MethodStats>()) {
    api_.service = service;
    api_.stats = stats_.get();
    api_.authenticator = o.authenticator;
    max_request_bytes_ = o.max_msg_bytes + kEnvelopeBytes;
    services_ = std::make_unique<H2Services>(&api_);
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
      Sweep(w.get());
      w->thread = std::thread([w = w.get()] { w->ioc.run(); });
    }
    CQ_LOG_WARN(kLog, "gRPC on the experimental nghttp2 engine: no Consume yet");
    return Status::Ok();
  }

  void AddMetrics(metrics::Registry& registry) {
    registry.Add([stats = stats_](metrics::TextWriter& w) { stats->Render(w); });
    registry.Add([refused = refused_](metrics::TextWriter& w) {
      w.Family("cq_grpc_connections_refused_total",
               "gRPC connections closed at once because max-connections were open (nghttp2 "
               "engine)",
               metrics::MetricType::kCounter);
      w.Sample("cq_grpc_connections_refused_total", {}, static_cast<double>(refused->load()));
    });
  }

  uint16_t port() const override { return port_; }
  size_t streams() const override { return 0; }
  void EndStreams() override {}
  Status ReloadTls(const tls::TlsIdentity& identity) override {
    if (tls_ == nullptr) return Status(Errc::kInvalidState, "the gRPC server is not using TLS");
    return tls_->Reload(identity);
  }

  void Shutdown(std::chrono::milliseconds deadline) override {
    if (workers_.empty() || stopping_.exchange(true)) return;
    services_->Shutdown();  // health: NOT_SERVING
    asio::post(workers_[0]->ioc, [this] {
      boost::system::error_code ec;
      acceptor_->close(ec);
    });
    for (auto& w : workers_) {
      asio::post(w->ioc, [w = w.get()] {
        w->sweep.cancel();
        // Terminate may close (and unlist) the connection: iterate over a copy.
        std::vector<std::shared_ptr<Conn>> conns;
        for (Conn* c : w->conns) conns.push_back(c->shared_from_this());
        for (auto& c : conns) c->Terminate();
      });
    }
    const auto until = std::chrono::steady_clock::now() + deadline;
    while (live_.load() > 0 && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    for (auto& w : workers_) {
      asio::post(w->ioc, [w = w.get()] {
        std::vector<std::shared_ptr<Conn>> conns;
        for (Conn* c : w->conns) conns.push_back(c->shared_from_this());
        for (auto& c : conns) c->Close();
      });
      w->guard.reset();
    }
    for (auto& w : workers_) {
      if (w->thread.joinable()) w->thread.join();
    }
  }

  const ApiContext* api() const { return &api_; }
  H2Services* services() const { return services_.get(); }
  const GrpcOptions& options() const { return opts_; }
  const tls::ServerContext* tls() const { return tls_.get(); }
  int64_t max_request_bytes() const { return max_request_bytes_; }
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
    asio::steady_timer sweep{ioc};
  };

  // Each connection's limits, a few times per the shortest timeout (at most each second).
  void Sweep(Worker* w) {
    const auto every = std::clamp<std::chrono::milliseconds>(
        std::min(opts_.idle_timeout, opts_.handshake_timeout) / 4, std::chrono::milliseconds(10),
        std::chrono::milliseconds(1000));
    w->sweep.expires_after(every);
    w->sweep.async_wait([this, w](boost::system::error_code ec) {
      if (ec || stopping_.load()) return;
      const auto now = std::chrono::steady_clock::now();
      std::vector<std::shared_ptr<Conn>> conns;
      for (Conn* c : w->conns) conns.push_back(c->shared_from_this());
      for (auto& c : conns) c->Sweep(now);
      Sweep(w);
    });
  }

  void Accept() {
    Worker* w = workers_[next_++ % workers_.size()].get();
    acceptor_->async_accept(w->ioc, [this, w](boost::system::error_code ec, tcp::socket sock) {
      if (stopping_.load() || ec == asio::error::operation_aborted) return;
      if (!ec && live_.load() >= opts_.max_connections) {
        // max-connections: closed at once (the client sees the connection end, UNAVAILABLE).
        boost::system::error_code ignored;
        sock.close(ignored);
        refused_->fetch_add(1);
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
  ApiContext api_;
  std::unique_ptr<H2Services> services_;  // health, reflection
  int64_t max_request_bytes_ = 0;
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
      resets_(server->options().rst_stream_burst, server->options().rst_stream_per_second) {}

// TLS first (ALPN h2, tls/server_context.h), with the context current now.
void Conn::Start() {
  if (server_->tls() == nullptr) return StartSession();
  {
    asio::ssl::context ctx(server_->tls()->Acquire());  // the stream takes its own reference
    tls_ = std::make_unique<asio::ssl::stream<tcp::socket&>>(sock_, ctx);
  }
  handshaking_ = true;
  handshake_deadline_ = std::chrono::steady_clock::now() + server_->options().handshake_timeout;
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

void Conn::Sweep(std::chrono::steady_clock::time_point now) {
  if (closed_) return;
  if (handshaking_) {
    if (now >= handshake_deadline_) Close();
    return;
  }
  if (session_ != nullptr && streams_.empty() &&
      now - idle_since_ >= server_->options().idle_timeout) {
    Terminate();
  }
}

void Conn::StartSession() {
  nghttp2_session_callbacks* cbs = nullptr;
  nghttp2_session_callbacks_new(&cbs);
  nghttp2_session_callbacks_set_on_begin_headers_callback(cbs, OnBeginHeaders);
  nghttp2_session_callbacks_set_on_header_callback(cbs, OnHeader);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs, OnDataChunk);
  nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, OnFrameRecv);
  nghttp2_session_callbacks_set_on_stream_close_callback(cbs, OnStreamClose);
  // PING and SETTINGS floods: a client that sends them without reading our acknowledgements
  // gets the connection closed once this many wait to be written (nghttp2's default, explicit).
  nghttp2_option* option = nullptr;
  nghttp2_option_new(&option);
  nghttp2_option_set_max_outbound_ack(option, 1000);
  nghttp2_session_server_new2(&session_, cbs, this, option);
  nghttp2_option_del(option);
  nghttp2_session_callbacks_del(cbs);
  const nghttp2_settings_entry settings[] = {
      {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 1000},
      {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 1 << 20},
  };
  nghttp2_submit_settings(session_, NGHTTP2_FLAG_NONE, settings, std::size(settings));
  // The connection's receive window too (the settings above only set the streams').
  nghttp2_session_set_local_window_size(session_, NGHTTP2_FLAG_NONE, 0, 4 << 20);
  Flush();
  Read();
}

void Conn::Close() {
  if (closed_) return;
  closed_ = true;
  boost::system::error_code ec;
  sock_.shutdown(tcp::socket::shutdown_both, ec);
  sock_.close(ec);
  for (auto& [id, stream] : streams_) {
    CancelParked(*stream);
    if (stream->streaming != nullptr) stream->streaming->OnClose();
  }
  server_->Unlist(ioc_, this);
}

void Conn::Read() {
  ReadSome([self = shared_from_this()](boost::system::error_code ec, size_t n) {
    if (self->closed_) return;
    if (ec) return self->Close();
    self->in_recv_ = true;
    ssize_t r = nghttp2_session_mem_recv(self->session_, self->rbuf_.get(), n);
    self->in_recv_ = false;
    if (r < 0) {
      CQ_LOG_DEBUG(kLog, "HTTP/2 error: {}", nghttp2_strerror(int(r)));
      return self->Close();
    }
    self->Flush();
    if (!self->closed_) self->Read();
  });
}

void Conn::Flush() {
  if (writing_ || closed_ || in_recv_) return;
  wbuf_.clear();
  for (;;) {
    const uint8_t* data = nullptr;
    ssize_t n = nghttp2_session_mem_send(session_, &data);
    if (n < 0) return Close();
    if (n == 0) break;
    wbuf_.append(reinterpret_cast<const char*>(data), static_cast<size_t>(n));
  }
  if (wbuf_.empty()) {
    if (nghttp2_session_want_read(session_) == 0 && nghttp2_session_want_write(session_) == 0) {
      Close();
    }
    return;
  }
  writing_ = true;
  WriteAll([self = shared_from_this()](boost::system::error_code ec, size_t) {
    self->writing_ = false;
    if (ec) return self->Close();
    self->Flush();
  });
}

void Conn::Complete(int32_t id, Answer a) {
  if (ioc_->get_executor().running_in_this_thread()) {
    Submit(id, std::move(a));
    Flush();  // does nothing while the session reads (the reader flushes after)
    return;
  }
  asio::post(*ioc_, [self = shared_from_this(), id, a = std::move(a)]() mutable {
    self->Submit(id, std::move(a));
    self->Flush();
  });
}

void Conn::Submit(int32_t id, Answer a) {
  if (closed_) return;
  auto* s = static_cast<Stream*>(nghttp2_session_get_stream_user_data(session_, id));
  if (s == nullptr) return;  // reset by the client, or closed
  s->gone.reset();           // answered: nothing parked to cancel any more
  s->ticket.reset();
  if (a.code == 0) {
    s->out = std::move(a.body);
    const nghttp2_nv nva[] = {StaticNv(":status", "200"),
                              StaticNv("content-type", "application/grpc")};
    nghttp2_data_provider body;
    body.source.ptr = s;
    body.read_callback = ReadBody;
    nghttp2_submit_response(session_, id, nva, std::size(nva), &body);
    return;
  }
  // Trailers-Only: the status in the one HEADERS frame.
  const std::string code = std::to_string(a.code);
  const std::string message = GrpcPercentEncode(a.message);
  const nghttp2_nv nva[] = {StaticNv(":status", "200"),
                            StaticNv("content-type", "application/grpc"),
                            Nv("grpc-status", code, NGHTTP2_NV_FLAG_NO_COPY_NAME),
                            Nv("grpc-message", message, NGHTTP2_NV_FLAG_NO_COPY_NAME)};
  nghttp2_submit_response(session_, id, nva, message.empty() ? 3 : 4, nullptr);
}

ssize_t Conn::ReadBody(nghttp2_session* session, int32_t id, uint8_t* buf, size_t length,
                       uint32_t* data_flags, nghttp2_data_source* source, void*) {
  auto* s = static_cast<Stream*>(source->ptr);
  const size_t n = std::min(length, s->out.size() - s->out_pos);
  std::memcpy(buf, s->out.data() + s->out_pos, n);
  s->out_pos += n;
  if (s->out_pos == s->out.size()) {
    *data_flags |= NGHTTP2_DATA_FLAG_EOF | NGHTTP2_DATA_FLAG_NO_END_STREAM;
    const nghttp2_nv trailers[] = {StaticNv("grpc-status", "0")};
    if (nghttp2_submit_trailer(session, id, trailers, 1) != 0) {
      *data_flags &= ~NGHTTP2_DATA_FLAG_NO_END_STREAM;
    }
  }
  return static_cast<ssize_t>(n);
}

int Conn::OnBeginHeaders(nghttp2_session* session, const nghttp2_frame* frame, void* user) {
  if (frame->hd.type == NGHTTP2_HEADERS && frame->headers.cat == NGHTTP2_HCAT_REQUEST) {
    auto& slot = static_cast<Conn*>(user)->streams_[frame->hd.stream_id];
    slot = std::make_unique<Stream>();
    nghttp2_session_set_stream_user_data(session, frame->hd.stream_id, slot.get());
  }
  return 0;
}

int Conn::OnHeader(nghttp2_session* session, const nghttp2_frame* frame, const uint8_t* name,
                   size_t namelen, const uint8_t* value, size_t valuelen, uint8_t, void*) {
  if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST) return 0;
  auto* s =
      static_cast<Stream*>(nghttp2_session_get_stream_user_data(session, frame->hd.stream_id));
  if (s == nullptr) return 0;
  std::string_view n(reinterpret_cast<const char*>(name), namelen);
  std::string_view v(reinterpret_cast<const char*>(value), valuelen);
  if (n == ":path") {
    s->path = v;
  } else if (n == "authorization") {
    s->authorization = std::string(v);
  } else if (n == "grpc-timeout") {
    s->deadline = std::chrono::steady_clock::now() + ParseTimeout(v);
  }
  return 0;
}

int Conn::OnDataChunk(nghttp2_session* session, uint8_t, int32_t id, const uint8_t* data,
                      size_t len, void* user) {
  auto* s = static_cast<Stream*>(nghttp2_session_get_stream_user_data(session, id));
  if (s == nullptr || s->refused) return 0;
  if (s->streaming != nullptr) {
    s->streaming->OnData(data, len);
    return 0;
  }
  auto* c = static_cast<Conn*>(user);
  if (static_cast<int64_t>(s->body.size() + len) > c->server_->max_request_bytes()) {
    // Refused before it is buffered whole; the rest of its DATA is dropped.
    c->Refuse(id, s, kResourceExhausted,
              fmt::format("request larger than {} bytes", c->server_->max_request_bytes()));
    std::string().swap(s->body);
    return 0;
  }
  s->body.append(reinterpret_cast<const char*>(data), len);
  return 0;
}

int Conn::OnFrameRecv(nghttp2_session* session, const nghttp2_frame* frame, void* user) {
  if (frame->hd.type == NGHTTP2_RST_STREAM &&
      !static_cast<Conn*>(user)->resets_.Take(std::chrono::steady_clock::now())) {
    CQ_LOG_DEBUG(kLog, "a client resets streams too fast: GOAWAY");
    nghttp2_session_terminate_session(session, NGHTTP2_ENHANCE_YOUR_CALM);
    return 0;
  }
  if ((frame->hd.type == NGHTTP2_HEADERS || frame->hd.type == NGHTTP2_DATA) &&
      static_cast<Conn*>(user)->StreamingFrame(
          frame, static_cast<Stream*>(
                     nghttp2_session_get_stream_user_data(session, frame->hd.stream_id)))) {
    return 0;
  }
  if ((frame->hd.type != NGHTTP2_DATA && frame->hd.type != NGHTTP2_HEADERS) ||
      (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) == 0) {
    return 0;
  }
  auto* s =
      static_cast<Stream*>(nghttp2_session_get_stream_user_data(session, frame->hd.stream_id));
  if (s != nullptr && !s->refused) static_cast<Conn*>(user)->Dispatch(frame->hd.stream_id, s);
  return 0;
}

int Conn::OnStreamClose(nghttp2_session* session, int32_t id, uint32_t, void* user) {
  auto* c = static_cast<Conn*>(user);
  auto it = c->streams_.find(id);
  if (it == c->streams_.end()) return 0;
  c->CancelParked(*it->second);
  if (it->second->streaming != nullptr) it->second->streaming->OnClose();
  c->streams_.erase(it);
  if (c->streams_.empty()) c->idle_since_ = std::chrono::steady_clock::now();
  nghttp2_session_set_stream_user_data(session, id, nullptr);
  return 0;
}

// A Pull still parked (its answer not written) when its stream or connection closes: the client
// went, or its deadline passed; it takes nothing more.
void Conn::CancelParked(Stream& s) {
  if (s.gone == nullptr) return;
  s.gone->store(true);
  server_->api()->service->CancelLongPoll(s.ticket);
  s.gone.reset();
}

bool Conn::StreamingFrame(const nghttp2_frame* frame, Stream* s) {
  if (s == nullptr) return false;
  const int32_t id = frame->hd.stream_id;
  if (frame->hd.type == NGHTTP2_HEADERS && frame->headers.cat == NGHTTP2_HCAT_REQUEST &&
      H2Services::Serves(s->path)) {
    s->streaming = server_->services()->Open(
        s->path, server_->max_request_bytes(), [weak = weak_from_this(), ioc = ioc_, id] {
          asio::post(*ioc, [weak, id] {
            auto self = weak.lock();
            if (self == nullptr || self->closed_) return;
            auto* st =
                static_cast<Stream*>(nghttp2_session_get_stream_user_data(self->session_, id));
            if (st == nullptr || st->streaming == nullptr) return;
            st->streaming->Pump(self->session_, id);
            self->Flush();
          });
        });
  }
  if (s->streaming == nullptr) return false;
  if ((frame->hd.type == NGHTTP2_DATA || frame->hd.type == NGHTTP2_HEADERS) &&
      (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0) {
    s->streaming->OnHalfClose();
  }
  return true;
}

// A request complete: its one message to the method of its path (h2_routes.h).
void Conn::Dispatch(int32_t id, Stream* s) {
  // One length-prefixed message, uncompressed.
  const std::string& b = s->body;
  if (b.size() < 5 || b[0] != 0 ||
      ((static_cast<size_t>(static_cast<uint8_t>(b[1])) << 24) |
       (static_cast<size_t>(static_cast<uint8_t>(b[2])) << 16) |
       (static_cast<size_t>(static_cast<uint8_t>(b[3])) << 8) |
       static_cast<size_t>(static_cast<uint8_t>(b[4]))) != b.size() - 5) {
    return Submit(id, Answer{kInternal, "the request is not one uncompressed gRPC message", {}});
  }
  H2Call call;
  call.api = server_->api();
  call.authorization = std::move(s->authorization);
  call.request = std::string_view(b).substr(5);
  call.reply = [self = shared_from_this(), id](Answer a) { self->Complete(id, std::move(a)); };
  if (s->path == "/chronoq.v1.DelayQueue/Pull") {
    s->gone = std::make_shared<std::atomic<bool>>(false);
    const auto until = s->deadline == std::chrono::steady_clock::time_point::max()
                           ? s->deadline
                           : s->deadline - kDeadlineMargin;
    call.alive = [gone = s->gone, until] {
      return !gone->load() && std::chrono::steady_clock::now() < until;
    };
  }
  RunUnary(s->path, std::move(call), &s->ticket);
}

}  // namespace

Result<std::unique_ptr<GrpcServer>> StartH2Server(const GrpcOptions& options,
                                                  service::QueueService* service,
                                                  metrics::Registry* registry) {
  auto server = std::make_unique<H2Server>(options, service);
  CQ_RETURN_IF_ERROR(server->Start());
  if (registry != nullptr) server->AddMetrics(*registry);
  return std::unique_ptr<GrpcServer>(std::move(server));
}

}  // namespace chronoq::grpc_api
