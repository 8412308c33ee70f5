#include "bench/h2_grpc_client.h"

#include <fcntl.h>
#include <nghttp2/nghttp2.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <unordered_map>

#include "base/block_cache.h"

namespace chronoq::bench {
namespace {

// A call's stream: its request bytes still to send, its answer's bytes not yet framed.
struct H2Stream {
  GrpcCall* call = nullptr;
  std::string out;  // length-prefixed request messages
  size_t out_pos = 0;
  bool last = false;      // no more request messages after `out`
  bool deferred = false;  // nghttp2 waits for resume_data
  std::string in;         // a partial answer message
  int status = -1;        // grpc-status
  std::string message;    // grpc-message, or why the stream ended without a status

  void Reset() {
    call = nullptr;
    out.clear();
    out_pos = 0;
    last = deferred = false;
    in.clear();
    status = -1;
    message.clear();
  }
};

nghttp2_nv Nv(std::string_view name, std::string_view value, uint8_t flags) {
  return nghttp2_nv{reinterpret_cast<uint8_t*>(const_cast<char*>(name.data())),
                    reinterpret_cast<uint8_t*>(const_cast<char*>(value.data())), name.size(),
                    value.size(), flags};
}
constexpr uint8_t kNoCopy = NGHTTP2_NV_FLAG_NO_COPY_NAME | NGHTTP2_NV_FLAG_NO_COPY_VALUE;

void AppendFramed(std::string* out, std::string_view message) {
  const auto n = static_cast<uint32_t>(message.size());
  const char prefix[5] = {0, static_cast<char>(n >> 24), static_cast<char>(n >> 16),
                          static_cast<char>(n >> 8), static_cast<char>(n)};
  out->append(prefix, 5);
  out->append(message);
}

// Hands each complete length-prefixed message at the front of `data` to `call`; returns the
// bytes consumed.
size_t DeliverMessages(std::string_view data, GrpcCall* call) {
  size_t pos = 0;
  while (data.size() - pos >= 5) {
    const auto* p = reinterpret_cast<const unsigned char*>(data.data() + pos);
    const size_t len = (size_t{p[1]} << 24) | (size_t{p[2]} << 16) | (size_t{p[3]} << 8) | p[4];
    if (data.size() - pos - 5 < len) break;
    call->OnMessage(data.substr(pos + 5, len));
    pos += 5 + len;
  }
  return pos;
}

}  // namespace

struct GrpcH2Loop::Conn {
  GrpcH2Loop* loop = nullptr;
  int fd = -1;
  std::unique_ptr<tls::ClientSession> tls;  // over TLS only
  nghttp2_session* session = nullptr;
  std::string out;  // bytes nghttp2 produced, not yet written
  size_t out_pos = 0;
  bool dead = false;
  bool write_interest = false;
  bool dirty = false;  // nghttp2 may have frames to send
  std::unordered_map<int32_t, std::unique_ptr<H2Stream>> streams;  // the open calls
  std::vector<std::unique_ptr<H2Stream>> pool;                     // streams to reuse

  ~Conn() {
    if (session != nullptr) nghttp2_session_del(session);
    tls.reset();
    if (fd >= 0) ::close(fd);
  }

  std::unique_ptr<H2Stream> NewStream() {
    if (pool.empty()) return std::make_unique<H2Stream>();
    std::unique_ptr<H2Stream> s = std::move(pool.back());
    pool.pop_back();
    return s;
  }
  void Release(std::unique_ptr<H2Stream> s) {
    s->Reset();
    pool.push_back(std::move(s));
  }
};

// nghttp2's callbacks (a friend: they close calls and count them).
struct H2Callbacks {
  static int OnHeader(nghttp2_session* session, const nghttp2_frame* frame, const uint8_t* name,
                      size_t namelen, const uint8_t* value, size_t valuelen, uint8_t /*flags*/,
                      void* /*user*/) {
    if (frame->hd.type != NGHTTP2_HEADERS) return 0;
    auto* s =
        static_cast<H2Stream*>(nghttp2_session_get_stream_user_data(session, frame->hd.stream_id));
    if (s == nullptr) return 0;
    std::string_view n(reinterpret_cast<const char*>(name), namelen);
    std::string_view v(reinterpret_cast<const char*>(value), valuelen);
    if (n == "grpc-status") {
      int status = -1;
      std::from_chars(v.data(), v.data() + v.size(), status);
      s->status = status;
    } else if (n == "grpc-message") {
      s->message.assign(v);
    } else if (n == ":status" && v != "200") {
      s->message = "HTTP status " + std::string(v);
    }
    return 0;
  }

  static int OnDataChunk(nghttp2_session* session, uint8_t /*flags*/, int32_t id,
                         const uint8_t* data, size_t len, void* /*user*/) {
    auto* s = static_cast<H2Stream*>(nghttp2_session_get_stream_user_data(session, id));
    if (s == nullptr || s->call == nullptr) return 0;
    std::string_view chunk(reinterpret_cast<const char*>(data), len);
    if (s->in.empty()) {
      // The usual case: whole messages in the chunk, framed in place.
      const size_t used = DeliverMessages(chunk, s->call);
      s->in.assign(chunk.substr(used));
    } else {
      s->in.append(chunk);
      s->in.erase(0, DeliverMessages(s->in, s->call));
    }
    s->call->OnReadBatch();
    return 0;
  }

  static int OnStreamClose(nghttp2_session* /*session*/, int32_t id, uint32_t error_code,
                           void* user) {
    auto* c = static_cast<GrpcH2Loop::Conn*>(user);
    auto it = c->streams.find(id);
    if (it == c->streams.end()) return 0;
    std::unique_ptr<H2Stream> s = std::move(it->second);
    c->streams.erase(it);
    --c->loop->open_calls_;
    GrpcCall* call = s->call;
    const int status = s->status;
    std::string message = std::move(s->message);
    if (status < 0 && message.empty()) {
      message = error_code != 0 ? std::string("stream reset: ") + nghttp2_http2_strerror(error_code)
                                : "the stream ended without grpc-status";
    }
    c->Release(std::move(s));
    c->dirty = true;
    if (call != nullptr) call->OnClose(status, message);
    return 0;
  }

  static ssize_t ReadBody(nghttp2_session* /*session*/, int32_t /*id*/, uint8_t* buf, size_t length,
                          uint32_t* data_flags, nghttp2_data_source* source, void* /*user*/) {
    auto* s = static_cast<H2Stream*>(source->ptr);
    const size_t n = std::min(length, s->out.size() - s->out_pos);
    std::memcpy(buf, s->out.data() + s->out_pos, n);
    s->out_pos += n;
    if (s->out_pos == s->out.size()) {
      s->out.clear();
      s->out_pos = 0;
      if (s->last) {
        *data_flags |= NGHTTP2_DATA_FLAG_EOF;
      } else if (n == 0) {
        s->deferred = true;
        return NGHTTP2_ERR_DEFERRED;
      }
    }
    return static_cast<ssize_t>(n);
  }
};

GrpcH2Loop::GrpcH2Loop(client::Endpoint ep, std::string authorization)
    : ep_(std::move(ep)), authorization_(std::move(authorization)) {
  authority_ = ep_.host + ":" + std::to_string(ep_.port);
  if (ep_.tls) ep_.tls_options.alpn = "h2";  // gRPC over TLS is h2 by ALPN
  epfd_ = ::epoll_create1(EPOLL_CLOEXEC);
}

GrpcH2Loop::~GrpcH2Loop() {
  conns_.clear();
  if (epfd_ >= 0) ::close(epfd_);
}

Status GrpcH2Loop::Connect(int n) {
  nghttp2_session_callbacks* cbs = nullptr;
  nghttp2_session_callbacks_new(&cbs);
  nghttp2_session_callbacks_set_on_header_callback(cbs, &H2Callbacks::OnHeader);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs, &H2Callbacks::OnDataChunk);
  nghttp2_session_callbacks_set_on_stream_close_callback(cbs, &H2Callbacks::OnStreamClose);
  // Less work per call: no HTTP messaging checks (the calls read :status and grpc-status
  // themselves), no closed streams kept for priorities.
  nghttp2_option* options = nullptr;
  nghttp2_option_new(&options);
  nghttp2_option_set_no_http_messaging(options, 1);
  nghttp2_option_set_no_closed_streams(options, 1);
  // nghttp2's blocks kept per thread for the next calls (base/block_cache.h), as the server's.
  static nghttp2_mem mem{nullptr, base::block_cache::Malloc, base::block_cache::Free,
                         base::block_cache::Calloc, base::block_cache::Realloc};
  Status result = Status::Ok();
  for (int i = 0; i < n && result.ok(); ++i) {
    auto conn = client::HttpConnection::Connect(ep_);
    if (!conn.has_value()) {
      result = conn.error();
      break;
    }
    auto c = std::make_unique<Conn>();
    c->loop = this;
    c->tls = conn->ReleaseTls();
    c->fd = conn->ReleaseFd();  // the loop owns the socket (and its TLS session) from here
    ::fcntl(c->fd, F_SETFL, ::fcntl(c->fd, F_GETFL) | O_NONBLOCK);
    nghttp2_session_client_new3(&c->session, cbs, c.get(), options, &mem);
    // Large windows: the answers (Consume's messages) flow without waiting for WINDOW_UPDATEs.
    const nghttp2_settings_entry settings[] = {{NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
                                               {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 1 << 24}};
    nghttp2_submit_settings(c->session, NGHTTP2_FLAG_NONE, settings, 2);
    nghttp2_session_set_local_window_size(c->session, NGHTTP2_FLAG_NONE, 0, 1 << 30);
    c->dirty = true;
    result = AddToEpoll(epfd_, c->fd, c.get());
    conns_.push_back(std::move(c));
  }
  nghttp2_option_del(options);
  nghttp2_session_callbacks_del(cbs);
  return result;
}

int32_t GrpcH2Loop::Start(int conn, std::string_view path, std::string_view message, bool last,
                          GrpcCall* call) {
  Conn& c = *conns_[static_cast<size_t>(conn)];
  if (c.dead) return -1;
  std::unique_ptr<H2Stream> owned = c.NewStream();
  H2Stream* s = owned.get();
  s->call = call;
  s->last = last;
  AppendFramed(&s->out, message);
  nghttp2_nv nva[7] = {
      Nv(":method", "POST", kNoCopy),
      Nv(":scheme", ep_.tls ? "https" : "http", kNoCopy),
      Nv(":path", path, NGHTTP2_NV_FLAG_NO_COPY_NAME),
      Nv(":authority", authority_, kNoCopy),
      Nv("content-type", "application/grpc", kNoCopy),
      Nv("te", "trailers", kNoCopy),
      Nv("authorization", authorization_, kNoCopy),
  };
  nghttp2_data_provider body{};
  body.source.ptr = s;
  body.read_callback = &H2Callbacks::ReadBody;
  const int32_t id =
      nghttp2_submit_request(c.session, nullptr, nva, authorization_.empty() ? 6 : 7, &body, s);
  if (id < 0) {
    c.Release(std::move(owned));
    return -1;
  }
  c.streams[id] = std::move(owned);
  ++open_calls_;
  c.dirty = true;
  return id;
}

void GrpcH2Loop::Write(int conn, int32_t stream, std::string_view message) {
  Conn& c = *conns_[static_cast<size_t>(conn)];
  auto it = c.streams.find(stream);
  if (c.dead || it == c.streams.end()) return;
  H2Stream* s = it->second.get();
  AppendFramed(&s->out, message);
  if (s->deferred) {
    s->deferred = false;
    nghttp2_session_resume_data(c.session, stream);
  }
  c.dirty = true;
}

void GrpcH2Loop::Cancel(int conn, int32_t stream) {
  Conn& c = *conns_[static_cast<size_t>(conn)];
  if (c.dead || !c.streams.contains(stream)) return;
  nghttp2_submit_rst_stream(c.session, NGHTTP2_FLAG_NONE, stream, NGHTTP2_CANCEL);
  c.dirty = true;
}

void GrpcH2Loop::Fail(Conn& c, std::string_view what) {
  if (c.dead) return;
  c.dead = true;
  ++connection_errors_;
  ::epoll_ctl(epfd_, EPOLL_CTL_DEL, c.fd, nullptr);
  // Every open call of the connection ends here, without a status.
  // (nghttp2's session keeps pointers to the streams until it is deleted with the connection.)
  std::vector<GrpcCall*> open;
  for (auto& [id, s] : c.streams) {
    open.push_back(s->call);
    c.pool.push_back(std::move(s));
  }
  c.streams.clear();
  open_calls_ -= static_cast<int64_t>(open.size());
  for (GrpcCall* call : open) {
    if (call != nullptr) call->OnClose(-1, what);
  }
}

void GrpcH2Loop::Flush(Conn& c) {
  c.dirty = false;
  if (c.dead) return;
  // Everything nghttp2 has to send (the frames of every call submitted since), in one write.
  for (;;) {
    const uint8_t* data = nullptr;
    ssize_t n = nghttp2_session_mem_send(c.session, &data);
    if (n < 0) {
      Fail(c, std::string("nghttp2: ") + nghttp2_strerror(static_cast<int>(n)));
      return;
    }
    if (n == 0) break;
    c.out.append(reinterpret_cast<const char*>(data), static_cast<size_t>(n));
  }
  std::string why;
  const int sent = FlushPending(epfd_, c, &why);
  if (sent < 0) {
    Fail(c, why);
    return;
  }
  if (sent == 1 && !nghttp2_session_want_read(c.session) &&
      !nghttp2_session_want_write(c.session)) {
    Fail(c, "the server ended the HTTP/2 session");
  }
}

void GrpcH2Loop::OnReadable(Conn& c) {
  char buf[64 * 1024];
  ssize_t used = 0;
  std::string why;
  const int read = ReadAvailable(
      c.fd, c.tls.get(), buf, sizeof(buf),
      [&](size_t n) {
        used = nghttp2_session_mem_recv(c.session, reinterpret_cast<const uint8_t*>(buf), n);
        c.dirty = true;
        return used >= 0;
      },
      &why);
  if (used < 0) {
    Fail(c, std::string("nghttp2: ") + nghttp2_strerror(static_cast<int>(used)));
  } else if (read == 0) {
    Fail(c, "the server closed the connection");
  } else if (read < 0) {
    Fail(c, why);
  }
}

void GrpcH2Loop::Run(SteadyClock::time_point deadline, const std::function<bool()>& stop,
                     const std::function<void()>& tick, std::chrono::milliseconds tick_every) {
  auto next_tick = SteadyClock::now() + tick_every;
  std::vector<epoll_event> events(1024);
  for (;;) {
    // Write what the last events (and the calls they started) left to send: one write per
    // connection.
    bool live = false;
    for (auto& c : conns_) {
      if (c->dirty) Flush(*c);
      live = live || !c->dead;
    }
    const auto now = SteadyClock::now();
    if (!live || now >= deadline || (stop && stop())) break;
    if (now >= next_tick) {
      if (tick) tick();
      next_tick = now + tick_every;
    }
    WaitAndDispatch<Conn>(
        epfd_, events, MicrosUntil(std::min(next_tick, deadline)), [](Conn& c) { return c.dead; },
        [this](Conn& c) { Flush(c); }, [this](Conn& c) { OnReadable(c); });
  }
  if (tick) tick();
}

}  // namespace chronoq::bench
