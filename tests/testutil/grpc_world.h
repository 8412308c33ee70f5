// The gRPC API's in-process test world (src/grpc_api/*_test.cc): a manual clock and scheduler, the
// embedded engine over an in-memory store, the queue service, a metrics registry, and a GrpcServer
// on a loopback port over them. A fixture derives from it and uses the members by name.
//
//   class MyTest : public ::testing::Test, protected testutil::GrpcWorld {
//    protected:
//     MyTest() : GrpcWorld("grpc") { StartServer(GrpcOptions{}); }
//   };
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <utility>

#include "base/clock.h"
#include "base/scheduler.h"
#include "engine/engine.h"
#include "grpc_api/grpc_server.h"
#include "metrics/registry.h"
#include "service/queue_service.h"
#include "storage/memory/mem_kv.h"
#include "storage/message_store.h"

namespace chronoq::testutil {

class GrpcWorld {
 protected:
  // The clock starts at 1,700,000,040,000 ms; `store_ns` is the store's namespace.
  explicit GrpcWorld(const std::string& store_ns,
                     const service::ServiceOptions& service_options = {})
      : clock_(FromEpochMs(1'700'000'040'000)), sched_(&clock_), store_(&kv_, store_ns) {
    engine_ = std::make_unique<engine::Engine>(engine::EngineOptions{}, &store_, &clock_, &sched_);
    EXPECT_TRUE(engine_->Recover().ok());
    service_ =
        std::make_unique<service::QueueService>(engine_.get(), &clock_, &sched_, service_options);
  }
  ~GrpcWorld() { StopServer(); }
  GrpcWorld(const GrpcWorld&) = delete;
  GrpcWorld& operator=(const GrpcWorld&) = delete;

  // Starts the server on 127.0.0.1 (a free port) with `g`'s other options, the registry's figures.
  void StartServer(grpc_api::GrpcOptions g) {
    g.host = "127.0.0.1";
    g.port = 0;
    auto started = grpc_api::StartGrpcServer(g, service_.get(), &clock_, &sched_, &registry_);
    ASSERT_TRUE(started.has_value()) << started.error().message();
    server_ = std::move(*started);
  }

  // Ends the streams, shuts the service and the server down (waiting up to 500 ms) and deletes
  // the server, the service and the engine. Once; a fixture whose server uses one of its own
  // members (an authenticator) calls it from its destructor.
  void StopServer() {
    if (server_ != nullptr) server_->EndStreams();
    if (service_ != nullptr) service_->Shutdown();
    if (server_ != nullptr) server_->Shutdown(std::chrono::milliseconds(500));
    server_.reset();
    service_.reset();
    engine_.reset();
  }

  base::ManualClock clock_;
  base::ManualScheduler sched_;
  storage::MemKv kv_;
  storage::MessageStore store_;
  std::unique_ptr<engine::Engine> engine_;
  std::unique_ptr<service::QueueService> service_;
  metrics::Registry registry_;
  std::unique_ptr<grpc_api::GrpcServer> server_;
};

}  // namespace chronoq::testutil
