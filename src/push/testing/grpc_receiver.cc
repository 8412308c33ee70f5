#include "push/testing/grpc_receiver.h"

#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>
#include <grpcpp/support/byte_buffer.h>

#include "base/check.h"
#include "base/mutex.h"

namespace chronoq::push::testing {

std::string GrpcRequest::Metadata(std::string_view key) const {
  auto it = metadata.find(std::string(key));
  return it == metadata.end() ? std::string("<absent>") : it->second;
}

struct GrpcReceiver::Impl : public grpc::CallbackGenericService {
  explicit Impl(Options o) : options(std::move(o)) {}

  grpc::ServerGenericBidiReactor* CreateReactor(grpc::GenericCallbackServerContext* ctx) override;
  void Record(GrpcRequest r) CQ_EXCLUDES(mu) {
    base::MutexLock lock(mu);
    requests.push_back(std::move(r));
    cv.SignalAll();
  }

  const Options options;
  int port = 0;
  std::unique_ptr<grpc::Server> server;
  mutable base::Mutex mu;
  mutable base::CondVar cv;
  std::vector<GrpcRequest> requests CQ_GUARDED_BY(mu);
};

namespace {

// One call: reads the request, records it, answers by the mode.
class Reactor : public grpc::ServerGenericBidiReactor {
 public:
  Reactor(GrpcReceiver::Impl* owner, grpc::GenericCallbackServerContext* ctx)
      : owner_(owner), ctx_(ctx) {
    StartRead(&request_);
  }
  void OnReadDone(bool ok) override {
    if (!ok) return Finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "no request"));
    GrpcRequest r;
    r.method = ctx_->method();
    std::vector<grpc::Slice> slices;
    (void)request_.Dump(&slices);
    for (const auto& s : slices) r.bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
    for (const auto& [k, v] : ctx_->client_metadata()) {
      r.metadata.emplace(std::string(k.data(), k.size()), std::string(v.data(), v.size()));
    }
    std::string reply(r.bytes.rbegin(), r.bytes.rend());
    owner_->Record(std::move(r));
    switch (owner_->options.mode) {
      case GrpcReceiver::Mode::kAnswer: {
        grpc::Slice slice(reply);
        response_ = grpc::ByteBuffer(&slice, 1);
        StartWriteAndFinish(&response_, grpc::WriteOptions(), grpc::Status::OK);
        break;
      }
      case GrpcReceiver::Mode::kFail:
        Finish(grpc::Status(static_cast<grpc::StatusCode>(owner_->options.fail_code),
                            owner_->options.fail_message));
        break;
      case GrpcReceiver::Mode::kHang:
        break;  // OnCancel finishes it once the client's deadline passes
    }
  }
  void OnCancel() override {
    if (owner_->options.mode == GrpcReceiver::Mode::kHang) Finish(grpc::Status::CANCELLED);
  }
  void OnDone() override { delete this; }

 private:
  GrpcReceiver::Impl* const owner_;
  grpc::GenericCallbackServerContext* const ctx_;
  grpc::ByteBuffer request_;
  grpc::ByteBuffer response_;
};

}  // namespace

grpc::ServerGenericBidiReactor* GrpcReceiver::Impl::CreateReactor(
    grpc::GenericCallbackServerContext* ctx) {
  return new Reactor(this, ctx);
}

GrpcReceiver::GrpcReceiver(Options options) : impl_(std::make_unique<Impl>(std::move(options))) {
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &impl_->port);
  builder.RegisterCallbackGenericService(impl_.get());
  impl_->server = builder.BuildAndStart();
  CQ_CHECK(impl_->server != nullptr && impl_->port > 0, "the gRPC receiver did not start");
}

GrpcReceiver::~GrpcReceiver() {
  impl_->server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
}

uint16_t GrpcReceiver::port() const { return static_cast<uint16_t>(impl_->port); }

std::string GrpcReceiver::Target() const { return "127.0.0.1:" + std::to_string(impl_->port); }

std::vector<GrpcRequest> GrpcReceiver::Requests() const {
  base::MutexLock lock(impl_->mu);
  return impl_->requests;
}

size_t GrpcReceiver::RequestCount() const {
  base::MutexLock lock(impl_->mu);
  return impl_->requests.size();
}

bool GrpcReceiver::WaitForRequests(size_t n, std::chrono::milliseconds bound) const {
  const auto deadline = std::chrono::steady_clock::now() + bound;
  base::MutexLock lock(impl_->mu);
  while (impl_->requests.size() < n) {
    if (!impl_->cv.WaitUntil(impl_->mu, deadline)) return impl_->requests.size() >= n;
  }
  return true;
}

}  // namespace chronoq::push::testing
