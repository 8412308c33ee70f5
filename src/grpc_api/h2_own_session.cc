// The HTTP/2 session framed by the engine itself (h2_own_session.h; grpc-engine=h2,
// experimental): frames in, calls dispatched as H2Session dispatches them, answers framed out.
#include "grpc_api/h2_own_session.h"

#include <google/protobuf/message_lite.h>

#include <algorithm>
#include <cstring>
#include <string_view>
#include <utility>

#include "base/log.h"
#include "grpc_api/h2_stream.h"

namespace chronoq::grpc_api {
namespace {

using namespace h2;  // NOLINT(google-build-using-namespace): the frames' names

constexpr const char* kLog = "cq.grpc";
// SETTINGS and PING acknowledgements queued and not yet written: past this the client floods
// (nghttp2_option_set_max_outbound_ack's 1,000); the connection closes.
constexpr int kMaxOutboundAcks = 1000;
// Settings in one SETTINGS frame: past this, ENHANCE_YOUR_CALM (nghttp2's default
// nghttp2_option_set_max_settings).
constexpr uint32_t kMaxSettings = 32;

void AppendSetting(std::string* out, uint16_t id, uint32_t value) {
  const char b[6] = {static_cast<char>(id >> 8),     static_cast<char>(id),
                     static_cast<char>(value >> 24), static_cast<char>(value >> 16),
                     static_cast<char>(value >> 8),  static_cast<char>(value)};
  out->append(b, 6);
}

}  // namespace

H2OwnSession::H2OwnSession(const H2SessionEnv* env, H2Link* link)
    : env_(env), link_(link), resets_(env->rst_stream_burst, env->rst_stream_per_second) {}

H2OwnSession::~H2OwnSession() = default;

void H2OwnSession::Start() {
  started_ = true;
  AppendFrameHeader(&out_, 12, kSettings, 0, 0);
  AppendSetting(&out_, kMaxConcurrentStreams, kMaxStreams);
  AppendSetting(&out_, kInitialWindowSize, static_cast<uint32_t>(kStreamWindow));
  AppendU32Frame(&out_, kWindowUpdate, 0, {static_cast<uint32_t>(kConnWindow - kDefaultWindow)});
}

bool H2OwnSession::Receive(const uint8_t* data, size_t n) {
  if (failed_ || closed_) return true;  // after GOAWAY: nothing more is read
  if (preface_left_ > 0) {
    const size_t k = std::min(n, preface_left_);
    if (std::memcmp(data, kPreface.data() + (kPreface.size() - preface_left_), k) != 0) {
      CQ_LOG_DEBUG(kLog, "HTTP/2 error: not the client's connection preface");
      return false;
    }
    preface_left_ -= k;
    data += k;
    n -= k;
  }
  const bool buffered = !in_.empty();
  if (buffered) in_.append(reinterpret_cast<const char*>(data), n);
  const uint8_t* p = buffered ? reinterpret_cast<const uint8_t*>(in_.data()) : data;
  const size_t len = buffered ? in_.size() : n;
  size_t off = 0;
  while (!failed_ && len - off >= kFrameHeaderBytes) {
    const FrameHeader h = ReadFrameHeader(p + off);
    if (h.length > kDefaultMaxFrame) {
      Fail(kFrameSizeError, "a frame larger than SETTINGS_MAX_FRAME_SIZE");
      break;
    }
    if (len - off - kFrameHeaderBytes < h.length) break;
    if (!OnFrame(h, p + off + kFrameHeaderBytes)) break;
    off += kFrameHeaderBytes + h.length;
  }
  if (outbound_acks_ > kMaxOutboundAcks) {
    CQ_LOG_DEBUG(kLog, "a client floods PING or SETTINGS without reading: closed");
    return false;
  }
  if (failed_) {
    std::string().swap(in_);
  } else if (buffered) {
    in_.erase(0, off);
  } else {
    in_.assign(reinterpret_cast<const char*>(p + off), len - off);
  }
  return true;
}

ssize_t H2OwnSession::Send(const uint8_t** data) {
  if (!closed_ && !failed_) ProduceData();
  if (out_.empty()) return 0;
  sending_.swap(out_);
  out_.clear();
  outbound_acks_ = 0;
  *data = reinterpret_cast<const uint8_t*>(sending_.data());
  return static_cast<ssize_t>(sending_.size());
}

bool H2OwnSession::WantsIo() const {
  if (!out_.empty()) return true;
  if (failed_) return false;
  return !((goaway_sent_ || peer_goaway_) && streams_.empty());
}

void H2OwnSession::Fail(ErrorCode code, const char* what) {
  CQ_LOG_DEBUG(kLog, "HTTP/2 connection error {}: {}", static_cast<uint32_t>(code), what);
  if (failed_) return;
  failed_ = true;
  AppendU32Frame(&out_, kGoaway, 0, {static_cast<uint32_t>(last_stream_), code});
}

void H2OwnSession::Notice() {
  if (started_ && !failed_) AppendU32Frame(&out_, kGoaway, 0, {0x7fffffffu, kNoError});
}

void H2OwnSession::GoAway() {
  if (!started_ || failed_) return;
  goaway_sent_ = true;
  AppendU32Frame(&out_, kGoaway, 0, {static_cast<uint32_t>(last_stream_), kNoError});
}

void H2OwnSession::Terminate() {
  if (started_) Fail(kNoError, "idle");
}

void H2OwnSession::Close() {
  closed_ = true;
  for (auto& s : streams_) {
    CancelParked(*s);
    if (const std::shared_ptr<H2Consume> c = s->consume) c->OnClose();
    if (const std::shared_ptr<H2StreamState> st = s->streaming) st->OnClose();
  }
}

bool H2OwnSession::OnFrame(const FrameHeader& h, const uint8_t* p) {
  if (in_block_ && (h.type != kContinuation || h.stream != block_stream_)) {
    Fail(kProtocolError, "a header block interrupted");
    return false;
  }
  switch (h.type) {
    case kData:
      return OnData(h, p);
    case kHeaders:
      return OnHeaders(h, p);
    case kContinuation:
      if (!in_block_) {
        Fail(kProtocolError, "CONTINUATION without HEADERS");
        return false;
      }
      block_.append(reinterpret_cast<const char*>(p), h.length);
      if (block_.size() > kMaxHeaderBlock) {
        Fail(kEnhanceYourCalm, "a header block too large");
        return false;
      }
      if ((h.flags & kFlagEndHeaders) == 0) return true;
      in_block_ = false;
      return OnHeaderBlock();
    case kPriority:  // ignored (RFC 9113 section 5.3.2), but checked
      if (h.stream == 0 || h.length != 5) {
        Fail(h.stream == 0 ? kProtocolError : kFrameSizeError, "a malformed PRIORITY");
        return false;
      }
      return true;
    case kRstStream: {
      if (h.stream == 0 || h.length != 4) {
        Fail(h.stream == 0 ? kProtocolError : kFrameSizeError, "a malformed RST_STREAM");
        return false;
      }
      if (!resets_.Take(std::chrono::steady_clock::now())) {
        Fail(kEnhanceYourCalm, "a client resets streams too fast");
        return false;
      }
      if (Stream* s = Find(h.stream)) {
        CloseStream(s, -1);
      } else if (h.stream > last_stream_) {  // RFC 9113 section 6.4
        Fail(kProtocolError, "RST_STREAM on an idle stream");
        return false;
      }
      return true;
    }
    case kSettings:
      return OnSettings(h, p);
    case kPushPromise:
      Fail(kProtocolError, "PUSH_PROMISE from a client");
      return false;
    case kPing:
      if (h.stream != 0 || h.length != 8) {
        Fail(h.stream != 0 ? kProtocolError : kFrameSizeError, "a malformed PING");
        return false;
      }
      if ((h.flags & kFlagAck) == 0) {
        AppendFrameHeader(&out_, 8, kPing, kFlagAck, 0);
        out_.append(reinterpret_cast<const char*>(p), 8);
        ++outbound_acks_;
      }
      return true;
    case kGoaway:
      if (h.stream != 0 || h.length < 8) {
        Fail(h.stream != 0 ? kProtocolError : kFrameSizeError, "a malformed GOAWAY");
        return false;
      }
      peer_goaway_ = true;
      return true;
    case kWindowUpdate:
      if (h.length != 4) {
        Fail(kFrameSizeError, "a malformed WINDOW_UPDATE");
        return false;
      }
      OnWindowUpdate(h.stream, ReadU32(p) & 0x7fffffffu);
      return !failed_;
    default:  // unknown frame types are ignored (RFC 9113 section 4.1)
      return true;
  }
}

bool H2OwnSession::OnSettings(const FrameHeader& h, const uint8_t* p) {
  if (h.stream != 0) {
    Fail(kProtocolError, "SETTINGS on a stream");
    return false;
  }
  if ((h.flags & kFlagAck) != 0) {
    if (h.length != 0) Fail(kFrameSizeError, "a SETTINGS acknowledgement with a payload");
    return !failed_;
  }
  if (h.length % 6 != 0) {
    Fail(kFrameSizeError, "a SETTINGS frame of a partial setting");
    return false;
  }
  if (h.length / 6 > kMaxSettings) {
    Fail(kEnhanceYourCalm, "a SETTINGS frame of too many settings");
    return false;
  }
  bool window_grew = false;
  for (size_t i = 0; i < h.length; i += 6) {
    const uint16_t id = static_cast<uint16_t>((p[i] << 8) | p[i + 1]);
    const uint32_t value = ReadU32(p + i + 2);
    switch (id) {
      case kHeaderTableSize:
        encoder_.SetTableSize(std::min<uint32_t>(value, 4096));
        ok_headers_.clear();
        ok_trailers_.clear();
        break;
      case kEnablePush:
        if (value > 1) Fail(kProtocolError, "SETTINGS_ENABLE_PUSH not 0 or 1");
        break;
      case kInitialWindowSize: {
        if (value > kMaxWindow) {
          Fail(kFlowControlError, "SETTINGS_INITIAL_WINDOW_SIZE above 2^31-1");
          break;
        }
        const int64_t delta = static_cast<int64_t>(value) - peer_initial_window_;
        peer_initial_window_ = value;
        for (auto& s : streams_) {
          s->send_window += delta;
          if (s->send_window > kMaxWindow) Fail(kFlowControlError, "a stream window past 2^31-1");
        }
        window_grew = window_grew || delta > 0;
        break;
      }
      case kMaxFrameSize:
        if (value < kDefaultMaxFrame || value > 0xffffff) {
          Fail(kProtocolError, "SETTINGS_MAX_FRAME_SIZE out of range");
        } else {
          peer_max_frame_ = value;
        }
        break;
      default:  // MAX_CONCURRENT_STREAMS (the client's), MAX_HEADER_LIST_SIZE, unknown ones
        break;
    }
    if (failed_) return false;
  }
  AppendFrameHeader(&out_, 0, kSettings, kFlagAck, 0);
  ++outbound_acks_;
  if (window_grew) ResumeBlocked();
  return true;
}

void H2OwnSession::OnWindowUpdate(int32_t id, uint32_t increment) {
  if (increment == 0) {
    if (id == 0) return Fail(kProtocolError, "a WINDOW_UPDATE of 0");
    if (Stream* s = Find(id)) ResetStream(s, kProtocolError);
    return;
  }
  if (id != 0) {
    Stream* s = Find(id);
    if (s == nullptr) {
      // Idle: a connection error (RFC 9113 section 5.1); closed: ignored.
      if (id > last_stream_) Fail(kProtocolError, "WINDOW_UPDATE on an idle stream");
      return;
    }
    s->send_window += increment;
    if (s->send_window > kMaxWindow) return ResetStream(s, kFlowControlError);
    if (!s->blocked) return;
    s->blocked = false;
    if (s->producer == nullptr) WriteBody(s);  // else at the next Send (ProduceData)
    return;
  }
  conn_send_window_ += increment;
  if (conn_send_window_ > kMaxWindow) return Fail(kFlowControlError, "a window past 2^31-1");
  ResumeBlocked();
}

void H2OwnSession::ResumeBlocked() {
  std::vector<int32_t> blocked;
  for (auto& s : streams_) {
    if (s->blocked) blocked.push_back(s->id);
  }
  for (int32_t b : blocked) {
    Stream* s = Find(b);
    if (s == nullptr) continue;
    s->blocked = false;
    if (s->producer == nullptr) WriteBody(s);  // else at the next Send (ProduceData)
  }
}

}  // namespace chronoq::grpc_api
