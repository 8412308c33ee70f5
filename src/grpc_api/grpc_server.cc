// The server: chronoq.v1.DelayQueue (delay_queue_service.cc), server reflection and the default
// health service on one listening port, with the request-size limit and the figures.
#include "grpc_api/grpc_server.h"

#include <absl/synchronization/mutex.h>
#include <fmt/format.h>
#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/impl/service_type.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <memory>

#include "grpc_api/api_context.h"
#include "grpc_api/grpc_tls.h"
#include "grpc_api/h2_server.h"

namespace chronoq::grpc_api {
namespace {

class Server final : public GrpcServer {
 public:
  Server(service::QueueService* service, const base::Clock* clock, base::Scheduler* scheduler,
         const auth::Authenticator* authenticator)
      : stats_(std::make_shared<MethodStats>()) {
    api_.service = service;
    api_.clock = clock;
    api_.scheduler = scheduler;
    api_.stats = stats_.get();
    api_.streams = &streams_;
    api_.authenticator = authenticator;
    delay_queue_ = NewDelayQueueService(&api_);
  }

  ~Server() override {
    if (server_ != nullptr) Shutdown(std::chrono::milliseconds(0));
  }

  Status Start(const GrpcOptions& o) {
    // Both apply to the servers built from here on; the health service then answers for "" (the
    // whole server) and each registered service.
    // Debian's abseil runs absl::Mutex's deadlock detection (a graph of every lock order, a few
    // percent of a gRPC call's CPU); gRPC's locks are its only users here.
    absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
    grpc::EnableDefaultHealthCheckService(true);
    grpc::reflection::InitProtoReflectionServerBuilderPlugin();
    grpc::ServerBuilder builder;
    const std::string address = fmt::format("{}:{}", o.host, o.port);
    int bound = 0;
    std::shared_ptr<grpc::ServerCredentials> credentials = grpc::InsecureServerCredentials();
    if (o.tls != nullptr) {
      CQ_ASSIGN_OR_RETURN(tls_, GrpcTls::Create(*o.tls));
      credentials = tls_->credentials();
    }
    builder.AddListeningPort(address, credentials, &bound);
    // A request beyond this is refused from its length prefix, before it is read whole.
    builder.SetMaxReceiveMessageSize(
        static_cast<int>(std::min<int64_t>(o.max_msg_bytes + kEnvelopeBytes, INT_MAX)));
    builder.RegisterService(delay_queue_.get());
    server_ = builder.BuildAndStart();
    if (server_ == nullptr || bound == 0) {
      server_.reset();
      return Status(Errc::kUnavailable,
                    fmt::format("grpc-listen: cannot listen on {} (in use, or not an address of "
                                "this machine)",
                                address));
    }
    port_ = static_cast<uint16_t>(bound);
    // The health service follows the node's online/offline switch (camellia's
    // /camellia/health/online and offline): SERVING while online, NOT_SERVING while offline.
    grpc::HealthCheckServiceInterface* health = server_->GetHealthCheckService();
    online_watcher_ =
        api_.service->AddOnlineWatcher([health](bool online) { health->SetServingStatus(online); });
    health->SetServingStatus(api_.service->online());
    return Status::Ok();
  }

  void AddMetrics(metrics::Registry& registry) {
    registry.Add([stats = stats_](metrics::TextWriter& w) { stats->Render(w); });
  }

  uint16_t port() const override { return port_; }
  size_t streams() const override { return streams_.size(); }
  void EndStreams() override { streams_.EndAll(); }

  void Shutdown(std::chrono::milliseconds deadline) override {
    if (shut_down_.exchange(true)) return;
    if (online_watcher_ != 0) api_.service->RemoveOnlineWatcher(online_watcher_);
    streams_.EndAll();
    server_->GetHealthCheckService()->SetServingStatus(false);
    server_->Shutdown(std::chrono::system_clock::now() + deadline);
    server_->Wait();
  }

  Status ReloadTls(const tls::TlsIdentity& identity) override {
    if (tls_ == nullptr) return Status(Errc::kInvalidState, "the gRPC server is not using TLS");
    return tls_->Reload(identity);
  }

 private:
  std::shared_ptr<MethodStats> stats_;  // shared with the registry's collector
  ConsumeStreams streams_;
  ApiContext api_;
  std::unique_ptr<grpc::Service> delay_queue_;
  std::unique_ptr<GrpcTls> tls_;  // TLS only; outlives server_ (destroyed after it)
  std::unique_ptr<grpc::Server> server_;
  uint16_t port_ = 0;
  uint64_t online_watcher_ = 0;  // the service's, while the server runs
  std::atomic<bool> shut_down_{false};
};

}  // namespace

Result<std::unique_ptr<GrpcServer>> StartGrpcServer(const GrpcOptions& options,
                                                    service::QueueService* service,
                                                    const base::Clock* clock,
                                                    base::Scheduler* scheduler,
                                                    metrics::Registry* registry) {
  if (options.engine == "h2" || options.engine == "nghttp2") {
    return StartH2Server(options, service, clock, scheduler, registry);
  }
  auto server = std::make_unique<Server>(service, clock, scheduler, options.authenticator);
  CQ_RETURN_IF_ERROR(server->Start(options));
  if (registry != nullptr) server->AddMetrics(*registry);
  return std::unique_ptr<GrpcServer>(std::move(server));
}

}  // namespace chronoq::grpc_api
