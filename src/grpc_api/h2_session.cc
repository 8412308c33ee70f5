// The nghttp2 engine's HTTP/2 session of one connection (h2_session.h): nghttp2's callbacks and
// the calls they start.
#include "grpc_api/h2_session.h"

#include <google/protobuf/message_lite.h>
#include <nghttp2/nghttp2.h>

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "base/block_cache.h"
#include "base/log.h"
#include "grpc_api/h2_wire.h"

namespace chronoq::grpc_api {
namespace {

constexpr const char* kLog = "cq.grpc";
constexpr auto kNoDeadline = std::chrono::steady_clock::time_point::max();
// Closed streams kept for the next calls (their buffers allocated already), and the largest
// request buffer kept with one.
constexpr size_t kSpareStreams = 8;
constexpr size_t kKeptBodyBytes = 64 * 1024;

}  // namespace

struct H2SessionCallbacks {
  using Stream = H2Session::Stream;

  static H2Session* Of(void* user) { return static_cast<H2Session*>(user); }

  static int OnBeginHeaders(nghttp2_session* session, const nghttp2_frame* frame, void* user) {
    if (frame->hd.type == NGHTTP2_HEADERS && frame->headers.cat == NGHTTP2_HCAT_REQUEST) {
      H2Session* h = Of(user);
      Stream* s = h->Open(frame->hd.stream_id);
      h->receiving_id_ = frame->hd.stream_id;
      h->receiving_ = s;
      nghttp2_session_set_stream_user_data(session, frame->hd.stream_id, s);
    }
    return 0;
  }

  static int OnHeader(nghttp2_session*, const nghttp2_frame* frame, const uint8_t* name,
                      size_t namelen, const uint8_t* value, size_t valuelen, uint8_t, void* user) {
    if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST) return 0;
    // The request's headers follow its OnBeginHeaders (a header block is never interleaved).
    H2Session* h = Of(user);
    Stream* s = h->receiving_id_ == frame->hd.stream_id ? h->receiving_ : nullptr;
    if (s == nullptr) return 0;
    std::string_view n(reinterpret_cast<const char*>(name), namelen);
    std::string_view v(reinterpret_cast<const char*>(value), valuelen);
    KeepRequestField(s->check.Field(n, v), v, &s->path, &s->authorization, &s->deadline);
    return 0;
  }

  static int OnDataChunk(nghttp2_session* session, uint8_t, int32_t id, const uint8_t* data,
                         size_t len, void* user) {
    auto* s = static_cast<Stream*>(nghttp2_session_get_stream_user_data(session, id));
    if (s != nullptr) s->check.Data(len);  // against its content-length (OnFrameRecv)
    if (s != nullptr && s->consume != nullptr) {
      s->consume->OnData(data, len);  // gives the window back as its requests are handled
      return 0;
    }
    // A unary request or a standard service's call: its window given back at once (a unary
    // request is buffered as it comes, up to its limit).
    nghttp2_session_consume(session, id, len);
    if (s == nullptr || s->refused) return 0;
    if (s->streaming != nullptr) {
      s->streaming->OnData(data, len);
      return 0;
    }
    H2Session* h = Of(user);
    const int64_t max = h->env_->max_request_bytes;
    if (static_cast<int64_t>(s->body.size() + len) > max) {
      // Refused before it is buffered whole; the rest of its DATA is dropped.
      h->Refuse(id, s, kGrpcResourceExhausted, RequestTooLarge(max));
      std::string().swap(s->body);
      return 0;
    }
    s->body.append(reinterpret_cast<const char*>(data), len);
    return 0;
  }

  static int OnFrameRecv(nghttp2_session* session, const nghttp2_frame* frame, void* user) {
    H2Session* h = Of(user);
    if (frame->hd.type == NGHTTP2_RST_STREAM &&
        !h->resets_.Take(std::chrono::steady_clock::now())) {
      CQ_LOG_DEBUG(kLog, "a client resets streams too fast: GOAWAY");
      nghttp2_session_terminate_session(session, NGHTTP2_ENHANCE_YOUR_CALM);
      return 0;
    }
    if (frame->hd.type != NGHTTP2_DATA && frame->hd.type != NGHTTP2_HEADERS) return 0;
    const int32_t id = frame->hd.stream_id;
    Stream* s = h->StreamOf(id);
    if (s == nullptr) return 0;
    const bool end = (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0;
    if (!s->refused && !s->check.LengthKept(end)) {
      h->ResetMalformed(id, s, "a request's DATA disagrees with its content-length");
      return 0;
    }
    if (frame->hd.type == NGHTTP2_HEADERS && frame->headers.cat == NGHTTP2_HCAT_REQUEST) {
      if (!h->Admit(id, s)) return 0;
      // A stream: served from its headers on.
      if (h->OpenStreaming(id, s)) {
        if (end) s->streaming->OnHalfClose();
        return 0;
      }
      if (s->deadline != kNoDeadline) h->link_->ArmDeadline(s->deadline);
      if (s->path == kConsumePath) h->OpenConsume(id, s);
    }
    if (s->streaming != nullptr) {
      if (end) s->streaming->OnHalfClose();
      return 0;
    }
    if (!end) return 0;
    if (s->consume != nullptr) {
      s->consume->OnRemoteEnd();
    } else if (!s->refused) {
      h->Dispatch(id, s);
    }
    return 0;
  }

  // A response ended (END_STREAM sent) while the client still sends: RST_STREAM(NO_ERROR) tells
  // it to stop (a refused request, a Consume stream ended by the server).
  static int OnFrameSend(nghttp2_session* session, const nghttp2_frame* frame, void*) {
    if ((frame->hd.type == NGHTTP2_HEADERS || frame->hd.type == NGHTTP2_DATA) &&
        (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0 &&
        nghttp2_session_get_stream_remote_close(session, frame->hd.stream_id) == 0) {
      nghttp2_submit_rst_stream(session, NGHTTP2_FLAG_NONE, frame->hd.stream_id, NGHTTP2_NO_ERROR);
    }
    return 0;
  }

  static int OnStreamClose(nghttp2_session* session, int32_t id, uint32_t, void* user) {
    H2Session* h = Of(user);
    // (nghttp2 still has the stream, and its user data, while it reports its closing.)
    Stream* s = h->StreamOf(id);
    if (s == nullptr) return 0;
    h->CancelParked(*s);
    if (s->consume != nullptr) s->consume->OnClose();
    if (s->streaming != nullptr) s->streaming->OnClose();
    if (h->receiving_ == s) h->receiving_ = nullptr;
    nghttp2_session_set_stream_user_data(session, id, nullptr);
    h->Recycle(h->Remove(s));
    if (h->streams_.empty()) h->idle_since_ = std::chrono::steady_clock::now();
    return 0;
  }

  // A unary answer's DATA, then its trailers.
  static ssize_t ReadBody(nghttp2_session* session, int32_t id, uint8_t* buf, size_t length,
                          uint32_t* data_flags, nghttp2_data_source* source, void*) {
    auto* s = static_cast<Stream*>(source->ptr);
    if (s->response != nullptr) {
      const size_t whole = kGrpcPrefixBytes + s->response_bytes;
      if (whole <= length) {  // the usual case: serialized into the frame, no copy
        WriteGrpcFrame(*s->response, s->response_bytes, buf);
        s->response.reset();
        *data_flags |= NGHTTP2_DATA_FLAG_EOF | NGHTTP2_DATA_FLAG_NO_END_STREAM;
        if (SubmitGrpcStatus(session, id, 0, {}, true) != 0) {
          *data_flags &= ~NGHTTP2_DATA_FLAG_NO_END_STREAM;
        }
        return static_cast<ssize_t>(whole);
      }
      s->out.resize(whole);
      WriteGrpcFrame(*s->response, s->response_bytes, reinterpret_cast<uint8_t*>(s->out.data()));
      s->response.reset();
    }
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
};

H2Session::H2Session(const H2SessionEnv* env, H2Link* link)
    : env_(env), link_(link), resets_(env->rst_stream_burst, env->rst_stream_per_second) {}

H2Session::~H2Session() {
  if (session_ != nullptr) nghttp2_session_del(session_);
}

void H2Session::Start() {
  using C = H2SessionCallbacks;
  nghttp2_session_callbacks* cbs = nullptr;
  nghttp2_session_callbacks_new(&cbs);
  nghttp2_session_callbacks_set_on_begin_headers_callback(cbs, C::OnBeginHeaders);
  nghttp2_session_callbacks_set_on_header_callback(cbs, C::OnHeader);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs, C::OnDataChunk);
  nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, C::OnFrameRecv);
  nghttp2_session_callbacks_set_on_stream_close_callback(cbs, C::OnStreamClose);
  nghttp2_session_callbacks_set_on_frame_send_callback(cbs, C::OnFrameSend);
  nghttp2_option* option = nullptr;
  nghttp2_option_new(&option);
  // The receive windows are given back as requests are handled (nghttp2_session_consume), not as
  // bytes arrive: a client is paced by what the server handles.
  nghttp2_option_set_no_auto_window_update(option, 1);
  // nghttp2's checks of each request's header fields are off: they cost about 1.3k instructions
  // per call; GrpcRequestCheck (h2_wire.h) keeps the rules the engine relies on.
  nghttp2_option_set_no_http_messaging(option, 1);
  // PING and SETTINGS floods: a client that sends them without reading our acknowledgements
  // gets the connection closed once this many wait to be written (nghttp2's default, explicit).
  nghttp2_option_set_max_outbound_ack(option, 1000);
  // A closed stream is freed at once. By default a server session keeps up to
  // MAX_CONCURRENT_STREAMS closed streams for RFC 7540 priorities (which gRPC clients do not
  // send): a thousand dead streams per busy connection, 17 MB at 64 connections, each new call
  // touching cold ones (docs/benchmarks.md). Frames a client still sends on a stream closed
  // here are ignored, as RFC 9113 allows after RST_STREAM.
  nghttp2_option_set_no_closed_streams(option, 1);
  // A thread's freed blocks serve the next calls (base/block_cache.h).
  static nghttp2_mem mem{nullptr, base::block_cache::Malloc, base::block_cache::Free,
                         base::block_cache::Calloc, base::block_cache::Realloc};
  nghttp2_session_server_new3(&session_, cbs, this, option, &mem);
  nghttp2_option_del(option);
  nghttp2_session_callbacks_del(cbs);
  const nghttp2_settings_entry settings[] = {
      {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 1000},
      {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 1 << 20},
  };
  nghttp2_submit_settings(session_, NGHTTP2_FLAG_NONE, settings, std::size(settings));
  // The connection's receive window too (the settings above only set the streams').
  nghttp2_session_set_local_window_size(session_, NGHTTP2_FLAG_NONE, 0, 4 << 20);
}

bool H2Session::Receive(const uint8_t* data, size_t n) {
  ssize_t r = nghttp2_session_mem_recv(session_, data, n);
  if (r < 0) {
    CQ_LOG_DEBUG(kLog, "HTTP/2 error: {}", nghttp2_strerror(static_cast<int>(r)));
    return false;
  }
  return true;
}

ssize_t H2Session::Send(const uint8_t** data) { return nghttp2_session_mem_send(session_, data); }

bool H2Session::WantsIo() const {
  return nghttp2_session_want_read(session_) != 0 || nghttp2_session_want_write(session_) != 0;
}

void H2Session::Notice() {
  if (session_ != nullptr) nghttp2_submit_shutdown_notice(session_);
}

void H2Session::GoAway() {
  if (session_ == nullptr) return;
  nghttp2_submit_goaway(session_, NGHTTP2_FLAG_NONE,
                        nghttp2_session_get_last_proc_stream_id(session_), NGHTTP2_NO_ERROR,
                        nullptr, 0);
}

void H2Session::Terminate() {
  if (session_ != nullptr) nghttp2_session_terminate_session(session_, NGHTTP2_NO_ERROR);
}

void H2Session::Close() {
  closed_ = true;
  for (auto& stream : streams_) {
    CancelParked(*stream);
    if (stream->consume != nullptr) stream->consume->OnClose();
    if (stream->streaming != nullptr) stream->streaming->OnClose();
  }
}

H2Session::Stream* H2Session::StreamOf(int32_t id) const {
  return static_cast<Stream*>(nghttp2_session_get_stream_user_data(session_, id));
}

void H2Session::Stream::Clear() {
  path.clear();
  authorization.reset();
  deadline = kNoDeadline;
  // A large request's buffer is not kept.
  if (body.capacity() > kKeptBodyBytes) {
    std::string().swap(body);
  } else {
    body.clear();
  }
  consume.reset();
  streaming.reset();
  ticket.reset();
  gone.reset();
  refused = false;
  answered = false;
  check = GrpcRequestCheck();
  response.reset();
  std::string().swap(out);
  out_pos = 0;
}

bool H2Session::Admit(int32_t id, Stream* s) {
  std::string message;
  const GrpcRequestCheck::Verdict v = s->check.Finish(&message);
  if (v == GrpcRequestCheck::Verdict::kOk) return true;
  if (v == GrpcRequestCheck::Verdict::kMalformed) {
    ResetMalformed(id, s, "a malformed request header block");
    return false;
  }
  s->refused = true;
  s->answered = true;
  s->deadline = kNoDeadline;
  switch (v) {
    case GrpcRequestCheck::Verdict::kMalformed:
      break;
    case GrpcRequestCheck::Verdict::kNotGrpc:
      SubmitHttpRefusal(session_, id, 415, kGrpcInvalidArgument, message);
      break;
    case GrpcRequestCheck::Verdict::kNotPost:
      SubmitHttpRefusal(session_, id, 405, kGrpcInternal, message);
      break;
    case GrpcRequestCheck::Verdict::kOk:
      break;
  }
  return false;
}

void H2Session::ResetMalformed(int32_t id, Stream* s, std::string_view what) {
  CQ_LOG_DEBUG(kLog, "{}: RST_STREAM PROTOCOL_ERROR", what);
  s->refused = true;
  s->answered = true;
  s->deadline = kNoDeadline;
  nghttp2_submit_rst_stream(session_, NGHTTP2_FLAG_NONE, id, NGHTTP2_PROTOCOL_ERROR);
}

H2Session::Stream* H2Session::Open(int32_t id) {
  std::unique_ptr<Stream> s;
  if (spare_.empty()) {
    s = std::make_unique<Stream>();
  } else {
    s = std::move(spare_.back());
    spare_.pop_back();
  }
  s->id = id;
  s->slot = streams_.size();
  streams_.push_back(std::move(s));
  return streams_.back().get();
}

std::unique_ptr<H2Session::Stream> H2Session::Remove(Stream* s) {
  const size_t slot = s->slot;
  std::unique_ptr<Stream> out = std::move(streams_[slot]);
  if (slot + 1 != streams_.size()) {
    streams_[slot] = std::move(streams_.back());
    streams_[slot]->slot = slot;
  }
  streams_.pop_back();
  return out;
}

void H2Session::Recycle(std::unique_ptr<Stream> s) {
  if (spare_.size() >= kSpareStreams) return;
  s->Clear();
  spare_.push_back(std::move(s));
}

void H2Reply::operator()(H2Answer a) const { session->Complete(id, std::move(a)); }

void H2Session::Complete(int32_t id, H2Answer a) {
  // Submitted at once on the connection's thread (the reader flushes after), else posted there.
  if (link_->OnThread()) {
    Submit(id, std::move(a));
    return link_->Flush();
  }
  link_->Run([this, id, a = std::move(a)]() mutable { Submit(id, std::move(a)); });
}

void H2Session::Submit(int32_t id, H2Answer a) {
  if (closed_) return;
  Stream* s = StreamOf(id);
  // Reset by the client, closed, or answered already (its deadline passed first).
  if (s == nullptr || s->answered) return;
  s->answered = true;
  s->gone.reset();  // answered: nothing parked to cancel any more
  s->ticket.reset();
  if (a.code == 0) {
    s->response = std::move(a.response);
    s->response_bytes = s->response != nullptr ? s->response->ByteSizeLong() : 0;
    nghttp2_data_provider body;
    body.source.ptr = s;
    body.read_callback = H2SessionCallbacks::ReadBody;
    SubmitGrpcHeaders(session_, id, &body);
    return;
  }
  SubmitGrpcStatus(session_, id, a.code, a.message, false);  // Trailers-Only
}

// A Pull still parked (its answer not written) when its stream or connection closes: the client
// went, or its deadline passed; it takes nothing more.
void H2Session::CancelParked(Stream& s) {
  if (s.gone == nullptr) return;
  s.gone->store(true);
  env_->api->service->CancelLongPoll(s.ticket);
  s.gone.reset();
}

bool H2Session::OpenStreaming(int32_t id, Stream* s) {
  if (!H2Services::Serves(s->path)) return false;
  // Its deadline is the client's to keep (the services' calls answer at once or watch).
  s->deadline = kNoDeadline;
  s->streaming =
      env_->services->Open(s->path, env_->max_request_bytes, StreamingWake(link_, this, id));
  return s->streaming != nullptr;
}

void H2Session::PumpStreaming(int32_t id) {
  if (closed_) return;
  Stream* st = StreamOf(id);
  if (st != nullptr && st->streaming != nullptr) st->streaming->Pump(this, id);
}

std::function<void()> StreamingWake(H2Link* link, H2Framing* session, int32_t id) {
  return [link, session, weak = link->WeakHold(), id] {
    const auto alive = weak.lock();  // the connection, while this posts to it
    if (alive == nullptr) return;
    link->Post([session, id] { session->PumpStreaming(id); });
  };
}

void H2Session::OpenConsume(int32_t id, Stream* s) {
  s->consume = H2Consume::Open(link_, link_->Hold(), env_->api, id, std::move(s->authorization),
                               ToSystemDeadline(s->deadline), env_->max_request_bytes);
}

// The streams past their deadline: DEADLINE_EXCEEDED (a parked Pull cancelled, a Consume stream
// ended); the timer again at the next deadline.
void H2Session::SweepDeadlines() {
  if (closed_) return;
  auto next = kNoDeadline;
  for (int32_t id : ExpiredStreams(streams_, std::chrono::steady_clock::now(), &next)) {
    Stream* s = StreamOf(id);  // null once closed
    if (s == nullptr) continue;
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
  if (next != kNoDeadline) link_->ArmDeadline(next);
}

static_assert(H2Producer::kEof == NGHTTP2_DATA_FLAG_EOF &&
              H2Producer::kNoEndStream == NGHTTP2_DATA_FLAG_NO_END_STREAM &&
              H2Producer::kDeferred == NGHTTP2_ERR_DEFERRED);

void H2Session::SubmitResponse(int32_t id, H2Producer* producer) {
  nghttp2_data_provider provider;
  provider.source.ptr = producer;
  provider.read_callback = [](nghttp2_session*, int32_t, uint8_t* buf, size_t length,
                              uint32_t* flags, nghttp2_data_source* source, void*) {
    return static_cast<H2Producer*>(source->ptr)->Produce(buf, length, flags);
  };
  SubmitGrpcHeaders(session_, id, &provider);
}

int H2Session::SubmitStatus(int32_t id, int code, std::string_view message, bool trailers) {
  return SubmitGrpcStatus(session_, id, code, message, trailers);
}

void H2Session::ResumeData(int32_t id) { nghttp2_session_resume_data(session_, id); }

void H2Session::ConsumeStream(int32_t id, size_t n) { nghttp2_session_consume(session_, id, n); }

void H2Session::ConsumeConnection(size_t n) { nghttp2_session_consume_connection(session_, n); }

void H2Session::Dispatch(int32_t id, Stream* s) {
  DispatchUnary(env_->api,
                H2UnaryRequest{s->path, std::move(s->authorization), s->body, s->deadline},
                H2Reply{this, link_->Hold(), id}, &s->gone, &s->ticket);
}

}  // namespace chronoq::grpc_api
