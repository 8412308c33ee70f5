// The streams of the session framed by the engine itself (h2_own_session.h): requests' header
// blocks and DATA in, the calls dispatched (h2_routes.h), their answers framed out within the
// client's windows.
#include <google/protobuf/message_lite.h>

#include <algorithm>
#include <cstring>
#include <string_view>
#include <utility>

#include "base/log.h"
#include "grpc_api/h2_own_session.h"
#include "grpc_api/h2_stream.h"

namespace chronoq::grpc_api {
namespace {

using namespace h2;  // NOLINT(google-build-using-namespace): the frames' names

constexpr const char* kLog = "cq.grpc";
constexpr auto kNoDeadline = std::chrono::steady_clock::time_point::max();

}  // namespace

void H2OwnSession::Stream::Clear() {
  path.clear();
  authorization.reset();
  deadline = kNoDeadline;
  if (body.capacity() > kKeptBodyBytes) {
    std::string().swap(body);
  } else {
    body.clear();
  }
  ticket.reset();
  gone.reset();
  check = GrpcRequestCheck();
  remote_closed = refused = answered = blocked = ready = false;
  send_window = recv_unacked = consumed = 0;
  consume.reset();
  streaming.reset();
  producer = nullptr;
  trailers.clear();
  std::string().swap(pending);
  pending_pos = 0;
}

// The open streams are in the order of their ids (a new stream's id is above every other's): a
// binary search, after the stream found last (one call at a time finds it there).
std::vector<std::unique_ptr<H2OwnSession::Stream>>::iterator H2OwnSession::Lookup(int32_t id) {
  return std::lower_bound(streams_.begin(), streams_.end(), id,
                          [](const std::unique_ptr<Stream>& s, int32_t k) { return s->id < k; });
}

H2OwnSession::Stream* H2OwnSession::Find(int32_t id) {
  if (last_found_ != nullptr && last_found_->id == id) return last_found_;
  const auto it = Lookup(id);
  if (it == streams_.end() || (*it)->id != id) return nullptr;
  return last_found_ = it->get();
}

H2OwnSession::Stream* H2OwnSession::Open(int32_t id) {
  std::unique_ptr<Stream> s;
  if (spare_.empty()) {
    s = std::make_unique<Stream>();
  } else {
    s = std::move(spare_.back());
    spare_.pop_back();
  }
  s->id = id;
  s->send_window = peer_initial_window_;
  // Ids only grow (OnHeaderBlock opens none at or below last_stream_): the order holds.
  streams_.push_back(std::move(s));
  return last_found_ = streams_.back().get();
}

void H2OwnSession::CloseStream(Stream* s, int64_t reset) {
  const auto it = Lookup(s->id);
  if (it == streams_.end() || it->get() != s) return;  // closed already
  if (reset >= 0) AppendU32Frame(&out_, kRstStream, s->id, {static_cast<uint32_t>(reset)});
  if (last_found_ == s) last_found_ = nullptr;
  std::unique_ptr<Stream> gone = std::move(*it);
  streams_.erase(it);  // the others keep their order
  // Told once out of the open streams: what they do then finds the stream closed (a parked Pull's
  // cancelled poll answers at once, inside CancelParked; a Consume call may finish inside OnClose).
  CancelParked(*gone);
  if (const std::shared_ptr<H2Consume> c = gone->consume) c->OnClose();
  if (const std::shared_ptr<H2StreamState> st = gone->streaming) st->OnClose();
  if (spare_.size() < kSpareStreams) {
    gone->Clear();
    spare_.push_back(std::move(gone));
  }
  if (streams_.empty()) idle_since_ = std::chrono::steady_clock::now();
}

void H2OwnSession::ResetStream(Stream* s, ErrorCode code) { CloseStream(s, code); }

void H2OwnSession::EndLocal(Stream* s) {
  CloseStream(s, s->remote_closed ? int64_t{-1} : int64_t{kNoError});
}

// A Pull still parked when its stream or connection closes: it takes nothing more.
void H2OwnSession::CancelParked(Stream& s) {
  if (s.gone == nullptr) return;
  s.gone->store(true);
  env_->api->service->CancelLongPoll(s.ticket);
  s.gone.reset();
}

bool H2OwnSession::OnHeaders(const FrameHeader& h, const uint8_t* p) {
  if (h.stream == 0 || (h.stream & 1) == 0) {
    Fail(kProtocolError, "HEADERS on stream 0 or a server's stream");
    return false;
  }
  size_t n = 0;
  if (!Unpad(h, p, n, (h.flags & kFlagPriority) != 0 ? 5 : 0)) {
    Fail(kProtocolError, "HEADERS whose padding does not fit");
    return false;
  }
  block_.assign(reinterpret_cast<const char*>(p), n);
  block_stream_ = h.stream;
  block_end_stream_ = (h.flags & kFlagEndStream) != 0;
  if ((h.flags & kFlagEndHeaders) != 0) return OnHeaderBlock();
  in_block_ = true;
  return true;
}

bool H2OwnSession::OnHeaderBlock() {
  const auto* b = reinterpret_cast<const uint8_t*>(block_.data());
  const int32_t id = block_stream_;
  Stream* s = Find(id);
  // Every block is decoded, served or not: the decoder's table follows the client's.
  if (s != nullptr || id <= last_stream_ || goaway_sent_ || streams_.size() >= kMaxStreams) {
    if (!decoder_.Decode(b, block_.size(), [](std::string_view, std::string_view) {})) {
      Fail(kCompressionError, "a header block HPACK cannot decode");
      return false;
    }
    if (s != nullptr) {  // the request's trailers: they end it
      if (!block_end_stream_) {
        ResetStream(s, kProtocolError);
      } else if (!s->remote_closed) {
        OnEndStream(s);
      }
    } else if (id > last_stream_) {
      last_stream_ = id;
      if (!goaway_sent_) AppendU32Frame(&out_, kRstStream, id, {kRefusedStream});
    }
    return true;
  }
  last_stream_ = id;
  s = Open(id);
  const bool ok = decoder_.Decode(b, block_.size(), [s](std::string_view n, std::string_view v) {
    KeepRequestField(s->check.Field(n, v), v, &s->path, &s->authorization, &s->deadline);
  });
  if (!ok) {
    Fail(kCompressionError, "a header block HPACK cannot decode");
    return false;
  }
  if (!Admit(s)) return true;
  // A streaming call is opened at its headers (and may be finished at once: found again).
  if (OpenCall(s) && (s = Find(id)) == nullptr) return true;
  if (s->deadline != kNoDeadline) link_->ArmDeadline(s->deadline);
  if (block_end_stream_) OnEndStream(s);
  return true;
}

bool H2OwnSession::Admit(Stream* s) {
  std::string message;
  const GrpcRequestCheck::Verdict v = s->check.Finish(&message);
  switch (v) {
    case GrpcRequestCheck::Verdict::kOk:
      return true;
    case GrpcRequestCheck::Verdict::kMalformed:
      CQ_LOG_DEBUG(kLog, "a malformed request header block: RST_STREAM PROTOCOL_ERROR");
      ResetStream(s, kProtocolError);
      return false;
    case GrpcRequestCheck::Verdict::kNotGrpc:
    case GrpcRequestCheck::Verdict::kNotPost:
      break;
  }
  s->refused = true;
  s->answered = true;
  s->remote_closed = block_end_stream_;
  const bool not_grpc = v == GrpcRequestCheck::Verdict::kNotGrpc;
  WriteTrailersOnly(s, not_grpc ? "415" : "405", not_grpc ? kGrpcInvalidArgument : kGrpcInternal,
                    message);
  return false;
}

bool H2OwnSession::OnData(const FrameHeader& h, const uint8_t* p) {
  if (h.stream == 0) {
    Fail(kProtocolError, "DATA on stream 0");
    return false;
  }
  // Flow control counts the whole frame, padding included.
  conn_recv_unacked_ += h.length;
  if (conn_recv_unacked_ > kConnWindow) {
    Fail(kFlowControlError, "DATA past the connection's window");
    return false;
  }
  size_t n = 0;
  if (!Unpad(h, p, n, 0)) {
    Fail(kProtocolError, "DATA whose padding does not fit");
    return false;
  }
  const int32_t id = h.stream;
  Stream* s = Find(id);
  if (s == nullptr) {
    Consumed(nullptr, h.length);
    if (id > last_stream_) Fail(kProtocolError, "DATA on an idle stream");
    return !failed_;  // a closed stream's: ignored
  }
  if (s->remote_closed) {
    Consumed(nullptr, h.length);
    ResetStream(s, kStreamClosed);
    return true;
  }
  const bool end = (h.flags & kFlagEndStream) != 0;
  s->recv_unacked += h.length;
  if (s->recv_unacked > kStreamWindow) {
    Consumed(nullptr, h.length);
    ResetStream(s, kFlowControlError);
    return true;
  }
  if (h.length > n) Consumed(s, h.length - n);  // the padding
  s->check.Data(n);
  if (s->consume != nullptr) {
    // Its window is given back as its requests are handled (H2Out::ConsumeStream). Held: the
    // call may end, and its stream close, inside.
    const std::shared_ptr<H2Consume> consume = s->consume;
    consume->OnData(p, n);
  } else {
    // A unary request (buffered up to its limit anyway) or a standard service's call: given
    // back at once.
    Consumed(end ? nullptr : s, n);
    if (s->streaming != nullptr) {
      const std::shared_ptr<H2StreamState> streaming = s->streaming;
      streaming->OnData(p, n);
    } else if (!s->refused) {
      const int64_t max = env_->max_request_bytes;
      if (static_cast<int64_t>(s->body.size() + n) > max) {
        // Refused before it is buffered whole; the rest of its DATA is dropped.
        std::string().swap(s->body);
        s->refused = true;
        Submit(s, H2Answer{kGrpcResourceExhausted, RequestTooLarge(max), {}});
        return true;
      }
      s->body.append(reinterpret_cast<const char*>(p), n);
    }
  }
  if ((s = Find(id)) == nullptr) return true;  // ended meanwhile
  if (!s->refused && !s->check.LengthKept(end)) {
    CQ_LOG_DEBUG(kLog, "a request's DATA disagrees with its content-length: RST_STREAM");
    ResetStream(s, kProtocolError);
    return true;
  }
  if (end) OnEndStream(s);
  return true;
}

void H2OwnSession::OnEndStream(Stream* s) {
  s->remote_closed = true;
  // Held: the call may end, and its stream close, inside.
  if (const std::shared_ptr<H2Consume> c = s->consume) return c->OnRemoteEnd();
  if (const std::shared_ptr<H2StreamState> st = s->streaming) return st->OnHalfClose();
  if (s->answered) return EndLocal(s);
  if (s->refused) return;
  // Its DATA must be all its content-length announced (RFC 9113 section 8.1.1).
  if (!s->check.LengthKept(true)) {
    CQ_LOG_DEBUG(kLog, "a request's DATA disagrees with its content-length: RST_STREAM");
    return ResetStream(s, kProtocolError);
  }
  Dispatch(s);
}

void H2OwnSession::Dispatch(Stream* s) {
  // The call may be answered inside (a Pull whose messages are there, a refusal), and its stream
  // closed: freed, or cleared for the next call. So the request leaves the stream first (its
  // buffers swapped with the session's, keeping both allocated), and a parked Pull's ticket is
  // kept on the stream only if it is still open and unanswered after.
  const int32_t id = s->id;
  request_path_.swap(s->path);
  request_body_.swap(s->body);
  std::shared_ptr<std::atomic<bool>> gone;
  service::LongPollTicket ticket;
  DispatchUnary(
      env_->api,
      H2UnaryRequest{request_path_, std::move(s->authorization), request_body_, s->deadline},
      H2Reply{this, link_->Hold(), id}, &gone, &ticket);
  request_path_.clear();
  if (request_body_.capacity() > kKeptBodyBytes) {
    std::string().swap(request_body_);
  } else {
    request_body_.clear();
  }
  if (gone == nullptr) return;
  Stream* open = Find(id);
  if (open == nullptr || open->answered) return;  // answered inside: nothing parked
  open->gone = std::move(gone);
  open->ticket = std::move(ticket);
}

void H2OwnSession::Complete(int32_t id, H2Answer a) {
  // Written at once on the connection's thread (the reader flushes after), else posted there.
  if (link_->OnThread()) {
    if (!closed_) Submit(Find(id), std::move(a));
    return link_->Flush();
  }
  link_->Run([this, id, a = std::move(a)]() mutable {
    if (!closed_) Submit(Find(id), std::move(a));
  });
}

void H2OwnSession::WriteHeaders(int32_t id, const Field* fields, size_t n, bool end_stream,
                                std::string* cache, std::string* to) {
  std::string block;
  const std::string* b = cache;
  if (cache == nullptr || cache->empty()) {
    const size_t entries = encoder_.Entries();
    if (!encoder_.Encode(fields, n, &block)) return Fail(kInternalError, "HPACK cannot encode");
    if (encoder_.Entries() != entries) {
      // Indexes moved: no cached block holds any more.
      ok_headers_.clear();
      ok_trailers_.clear();
    } else if (cache != nullptr) {
      *cache = block;
    }
    b = &block;
  }
  // HEADERS, then CONTINUATIONs past the client's largest frame.
  const uint8_t end = end_stream ? kFlagEndStream : 0;
  size_t pos = 0;
  bool first = true;
  do {
    const size_t k = std::min<size_t>(b->size() - pos, peer_max_frame_);
    const bool last = pos + k == b->size();
    AppendFrameHeader(to, k, first ? kHeaders : kContinuation,
                      static_cast<uint8_t>((first ? end : 0) | (last ? kFlagEndHeaders : 0)), id);
    to->append(*b, pos, k);
    pos += k;
    first = false;
  } while (pos < b->size());
}

void H2OwnSession::WriteTrailersOnly(Stream* s, std::string_view http_status, int code,
                                     std::string_view message) {
  const std::string code_text = std::to_string(code);
  const std::string encoded = PercentEncode(message);
  // Only the constant fields are indexed: the dynamic table's entries stay the OK answer's.
  const Field fields[] = {{":status", http_status, http_status == "200"},
                          {"content-type", "application/grpc", true},
                          {"grpc-status", code_text, false},
                          {"grpc-message", encoded, false}};
  WriteHeaders(s->id, fields, encoded.empty() ? 3 : 4, true, nullptr, &out_);
  EndLocal(s);
}

void H2OwnSession::Submit(Stream* s, H2Answer a) {
  // Reset by the client, closed, or answered already (its deadline passed first).
  if (s == nullptr || s->answered) return;
  s->answered = true;
  s->gone.reset();  // answered: nothing parked to cancel any more
  s->ticket.reset();
  if (a.code != 0) return WriteTrailersOnly(s, "200", a.code, a.message);
  static constexpr Field kOkHeaders[] = {{":status", "200"}, {"content-type", "application/grpc"}};
  WriteHeaders(s->id, kOkHeaders, 2, false, &ok_headers_, &out_);
  const size_t size = a.response != nullptr ? a.response->ByteSizeLong() : 0;
  const size_t whole = kGrpcPrefixBytes + size;
  const auto room = std::min<int64_t>({conn_send_window_, s->send_window, peer_max_frame_});
  if (a.response != nullptr && static_cast<int64_t>(whole) <= room) {
    // The usual case: serialized into the frame, no copy.
    const size_t at = out_.size();
    out_.resize(at + kFrameHeaderBytes + whole);
    auto* f = reinterpret_cast<uint8_t*>(out_.data() + at);
    WriteFrameHeader(f, whole, kData, 0, s->id);
    WriteGrpcFrame(*a.response, size, f + kFrameHeaderBytes);
    conn_send_window_ -= static_cast<int64_t>(whole);
    s->send_window -= static_cast<int64_t>(whole);
  } else if (a.response != nullptr) {
    s->pending.resize(whole);
    WriteGrpcFrame(*a.response, size, reinterpret_cast<uint8_t*>(s->pending.data()));
  }
  WriteBody(s);
}

void H2OwnSession::WriteBody(Stream* s) {
  while (s->pending_pos < s->pending.size()) {
    const int64_t n = std::min<int64_t>({static_cast<int64_t>(s->pending.size() - s->pending_pos),
                                         conn_send_window_, s->send_window, peer_max_frame_});
    if (n <= 0) {
      s->blocked = true;  // resumed at the client's WINDOW_UPDATE
      return;
    }
    AppendFrameHeader(&out_, static_cast<size_t>(n), kData, 0, s->id);
    out_.append(s->pending, s->pending_pos, static_cast<size_t>(n));
    s->pending_pos += static_cast<size_t>(n);
    conn_send_window_ -= n;
    s->send_window -= n;
  }
  s->blocked = false;
  static constexpr Field kOkTrailers[] = {{"grpc-status", "0"}};
  WriteHeaders(s->id, kOkTrailers, 1, true, &ok_trailers_, &out_);
  EndLocal(s);
}

// The streams past their deadline: DEADLINE_EXCEEDED (a parked Pull cancelled); the timer again
// at the next deadline.
void H2OwnSession::SweepDeadlines() {
  if (closed_) return;
  auto next = kNoDeadline;
  for (int32_t id : ExpiredStreams(streams_, std::chrono::steady_clock::now(), &next)) {
    Stream* s = Find(id);
    if (s != nullptr && s->consume != nullptr) {
      s->deadline = kNoDeadline;
      const std::shared_ptr<H2Consume> consume = s->consume;
      consume->OnDeadline();
      continue;
    }
    if (s == nullptr || s->answered) continue;
    // Answered now: the cancelled poll's (empty) answer, or the rest of the request, is dropped.
    s->deadline = kNoDeadline;
    s->answered = true;
    s->refused = true;
    CancelParked(*s);
    s->ticket.reset();
    WriteTrailersOnly(s, "200", kGrpcDeadlineExceeded, "Deadline Exceeded");
  }
  if (next != kNoDeadline) link_->ArmDeadline(next);
}

}  // namespace chronoq::grpc_api
