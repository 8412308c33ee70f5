// The gRPC transport: a unary call to any method with raw request bytes through
// grpc::GenericStub's callback API (no generated stubs). One channel and stub per target,
// created on first use and kept; gRPC's own threads run the completions. The only file of the
// server's libraries that includes gRPC client headers.

#include <fmt/format.h>
#include <grpcpp/client_context.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/byte_buffer.h>

#include <unordered_map>
#include <unordered_set>

#include "base/mutex.h"
#include "push/transport.h"

namespace chronoq::push::internal {
namespace {

std::string_view CodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return "OK";
    case grpc::StatusCode::CANCELLED:
      return "CANCELLED";
    case grpc::StatusCode::UNKNOWN:
      return "UNKNOWN";
    case grpc::StatusCode::INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND:
      return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS:
      return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED:
      return "PERMISSION_DENIED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION:
      return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED:
      return "ABORTED";
    case grpc::StatusCode::OUT_OF_RANGE:
      return "OUT_OF_RANGE";
    case grpc::StatusCode::UNIMPLEMENTED:
      return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL:
      return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE:
      return "UNAVAILABLE";
    case grpc::StatusCode::DATA_LOSS:
      return "DATA_LOSS";
    case grpc::StatusCode::UNAUTHENTICATED:
      return "UNAUTHENTICATED";
    default:
      return "UNKNOWN";
  }
}

// One call in flight: what gRPC's callback API needs alive until the completion.
struct GrpcCall {
  grpc::ClientContext context;
  grpc::ByteBuffer request;
  grpc::ByteBuffer response;
  UniqueFunction<void(PushOutcome)> done;
  std::chrono::milliseconds timeout{0};
};

class GrpcTransport final : public Transport {
 public:
  ~GrpcTransport() override { Stop(); }

  void Start(PushCall call, UniqueFunction<void(PushOutcome)> done) override {
    std::shared_ptr<grpc::GenericStub> stub;
    auto c = std::make_shared<GrpcCall>();
    {
      base::MutexLock lock(mu_);
      if (stopped_) return;  // dropped: the Pusher answers it
      auto& slot = stubs_[call.grpc_target];
      if (!slot) {
        grpc::ChannelArguments args;
        // A target that is down fails fast once known down, and is retried at most every 1 s
        // rather than after gRPC's default back-off of up to 120 s.
        args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
        args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
        slot = std::make_shared<grpc::GenericStub>(
            grpc::CreateCustomChannel(call.grpc_target, grpc::InsecureChannelCredentials(), args));
      }
      stub = slot;
      active_.insert(c.get());
    }
    c->done = std::move(done);
    c->timeout = call.timeout;
    c->context.set_deadline(std::chrono::system_clock::now() + call.timeout);
    c->context.AddMetadata("x-chronoq-msg-id", call.msg_id);
    c->context.AddMetadata("x-chronoq-topic", call.topic);
    c->context.AddMetadata("x-chronoq-attempt", std::to_string(call.attempt));
    grpc::Slice slice(call.body);
    c->request = grpc::ByteBuffer(&slice, 1);
    stub->UnaryCall(&c->context, call.grpc_method, grpc::StubOptions(), &c->request, &c->response,
                    [this, c](grpc::Status status) { OnDone(c, status); });
  }

  void Stop() override {
    base::MutexLock lock(mu_);
    stopped_ = true;
    for (GrpcCall* c : active_) c->context.TryCancel();
    // gRPC completes every cancelled call promptly; wait for their callbacks to have run.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!active_.empty()) {
      if (!idle_cv_.WaitUntil(mu_, deadline)) break;
    }
    stubs_.clear();
  }

 private:
  void OnDone(const std::shared_ptr<GrpcCall>& c, const grpc::Status& status) CQ_EXCLUDES(mu_) {
    PushOutcome out;
    out.code = static_cast<int>(status.error_code());
    out.ok = status.ok();
    if (!status.ok()) {
      out.error = fmt::format("gRPC {}: {}", CodeName(status.error_code()), status.error_message());
      if (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
        out.error += fmt::format(" (timeout {} ms)", c->timeout.count());
      }
    }
    bool stopped = false;
    {
      base::MutexLock lock(mu_);
      stopped = stopped_;
    }
    if (!stopped && c->done) c->done(std::move(out));
    base::MutexLock lock(mu_);
    active_.erase(c.get());
    if (active_.empty()) idle_cv_.SignalAll();
  }

  base::Mutex mu_;
  base::CondVar idle_cv_;  // signalled when active_ becomes empty
  std::unordered_map<std::string, std::shared_ptr<grpc::GenericStub>> stubs_ CQ_GUARDED_BY(mu_);
  // The calls started and not yet completed; their owners are the completion callbacks.
  std::unordered_set<GrpcCall*> active_ CQ_GUARDED_BY(mu_);
  bool stopped_ CQ_GUARDED_BY(mu_) = false;
};

}  // namespace

std::unique_ptr<Transport> NewGrpcTransport(const PusherOptions&) {
  return std::make_unique<GrpcTransport>();
}

}  // namespace chronoq::push::internal
