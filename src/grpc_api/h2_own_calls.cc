// The streaming calls on the session framed by the engine itself (h2_own_session.h): Consume
// (h2_consume.h) and the standard services (h2_stream.h) opened at their HEADERS, and H2Out, what
// they write through: the response's HEADERS, DATA pulled from their producer as the client's
// windows let it through, the status; the receive windows given back as they handle requests.
#include <algorithm>
#include <utility>

#include "grpc_api/h2_own_session.h"
#include "grpc_api/h2_stream.h"

namespace chronoq::grpc_api {
namespace {

using namespace h2;  // NOLINT(google-build-using-namespace): the frames' names

constexpr auto kNoDeadline = std::chrono::steady_clock::time_point::max();

}  // namespace

bool H2OwnSession::OpenCall(Stream* s) {
  const int32_t id = s->id;
  if (s->path == kConsumePath) {
    // The call may end inside (refused at once: its stream closed).
    auto consume = H2Consume::Open(link_, link_->Hold(), env_->api, id, std::move(s->authorization),
                                   ToSystemDeadline(s->deadline), env_->max_request_bytes);
    if (Stream* open = Find(id)) open->consume = std::move(consume);
    return true;
  }
  if (!H2Services::Serves(s->path)) return false;
  // Its deadline is the client's to keep (the services' calls answer at once or watch).
  s->deadline = kNoDeadline;
  s->streaming =
      env_->services->Open(s->path, env_->max_request_bytes, StreamingWake(link_, this, id));
  return s->streaming != nullptr;
}

void H2OwnSession::PumpStreaming(int32_t id) {
  if (closed_) return;
  Stream* st = Find(id);
  if (st == nullptr || st->streaming == nullptr) return;
  // Held across the call: a Trailers-Only answer closes the stream inside Pump, and the stream's
  // close releases its state (ASan found Pump writing to it after that).
  const std::shared_ptr<H2StreamState> keep = st->streaming;
  keep->Pump(this, id);
}

void H2OwnSession::Consumed(Stream* s, size_t n) {
  conn_consumed_ += static_cast<int64_t>(n);
  if (conn_consumed_ >= kConnWindow / 2) {
    AppendU32Frame(&out_, kWindowUpdate, 0, {static_cast<uint32_t>(conn_consumed_)});
    conn_recv_unacked_ -= conn_consumed_;
    conn_consumed_ = 0;
  }
  if (s == nullptr || s->remote_closed) return;
  s->consumed += static_cast<int64_t>(n);
  if (s->consumed >= kStreamWindow / 2) {
    AppendU32Frame(&out_, kWindowUpdate, s->id, {static_cast<uint32_t>(s->consumed)});
    s->recv_unacked -= s->consumed;
    s->consumed = 0;
  }
}

void H2OwnSession::SubmitResponse(int32_t id, H2Producer* producer) {
  Stream* s = closed_ ? nullptr : Find(id);
  if (s == nullptr) return;
  static constexpr Field kOkHeaders[] = {{":status", "200"}, {"content-type", "application/grpc"}};
  WriteHeaders(id, kOkHeaders, 2, false, &ok_headers_, &out_);
  s->producer = producer;
  s->ready = true;
}

int H2OwnSession::SubmitStatus(int32_t id, int code, std::string_view message, bool trailers) {
  Stream* s = closed_ ? nullptr : Find(id);
  if (s == nullptr) return -1;
  if (!trailers) {
    s->answered = true;
    WriteTrailersOnly(s, "200", code, message);
    return 0;
  }
  const std::string code_text = std::to_string(code);
  const std::string encoded = PercentEncode(message);
  const Field fields[] = {{"grpc-status", code_text, code == 0}, {"grpc-message", encoded, false}};
  const bool ok = code == 0 && encoded.empty();
  if (producing_ == s) {
    // From its producer: after the DATA being produced.
    WriteHeaders(id, fields, encoded.empty() ? 1 : 2, true, ok ? &ok_trailers_ : nullptr,
                 &s->trailers);
    return 0;
  }
  WriteHeaders(id, fields, encoded.empty() ? 1 : 2, true, ok ? &ok_trailers_ : nullptr, &out_);
  EndLocal(s);
  return 0;
}

void H2OwnSession::ResumeData(int32_t id) {
  Stream* s = closed_ ? nullptr : Find(id);
  if (s != nullptr && s->producer != nullptr) s->ready = true;
}

void H2OwnSession::ConsumeStream(int32_t id, size_t n) { Consumed(Find(id), n); }

void H2OwnSession::ConsumeConnection(size_t n) { Consumed(nullptr, n); }

void H2OwnSession::ProduceData() {
  for (size_t i = 0; i < streams_.size();) {
    Stream* s = streams_[i].get();
    // A stream closed leaves the vector (the next one moves to its index): the index again.
    if (s->producer == nullptr || !s->ready || !ProduceStream(s)) ++i;
  }
}

bool H2OwnSession::ProduceStream(Stream* s) {
  for (;;) {
    // At most 16 KiB a frame, as nghttp2's data providers: scratch_ is the connection's for as
    // long as it lives, and gRPC's clients allow frames of 4 MiB (their MAX_FRAME_SIZE), which
    // made it 4 MiB, zero-filled, on each connection with a Consume stream.
    const int64_t room = std::min<int64_t>(
        {conn_send_window_, s->send_window, peer_max_frame_, int64_t{h2::kDefaultMaxFrame}});
    if (room <= 0) {
      s->blocked = true;  // resumed at the client's WINDOW_UPDATE
      return false;
    }
    scratch_.resize(static_cast<size_t>(room));
    uint32_t flags = 0;
    producing_ = s;
    const ssize_t n =
        s->producer->Produce(reinterpret_cast<uint8_t*>(scratch_.data()), scratch_.size(), &flags);
    producing_ = nullptr;
    if (n == H2Producer::kDeferred) {
      s->ready = false;  // until ResumeData
      return false;
    }
    if (n < 0) {
      ResetStream(s, kInternalError);
      return true;
    }
    const bool eof = (flags & H2Producer::kEof) != 0;
    const bool end = eof && (flags & H2Producer::kNoEndStream) == 0;
    if (n > 0 || end) {
      AppendFrameHeader(&out_, static_cast<size_t>(n), kData, end ? kFlagEndStream : 0, s->id);
      out_.append(scratch_.data(), static_cast<size_t>(n));
      conn_send_window_ -= n;
      s->send_window -= n;
    }
    if (eof) {
      s->producer = nullptr;
      out_ += s->trailers;
      EndLocal(s);
      return true;
    }
  }
}

}  // namespace chronoq::grpc_api
