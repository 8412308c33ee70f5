// Consume on the nghttp2 engine (h2_consume.h): the HTTP/2 side of the call; the rules are
// consume_stream.cc's.
#include "grpc_api/h2_consume.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "chronoq/v1/delay_queue.pb.h"
#include "grpc_api/h2_wire.h"

namespace chronoq::grpc_api {
std::shared_ptr<H2Consume> H2Consume::Open(H2Host* host, std::shared_ptr<void> hold,
                                           const ApiContext* api, int32_t id,
                                           std::optional<std::string> authorization,
                                           std::chrono::system_clock::time_point deadline,
                                           int64_t max_request_bytes) {
  auto c = std::make_shared<H2Consume>(host, std::move(hold), id, max_request_bytes);
  c->self_ = c;
  std::optional<std::string_view> header;
  if (authorization) header = *authorization;
  c->stream_ = NewConsumeStream(api, header, deadline, c.get());
  if (c->stream_ != nullptr) c->stream_->Start();
  return c;
}

H2Consume::H2Consume(H2Host* host, std::shared_ptr<void> hold, int32_t id,
                     int64_t max_request_bytes)
    : host_(host),
      hold_(std::move(hold)),
      id_(id),
      max_request_bytes_(max_request_bytes),
      in_(max_request_bytes) {}

// ---- the connection's reports

void H2Consume::OnData(const uint8_t* data, size_t len) {
  unconsumed_ += len;
  if (finished_ || closed_ || refused_) return GiveBackWindow();
  in_.Append(data, len);
  Deframe();
  Deliver();
  GiveBackWindow();
}

void H2Consume::OnRemoteEnd() {
  remote_ended_ = true;
  Deliver();
}

void H2Consume::OnClose() {
  if (closed_) return;
  closed_ = true;
  deferred_ = false;
  read_into_ = nullptr;
  pending_.clear();
  if (unconsumed_ > 0) host_->out()->ConsumeConnection(unconsumed_);
  unconsumed_ = 0;
  if (stream_ == nullptr || finished_) return;
  // The stream ends; the write in flight (if any) failed. Nothing here touches the HTTP/2
  // stream any more.
  std::shared_ptr<H2Consume> hold = shared_from_this();
  stream_->OnCancel();
  if (writing_) {
    writing_ = false;
    stream_->OnWriteDone(false);
  }
}

void H2Consume::OnDeadline() {
  if (stream_ != nullptr && !finished_) stream_->End(kGrpcDeadlineExceeded, "Deadline Exceeded");
}

ssize_t H2Consume::Produce(uint8_t* buf, size_t length, uint32_t* data_flags) {
  if (out_pos_ < out_.size()) {
    const size_t n = std::min(length, out_.size() - out_pos_);
    std::memcpy(buf, out_.data() + out_pos_, n);
    out_pos_ += n;
    if (out_pos_ == out_.size()) {
      // Handed to nghttp2 whole (the client's window let it through): the next may come, in the
      // same write. Not inline: nghttp2 is producing.
      out_.clear();
      out_pos_ = 0;
      writing_ = false;
      host_->AfterSend([self = shared_from_this()] { self->stream_->OnWriteDone(true); });
    }
    return static_cast<ssize_t>(n);
  }
  if (status_) {
    *data_flags |= kEof | kNoEndStream;
    if (host_->out()->SubmitStatus(id_, status_->first, status_->second, true) != 0) {
      *data_flags &= ~kNoEndStream;
    }
    status_.reset();
    return 0;
  }
  deferred_ = true;
  return kDeferred;
}

// ---- the transport: from any thread to the connection's

void H2Consume::SendMetadata() {
  host_->Run([self = shared_from_this()] { self->DoSendMetadata(); });
}

void H2Consume::ReadRequest(v1::ConsumeRequest* req) {
  host_->Run([self = shared_from_this(), req] { self->DoRead(req); });
}

void H2Consume::WriteResponse(const v1::ConsumeResponse* resp) {
  // Encoded on the caller's thread; `resp` is the stream's until OnWriteDone.
  host_->Run([self = shared_from_this(), frame = GrpcFrame(*resp)]() mutable {
    self->DoWrite(std::move(frame));
  });
}

void H2Consume::FinishCall(int code, std::string message) {
  host_->Run([self = shared_from_this(), code, message = std::move(message)]() mutable {
    self->DoFinish(code, std::move(message));
  });
}

// ---- on the connection's thread

void H2Consume::DoSendMetadata() {
  if (closed_ || headers_sent_) return;
  headers_sent_ = true;
  // The connection's stream holds this until the stream closes.
  host_->out()->SubmitResponse(id_, this);
}

void H2Consume::DoRead(v1::ConsumeRequest* req) {
  if (closed_) return;  // the stream knows (OnCancel) and waits for no read
  read_into_ = req;
  Deliver();
  GiveBackWindow();
}

void H2Consume::DoWrite(std::string frame) {
  writing_ = true;
  if (closed_) {
    writing_ = false;
    host_->Post([self = shared_from_this()] { self->stream_->OnWriteDone(false); });
    return;
  }
  if (!headers_sent_) DoSendMetadata();
  out_ = std::move(frame);
  out_pos_ = 0;
  Resume();
}

void H2Consume::DoFinish(int code, std::string message) {
  finished_ = true;
  if (!closed_) {
    if (!headers_sent_) {
      headers_sent_ = true;
      host_->out()->SubmitStatus(id_, code, message, false);  // Trailers-Only
    } else {
      status_.emplace(code, std::move(message));
      Resume();
    }
  }
  if (stream_ != nullptr) stream_->OnDone();
  // Released at the end of this call (the caller holds this): the host's stream keeps this
  // until the status is written.
  std::shared_ptr<H2Consume> self = std::move(self_);
  std::shared_ptr<void> host = std::move(hold_);
}

void H2Consume::Deframe() {
  std::string_view message;
  for (;;) {
    const GrpcDeframer::Next next = in_.Take(&message);
    switch (next) {
      case GrpcDeframer::Next::kMessage:
        pending_.emplace_back(message);
        continue;
      case GrpcDeframer::Next::kNeedMore:
        return;
      case GrpcDeframer::Next::kCompressed:
      case GrpcDeframer::Next::kTooLarge: {
        // Refused from its prefix, before it is buffered; the status is followed by RST_STREAM
        // (NO_ERROR) so that the client stops sending.
        const bool compressed = next == GrpcDeframer::Next::kCompressed;
        refused_ = true;
        in_.Release();
        if (compressed) {
          stream_->End(kGrpcUnimplemented, "compressed requests are not supported");
        } else {
          stream_->End(kGrpcResourceExhausted, RequestTooLarge(max_request_bytes_));
        }
        return;
      }
    }
  }
}

void H2Consume::Deliver() {
  if (read_into_ == nullptr || stream_ == nullptr) return;
  v1::ConsumeRequest* req = read_into_;
  if (!pending_.empty()) {
    read_into_ = nullptr;
    const bool parsed = req->ParseFromString(pending_.front());
    pending_.pop_front();
    if (!parsed) {
      stream_->End(kGrpcInternal, "the request cannot be parsed as " + req->GetTypeName());
    }
    stream_->OnReadDone(parsed);
  } else if (remote_ended_ || refused_) {
    read_into_ = nullptr;
    stream_->OnReadDone(false);
  }
}

void H2Consume::GiveBackWindow() {
  if (!pending_.empty() || unconsumed_ == 0 || closed_) return;
  host_->out()->ConsumeStream(id_, unconsumed_);
  unconsumed_ = 0;
}

void H2Consume::Resume() {
  if (!deferred_ || closed_) return;
  deferred_ = false;
  host_->out()->ResumeData(id_);
}

}  // namespace chronoq::grpc_api
