// Streaming calls of the nghttp2 engine's standard services (h2_stream.h): the request deframer,
// the writer's queue and the data provider that writes it.
#include "grpc_api/h2_stream.h"

#include <algorithm>
#include <cstring>

#include "grpc_api/h2_wire.h"

namespace chronoq::grpc_api {
namespace {

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

}  // namespace

ssize_t H2StreamState::Produce(uint8_t* buf, size_t length, uint32_t* data_flags) {
  Out* o = &out_;
  const size_t n = std::min(length, o->data.size() - o->pos);
  std::memcpy(buf, o->data.data() + o->pos, n);
  o->pos += n;
  if (o->pos == o->data.size()) {
    o->data.clear();
    o->pos = 0;
    if (o->finished) {
      *data_flags |= kEof | kNoEndStream;
      if (session_->SubmitStatus(id_, o->code, o->message, true) != 0) {
        *data_flags &= ~kNoEndStream;
      }
    } else if (n == 0) {
      return kDeferred;
    }
  }
  return static_cast<ssize_t>(n);
}

std::shared_ptr<H2StreamWriter> H2StreamState::NewWriter() {
  return std::make_shared<Writer>(weak_from_this());
}

void H2StreamState::OnData(const uint8_t* data, size_t len) {
  if (closed_ || handler_ == nullptr) return;
  in_.Append(data, len);
  std::string_view message;
  while (handler_ != nullptr) {
    switch (in_.Take(&message)) {
      case GrpcDeframer::Next::kMessage:
        handler_->OnMessage(message);
        continue;
      case GrpcDeframer::Next::kNeedMore:
        return;
      case GrpcDeframer::Next::kCompressed:
        in_.Release();
        return Queue({}, true, kGrpcUnimplemented, "compressed messages are not supported");
      case GrpcDeframer::Next::kTooLarge:
        in_.Release();
        return Queue({}, true, kGrpcResourceExhausted, RequestTooLarge(max_message_bytes_));
    }
  }
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

void H2StreamState::Pump(H2Out* session, int32_t id) {
  if (closed_ || done_) return;
  session_ = session;
  id_ = id;
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
    session->ResumeData(id);
    if (out_.finished) done_ = true;
    return;
  }
  if (out_.finished && out_.data.empty()) {
    session->SubmitStatus(id, out_.code, out_.message, false);  // Trailers-Only
    headers_sent_ = done_ = true;
    return;
  }
  if (out_.data.empty()) return;
  session->SubmitResponse(id, this);
  headers_sent_ = true;
}

}  // namespace chronoq::grpc_api
