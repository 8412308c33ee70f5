// Consume on the grpc++ engine: gRPC's bidi reactor as the ConsumeTransport of the engine-neutral
// stream (consume_stream.h, where every rule of Consume is). gRPC deletes the reactor after
// OnDone; the stream lives on while a service answer or timer still holds it.
#include <grpcpp/grpcpp.h>
#include <grpcpp/support/server_callback.h>

#include <memory>
#include <string>

#include "chronoq/v1/delay_queue.grpc.pb.h"
#include "grpc_api/api_context.h"
#include "grpc_api/consume_stream.h"

namespace chronoq::grpc_api {
namespace {

using Reactor = grpc::ServerBidiReactor<v1::ConsumeRequest, v1::ConsumeResponse>;

class ConsumeReactor final : public Reactor, public ConsumeTransport {
 public:
  ConsumeReactor(const ApiContext* ctx, grpc::CallbackServerContext* call) {
    stream_ = NewConsumeStream(ctx, AuthorizationOf(ctx, call), call->deadline(), this);
    if (stream_ != nullptr) stream_->Start();
  }

  // ConsumeTransport: gRPC's calls.
  void SendMetadata() override { StartSendInitialMetadata(); }
  void ReadRequest(v1::ConsumeRequest* req) override { StartRead(req); }
  void WriteResponse(const v1::ConsumeResponse* resp) override { StartWrite(resp); }
  void FinishCall(int code, std::string message) override {
    Finish(code == 0 ? grpc::Status::OK
                     : grpc::Status(static_cast<grpc::StatusCode>(code), std::move(message)));
  }

  // gRPC's reactions.
  void OnReadDone(bool ok) override { stream_->OnReadDone(ok); }
  void OnWriteDone(bool ok) override { stream_->OnWriteDone(ok); }
  void OnCancel() override {
    if (stream_ != nullptr) stream_->OnCancel();
  }
  void OnDone() override {
    if (stream_ != nullptr) stream_->OnDone();
    delete this;
  }

 private:
  std::shared_ptr<ConsumeStream> stream_;  // null: refused (finished at once)
};

}  // namespace

Reactor* NewConsumeReactor(ApiContext* ctx, grpc::CallbackServerContext* call) {
  return new ConsumeReactor(ctx, call);
}

}  // namespace chronoq::grpc_api
