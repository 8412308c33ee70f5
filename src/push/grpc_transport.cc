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

#include <memory>
#include <unordered_map>

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

// Lifetimes. The completions run on gRPC's callback threads; on Linux those are the threads of
// one process-wide completion queue that every channel holds a reference to, and destroying the
// channel that drops the last reference shuts that queue down and joins its threads. Done on one
// of those threads, the thread joins itself (which fails) and goes on polling a deleted queue: a
// double free inside libgrpc (gRPC issue 37858). So no thread of gRPC ever holds the last
// reference to a channel here: the transport keeps every channel in `stubs_` until Stop, a call's
// ClientContext (which refers to its channel too) is destroyed inside its completion while the
// call is still counted, and Stop destroys the channels on its caller's thread once no Start and
// no completion is under way.
class GrpcTransport final : public Transport {
 public:
  ~GrpcTransport() override { Stop(); }

  void Start(PushCall call, UniqueFunction<void(PushOutcome)> done) override {
    auto owned = std::make_unique<GrpcCall>();
    GrpcCall* c = owned.get();
    c->done = std::move(done);
    c->timeout = call.timeout;
    c->context.set_deadline(std::chrono::system_clock::now() + call.timeout);
    c->context.AddMetadata("x-chronoq-msg-id", call.msg_id);
    c->context.AddMetadata("x-chronoq-topic", call.topic);
    c->context.AddMetadata("x-chronoq-attempt", std::to_string(call.attempt));
    grpc::Slice slice(call.body);
    c->request = grpc::ByteBuffer(&slice, 1);
    grpc::GenericStub* stub = nullptr;
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
        slot = std::make_unique<grpc::GenericStub>(
            grpc::CreateCustomChannel(call.grpc_target, grpc::InsecureChannelCredentials(), args));
      }
      stub = slot.get();  // kept in stubs_ until Stop, which waits for this Start to return
      active_.emplace(c, std::move(owned));
      ++busy_;
    }
    // From here on the completion owns `c` and may already have destroyed it.
    stub->UnaryCall(&c->context, call.grpc_method, grpc::StubOptions(), &c->request, &c->response,
                    [this, c](grpc::Status status) { OnDone(c, status); });
    Release();
  }

  void Stop() override {
    std::unordered_map<std::string, std::unique_ptr<grpc::GenericStub>> stubs;
    {
      base::MutexLock lock(mu_);
      stopped_ = true;
      for (auto& [c, owned] : active_) c->context.TryCancel();
      // gRPC completes every cancelled call promptly (and every call by its deadline): wait for
      // their completions, and for Starts under way, to have ended.
      while (!active_.empty() || busy_ > 0) idle_cv_.Wait(mu_);
      stubs.swap(stubs_);
    }
    // The channels go here, on the caller's thread, with no lock held (module comment above).
    stubs.clear();
  }

 private:
  void OnDone(GrpcCall* c, const grpc::Status& status) CQ_EXCLUDES(mu_) {
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
    std::unique_ptr<GrpcCall> owned;
    {
      base::MutexLock lock(mu_);
      auto it = active_.find(c);
      owned = std::move(it->second);
      active_.erase(it);
      ++busy_;  // until the call is destroyed: its ClientContext refers to the channel
    }
    owned.reset();
    Release();
  }

  // Ends a Start or a completion; Stop waits for all of them.
  void Release() CQ_EXCLUDES(mu_) {
    base::MutexLock lock(mu_);
    if (--busy_ == 0 && active_.empty()) idle_cv_.SignalAll();
  }

  base::Mutex mu_;
  base::CondVar idle_cv_;  // signalled when active_ is empty and busy_ is 0
  std::unordered_map<std::string, std::unique_ptr<grpc::GenericStub>> stubs_ CQ_GUARDED_BY(mu_);
  // The calls started and not yet completed, each owned here until its completion.
  std::unordered_map<GrpcCall*, std::unique_ptr<GrpcCall>> active_ CQ_GUARDED_BY(mu_);
  // Starts and completions under way, each of which may hold a reference to a channel.
  int busy_ CQ_GUARDED_BY(mu_) = 0;
  bool stopped_ CQ_GUARDED_BY(mu_) = false;
};

}  // namespace

std::unique_ptr<Transport> NewGrpcTransport(const PusherOptions&) {
  return std::make_unique<GrpcTransport>();
}

}  // namespace chronoq::push::internal
