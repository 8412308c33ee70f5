// EXPERIMENTAL: gRPC over our own HTTP/2 server (h2_server.h). Each connection lives on one
// worker thread (its io_context) and owns an nghttp2 server session: what the socket reads goes
// through nghttp2_session_mem_recv, whose callbacks collect each stream's headers and body; a
// request complete (END_STREAM) is decoded and handed to the service; the answer (inline, or
// posted back to the connection's thread) is submitted as HEADERS, DATA and trailers; everything
// nghttp2 has to send after a read is written with one write (one write in flight at a time).
// Consume streams are h2_consume.h's from their HEADERS on. Deadlines (grpc-timeout): a timer per
// connection at the earliest, answering DEADLINE_EXCEEDED. Shutdown: GOAWAY (a notice, then the
// last stream taken), connections close as their calls are answered, or at the deadline.
#include "grpc_api/h2_server.h"

#include <fmt/format.h>
#include <nghttp2/nghttp2.h>

#include <algorithm>
#include <atomic>
#include <boost/asio.hpp>
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
#include "grpc_api/h2_consume.h"
#include "grpc_api/h2_routes.h"
#include "grpc_api/h2_wire.h"

namespace chronoq::grpc_api {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
constexpr const char* kLog = "cq.grpc";

// A waiting Pull takes no message this close to its deadline (as delay_queue_service.cc's).
constexpr std::chrono::milliseconds kDeadlineMargin{20};
// Shutdown: the final GOAWAY follows the notice after this (a round trip, for the streams the
// client opened meanwhile), unless the deadline is sooner.
constexpr std::chrono::milliseconds kGoawayDelay{50};
constexpr auto kNoDeadline = std::chrono::steady_clock::time_point::max();

using Answer = H2Answer;

// One HTTP/2 stream: a call.
struct Stream {
  std::string path;
  std::optional<std::string> authorization;
  // grpc-timeout: when the client gives up (max: never).
  std::chrono::steady_clock::time_point deadline = kNoDeadline;
  std::string body;                    // the request's bytes (gRPC frames)
  std::shared_ptr<H2Consume> consume;  // a Consume call
  // A parked Pull, cancelled when the stream closes first; `gone` tells its long poll.
  service::LongPollTicket ticket;
  std::shared_ptr<std::atomic<bool>> gone;
  bool refused = false;   // answered before its end (too large, deadline passed)
  bool answered = false;  // its status is submitted
  std::string out;        // the answer's DATA
  size_t out_pos = 0;
};

class H2Server;

class Conn final : public H2Host, public std::enable_shared_from_this<Conn> {
 public:
  Conn(H2Server* server, asio::io_context* ioc, tcp::socket sock)
      : server_(server), ioc_(ioc), sock_(std::move(sock)), timer_(*ioc) {}
  ~Conn() {
    if (session_ != nullptr) nghttp2_session_del(session_);
  }
  Conn(const Conn&) = delete;
  Conn& operator=(const Conn&) = delete;

  void Start();
  void Close();
  // Shutdown: GOAWAY announcing it (new streams still served), then GOAWAY with the last stream
  // received: the session closes once the calls in flight are answered.
  void Notice() {
    if (closed_) return;
    nghttp2_submit_shutdown_notice(session_);
    Flush();
  }
  void GoAway() {
    if (closed_) return;
    nghttp2_submit_goaway(session_, NGHTTP2_FLAG_NONE,
                          nghttp2_session_get_last_proc_stream_id(session_), NGHTTP2_NO_ERROR,
                          nullptr, 0);
    Flush();
  }
  // The answer of stream `id`, from any thread.
  void Complete(int32_t id, Answer a);

  // H2Host (a Consume stream's connection).
  nghttp2_session* session() override { return session_; }
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

 private:
  void Read();
  void Flush();
  void Submit(int32_t id, Answer a);
  void Dispatch(int32_t id, Stream* s);
  void OpenConsume(int32_t id, Stream* s);
  void CancelParked(Stream& s);
  // Deadlines: the timer at the earliest; Sweep answers the streams past theirs.
  void Arm(std::chrono::steady_clock::time_point t);
  void Sweep();
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
  static int OnFrameSend(nghttp2_session* session, const nghttp2_frame* frame, void* user);
  static ssize_t ReadBody(nghttp2_session* session, int32_t id, uint8_t* buf, size_t length,
                          uint32_t* data_flags, nghttp2_data_source* source, void* user);

  H2Server* server_;
  asio::io_context* ioc_;
  tcp::socket sock_;
  asio::steady_timer timer_;
  std::chrono::steady_clock::time_point armed_ = kNoDeadline;
  nghttp2_session* session_ = nullptr;
  std::unique_ptr<uint8_t[]> rbuf_ = std::make_unique<uint8_t[]>(kReadBytes);
  std::string wbuf_;
  bool writing_ = false;
  bool in_recv_ = false;
  bool in_send_ = false;  // in Flush (what its callbacks ask for goes with the same write)
  std::vector<UniqueFunction<void()>> after_send_;  // H2Host::AfterSend's
  bool closed_ = false;
  // The open streams (nghttp2's stream user data points into them; nghttp2_session_del does not
  // report the streams it drops).
  std::unordered_map<int32_t, std::unique_ptr<Stream>> streams_;
  static constexpr size_t kReadBytes = 64 * 1024;
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
    max_request_bytes_ = o.max_msg_bytes + kEnvelopeBytes;
  }
  ~H2Server() override { Shutdown(std::chrono::milliseconds(0)); }

  Status Start() {
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
    for (auto& w : workers_) w->thread = std::thread([w = w.get()] { w->ioc.run(); });
    CQ_LOG_WARN(kLog, "gRPC on the experimental nghttp2 engine: no health, reflection or TLS yet");
    return Status::Ok();
  }

  void AddMetrics(metrics::Registry& registry) {
    registry.Add([stats = stats_](metrics::TextWriter& w) { stats->Render(w); });
  }

  uint16_t port() const override { return port_; }
  size_t streams() const override { return streams_.size(); }
  void EndStreams() override { streams_.EndAll(); }
  Status ReloadTls(const tls::TlsIdentity&) override {
    return Status(Errc::kInvalidState, "the gRPC server is not using TLS");
  }

  void Shutdown(std::chrono::milliseconds deadline) override {
    if (workers_.empty() || stopping_.exchange(true)) return;
    const auto now = std::chrono::steady_clock::now();
    const auto until = now + deadline;
    streams_.EndAll();  // Consume streams end with OK
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

  const ApiContext* api() const { return &api_; }
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
      if (!ec) {
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
  int64_t max_request_bytes_ = 0;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::unique_ptr<tcp::acceptor> acceptor_;
  size_t next_ = 0;
  uint16_t port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> live_{0};
};

void Conn::Start() {
  nghttp2_session_callbacks* cbs = nullptr;
  nghttp2_session_callbacks_new(&cbs);
  nghttp2_session_callbacks_set_on_begin_headers_callback(cbs, OnBeginHeaders);
  nghttp2_session_callbacks_set_on_header_callback(cbs, OnHeader);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs, OnDataChunk);
  nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, OnFrameRecv);
  nghttp2_session_callbacks_set_on_stream_close_callback(cbs, OnStreamClose);
  nghttp2_session_callbacks_set_on_frame_send_callback(cbs, OnFrameSend);
  // The receive windows are given back as requests are handled (nghttp2_session_consume), not as
  // bytes arrive: a client is paced by what the server handles.
  nghttp2_option* option = nullptr;
  nghttp2_option_new(&option);
  nghttp2_option_set_no_auto_window_update(option, 1);
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
  timer_.cancel();
  for (auto& [id, stream] : streams_) {
    CancelParked(*stream);
    if (stream->consume != nullptr) stream->consume->OnClose();
  }
  // Writes handed to nghttp2 whose completion was not reported yet (a closing Flush).
  std::vector<UniqueFunction<void()>> fns = std::move(after_send_);
  after_send_.clear();
  for (auto& fn : fns) fn();
  server_->Unlist(ioc_, this);
}

void Conn::Read() {
  sock_.async_read_some(asio::buffer(rbuf_.get(), kReadBytes),
                        [self = shared_from_this()](boost::system::error_code ec, size_t n) {
                          if (self->closed_) return;
                          if (ec) return self->Close();
                          self->in_recv_ = true;
                          ssize_t r =
                              nghttp2_session_mem_recv(self->session_, self->rbuf_.get(), n);
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
  if (writing_ || closed_ || in_recv_ || in_send_) return;
  wbuf_.clear();
  in_send_ = true;
  for (;;) {
    const uint8_t* data = nullptr;
    ssize_t n = closed_ ? 0 : nghttp2_session_mem_send(session_, &data);
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
    if (nghttp2_session_want_read(session_) == 0 && nghttp2_session_want_write(session_) == 0) {
      Close();
    }
    return;
  }
  writing_ = true;
  asio::async_write(sock_, asio::buffer(wbuf_),
                    [self = shared_from_this()](boost::system::error_code ec, size_t) {
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
  // Reset by the client, closed, or answered already (its deadline passed first).
  if (s == nullptr || s->answered) return;
  s->answered = true;
  s->gone.reset();  // answered: nothing parked to cancel any more
  s->ticket.reset();
  if (a.code == 0) {
    s->out = std::move(a.body);
    nghttp2_data_provider body;
    body.source.ptr = s;
    body.read_callback = ReadBody;
    SubmitGrpcHeaders(session_, id, &body);
    return;
  }
  SubmitGrpcStatus(session_, id, a.code, a.message, false);  // Trailers-Only
}

ssize_t Conn::ReadBody(nghttp2_session* session, int32_t id, uint8_t* buf, size_t length,
                       uint32_t* data_flags, nghttp2_data_source* source, void*) {
  auto* s = static_cast<Stream*>(source->ptr);
  const size_t n = std::min(length, s->out.size() - s->out_pos);
  std::memcpy(buf, s->out.data() + s->out_pos, n);
  s->out_pos += n;
  if (s->out_pos == s->out.size()) {
    *data_flags |= NGHTTP2_DATA_FLAG_EOF | NGHTTP2_DATA_FLAG_NO_END_STREAM;
    if (SubmitGrpcStatus(session, id, 0, {}, true) != 0) {
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
    if (auto timeout = ParseGrpcTimeout(v)) {
      s->deadline = std::chrono::steady_clock::now() +
                    std::min<std::chrono::nanoseconds>(*timeout, std::chrono::hours(24 * 365));
    }
  }
  return 0;
}

int Conn::OnDataChunk(nghttp2_session* session, uint8_t, int32_t id, const uint8_t* data,
                      size_t len, void* user) {
  auto* s = static_cast<Stream*>(nghttp2_session_get_stream_user_data(session, id));
  if (s != nullptr && s->consume != nullptr) {
    s->consume->OnData(data, len);  // gives the window back as its requests are handled
    return 0;
  }
  // A unary request: buffered as it comes (up to its limit), its window given back at once.
  nghttp2_session_consume(session, id, len);
  if (s == nullptr || s->refused) return 0;
  auto* c = static_cast<Conn*>(user);
  if (static_cast<int64_t>(s->body.size() + len) > c->server_->max_request_bytes()) {
    // Refused before it is buffered whole; the rest of its DATA is dropped.
    c->Refuse(id, s, kGrpcResourceExhausted, RequestTooLarge(c->server_->max_request_bytes()));
    std::string().swap(s->body);
    return 0;
  }
  s->body.append(reinterpret_cast<const char*>(data), len);
  return 0;
}

int Conn::OnFrameRecv(nghttp2_session* session, const nghttp2_frame* frame, void* user) {
  if (frame->hd.type != NGHTTP2_DATA && frame->hd.type != NGHTTP2_HEADERS) return 0;
  const int32_t id = frame->hd.stream_id;
  auto* s = static_cast<Stream*>(nghttp2_session_get_stream_user_data(session, id));
  if (s == nullptr) return 0;
  auto* c = static_cast<Conn*>(user);
  if (frame->hd.type == NGHTTP2_HEADERS && frame->headers.cat == NGHTTP2_HCAT_REQUEST) {
    if (s->deadline != kNoDeadline) c->Arm(s->deadline);
    // A stream: served from its headers on.
    if (s->path == kConsumePath) c->OpenConsume(id, s);
  }
  if ((frame->hd.flags & NGHTTP2_FLAG_END_STREAM) == 0) return 0;
  if (s->consume != nullptr) {
    s->consume->OnRemoteEnd();
  } else if (!s->refused) {
    c->Dispatch(id, s);
  }
  return 0;
}

// A response ended (END_STREAM sent) while the client still sends: RST_STREAM(NO_ERROR) tells it
// to stop (a refused request, a Consume stream ended by the server).
int Conn::OnFrameSend(nghttp2_session* session, const nghttp2_frame* frame, void*) {
  if ((frame->hd.type == NGHTTP2_HEADERS || frame->hd.type == NGHTTP2_DATA) &&
      (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0 &&
      nghttp2_session_get_stream_remote_close(session, frame->hd.stream_id) == 0) {
    nghttp2_submit_rst_stream(session, NGHTTP2_FLAG_NONE, frame->hd.stream_id, NGHTTP2_NO_ERROR);
  }
  return 0;
}

int Conn::OnStreamClose(nghttp2_session* session, int32_t id, uint32_t, void* user) {
  auto* c = static_cast<Conn*>(user);
  auto it = c->streams_.find(id);
  if (it == c->streams_.end()) return 0;
  c->CancelParked(*it->second);
  if (it->second->consume != nullptr) it->second->consume->OnClose();
  c->streams_.erase(it);
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

void Conn::OpenConsume(int32_t id, Stream* s) {
  auto deadline = std::chrono::system_clock::time_point::max();
  if (s->deadline != kNoDeadline) {
    deadline = std::chrono::system_clock::now() +
               std::chrono::duration_cast<std::chrono::system_clock::duration>(
                   s->deadline - std::chrono::steady_clock::now());
  }
  s->consume = H2Consume::Open(this, shared_from_this(), server_->api(), id,
                               std::move(s->authorization), deadline, server_->max_request_bytes());
}

void Conn::Arm(std::chrono::steady_clock::time_point t) {
  if (t >= armed_ || closed_) return;
  armed_ = t;
  timer_.expires_at(t);
  timer_.async_wait([weak = weak_from_this()](boost::system::error_code ec) {
    if (ec == asio::error::operation_aborted) return;
    if (auto c = weak.lock()) c->Sweep();
  });
}

// The streams past their deadline: DEADLINE_EXCEEDED (a parked Pull cancelled, a Consume stream
// ended); the timer again at the next deadline.
void Conn::Sweep() {
  armed_ = kNoDeadline;
  if (closed_) return;
  const auto now = std::chrono::steady_clock::now();
  auto next = kNoDeadline;
  std::vector<int32_t> expired;
  for (auto& [id, s] : streams_) {
    if (s->deadline <= now) {
      expired.push_back(id);
    } else {
      next = std::min(next, s->deadline);
    }
  }
  for (int32_t id : expired) {
    auto it = streams_.find(id);
    if (it == streams_.end()) continue;
    Stream* s = it->second.get();
    s->deadline = kNoDeadline;
    if (s->consume != nullptr) {
      s->consume->OnDeadline();
    } else if (!s->answered) {
      // Answered now: the cancelled poll's (empty) answer, or the rest of the request, is
      // dropped.
      s->answered = true;
      s->refused = true;
      CancelParked(*s);
      SubmitGrpcStatus(session_, id, kGrpcDeadlineExceeded, "Deadline Exceeded", false);
    }
  }
  if (next != kNoDeadline) Arm(next);
  Flush();
}

// A request complete: its one message to the method of its path (h2_routes.h).
void Conn::Dispatch(int32_t id, Stream* s) {
  if (std::chrono::steady_clock::now() >= s->deadline) {
    return Submit(id, Answer{kGrpcDeadlineExceeded, "Deadline Exceeded", {}});
  }
  // One length-prefixed message, uncompressed.
  const std::string& b = s->body;
  if (b.size() < 5 || b[0] != 0 ||
      ((static_cast<size_t>(static_cast<uint8_t>(b[1])) << 24) |
       (static_cast<size_t>(static_cast<uint8_t>(b[2])) << 16) |
       (static_cast<size_t>(static_cast<uint8_t>(b[3])) << 8) |
       static_cast<size_t>(static_cast<uint8_t>(b[4]))) != b.size() - 5) {
    return Submit(id,
                  Answer{kGrpcInternal, "the request is not one uncompressed gRPC message", {}});
  }
  H2Call call;
  call.api = server_->api();
  call.authorization = std::move(s->authorization);
  call.request = std::string_view(b).substr(5);
  call.reply = [self = shared_from_this(), id](Answer a) { self->Complete(id, std::move(a)); };
  if (s->path == "/chronoq.v1.DelayQueue/Pull") {
    s->gone = std::make_shared<std::atomic<bool>>(false);
    const auto until = s->deadline == kNoDeadline ? s->deadline : s->deadline - kDeadlineMargin;
    call.alive = [gone = s->gone, until] {
      return !gone->load() && std::chrono::steady_clock::now() < until;
    };
  }
  RunUnary(s->path, std::move(call), &s->ticket);
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
