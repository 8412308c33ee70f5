// Streaming calls of the nghttp2 engine's standard services (h2_stream.h): the request deframer,
// the writer's queue and the data provider that writes it.
#include "grpc_api/h2_stream.h"

#include <fmt/format.h>
#include <nghttp2/nghttp2.h>

#include <algorithm>
#include <cstring>

namespace chronoq::grpc_api {
namespace {

constexpr int kResourceExhausted = 8;
constexpr int kUnimplemented = 12;

nghttp2_nv CopiedNv(std::string_view name, std::string_view value) {
  return nghttp2_nv{reinterpret_cast<uint8_t*>(const_cast<char*>(name.data())),
                    reinterpret_cast<uint8_t*>(const_cast<char*>(value.data())), name.size(),
                    value.size(), NGHTTP2_NV_FLAG_NONE};
}

class Writer final : public H2StreamWriter {
 public:
  explicit Writer(std::weak_ptr<H2StreamState> state) : state_(std::move(state)) {}
  void Write(std::string message) override {
    if (auto s = state_.lock()) s->Queue(GrpcFrame(message), false, 0, {});
  }
  void Finish(int code, std::string message) override {
    if (auto s = state_.lock()) s->Queue({}, true, code, std::move(message));
  }

 private:
  std::weak_ptr<H2StreamState> state_;
};

// The response's DATA: what the writer queued, then the trailers; waits (DEFERRED) while the
// queue is empty and the status unknown.
ssize_t ReadOut(nghttp2_session* session, int32_t id, uint8_t* buf, size_t length,
                uint32_t* data_flags, nghttp2_data_source* source, void*) {
  auto* o = static_cast<H2StreamState::Out*>(source->ptr);
  const size_t n = std::min(length, o->data.size() - o->pos);
  std::memcpy(buf, o->data.data() + o->pos, n);
  o->pos += n;
  if (o->pos == o->data.size()) {
    o->data.clear();
    o->pos = 0;
    if (o->finished) {
      *data_flags |= NGHTTP2_DATA_FLAG_EOF | NGHTTP2_DATA_FLAG_NO_END_STREAM;
      const std::string code = std::to_string(o->code);
      const std::string message = GrpcPercentEncode(o->message);
      const nghttp2_nv trailers[] = {CopiedNv("grpc-status", code),
                                     CopiedNv("grpc-message", message)};
      if (nghttp2_submit_trailer(session, id, trailers, message.empty() ? 1 : 2) != 0) {
        *data_flags &= ~NGHTTP2_DATA_FLAG_NO_END_STREAM;
      }
    } else if (n == 0) {
      return NGHTTP2_ERR_DEFERRED;
    }
  }
  return static_cast<ssize_t>(n);
}

}  // namespace

std::string GrpcPercentEncode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if (c < 0x20 || c > 0x7e || c == '%') {
      out += fmt::format("%{:02X}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string GrpcFrame(std::string_view message) {
  const size_t n = message.size();
  std::string out(5, '\0');
  out[1] = static_cast<char>((n >> 24) & 0xff);
  out[2] = static_cast<char>((n >> 16) & 0xff);
  out[3] = static_cast<char>((n >> 8) & 0xff);
  out[4] = static_cast<char>(n & 0xff);
  out.append(message);
  return out;
}

std::shared_ptr<H2StreamWriter> H2StreamState::NewWriter() {
  return std::make_shared<Writer>(weak_from_this());
}

void H2StreamState::OnData(const uint8_t* data, size_t len) {
  if (closed_ || handler_ == nullptr) return;
  in_.append(reinterpret_cast<const char*>(data), len);
  size_t pos = 0;
  while (in_.size() - pos >= 5 && handler_ != nullptr) {
    const auto* p = reinterpret_cast<const uint8_t*>(in_.data() + pos);
    const size_t n = (size_t{p[1]} << 24) | (size_t{p[2]} << 16) | (size_t{p[3]} << 8) | p[4];
    if (p[0] != 0) {
      in_.clear();
      return Queue({}, true, kUnimplemented, "compressed messages are not supported");
    }
    if (static_cast<int64_t>(n) > max_message_bytes_) {
      in_.clear();
      return Queue({}, true, kResourceExhausted,
                   fmt::format("request larger than {} bytes", max_message_bytes_));
    }
    if (in_.size() - pos - 5 < n) break;
    handler_->OnMessage(std::string_view(in_).substr(pos + 5, n));
    pos += 5 + n;
  }
  in_.erase(0, pos);
}

void H2StreamState::OnHalfClose() {
  if (!closed_ && handler_ != nullptr) handler_->OnHalfClose();
}

void H2StreamState::OnClose() {
  if (closed_) return;
  closed_ = true;
  if (handler_ != nullptr) handler_->OnClose();
  handler_.reset();
}

void H2StreamState::Queue(std::string frame, bool finish, int code, std::string message) {
  {
    base::MutexLock lock(mu_);
    if (finish_queued_) return;
    queued_ += frame;
    if (finish) {
      finish_queued_ = true;
      code_ = code;
      message_ = std::move(message);
    }
  }
  wake_();
}

void H2StreamState::Pump(nghttp2_session* session, int32_t id) {
  if (closed_ || done_) return;
  {
    base::MutexLock lock(mu_);
    out_.data.append(queued_);
    queued_.clear();
    if (finish_queued_ && !out_.finished) {
      out_.finished = true;
      out_.code = code_;
      out_.message = std::move(message_);
    }
  }
  if (headers_sent_) {
    nghttp2_session_resume_data(session, id);
    if (out_.finished) done_ = true;
    return;
  }
  if (out_.finished && out_.data.empty()) {
    // Trailers-Only: the status in the one HEADERS frame.
    const std::string code = std::to_string(out_.code);
    const std::string message = GrpcPercentEncode(out_.message);
    const nghttp2_nv nva[] = {CopiedNv(":status", "200"),
                              CopiedNv("content-type", "application/grpc"),
                              CopiedNv("grpc-status", code), CopiedNv("grpc-message", message)};
    nghttp2_submit_response(session, id, nva, message.empty() ? 3 : 4, nullptr);
    headers_sent_ = done_ = true;
    return;
  }
  if (out_.data.empty()) return;
  const nghttp2_nv nva[] = {CopiedNv(":status", "200"),
                            CopiedNv("content-type", "application/grpc")};
  nghttp2_data_provider body;
  body.source.ptr = &out_;
  body.read_callback = ReadOut;
  nghttp2_submit_response(session, id, nva, std::size(nva), &body);
  headers_sent_ = true;
}

}  // namespace chronoq::grpc_api
