// EXPERIMENTAL (grpc-engine=nghttp2; docs/benchmarks.md, gRPC "Third look"): the gRPC protocol
// served by our own HTTP/2 server, nghttp2's server sessions over Asio sockets on `threads`
// single-threaded io_contexts (as http/server.h), instead of gRPC's C++ server. A prototype to
// measure the protocol layer's cost per call, growing into a replacement (docs/grpc.md): plain
// h2c only, the unary methods (h2_routes.h over unary_methods.h, the grpc++ engine's code below
// the protocol), Consume (h2_consume.h over consume_stream.h, as the grpc++ engine's), deadlines
// (grpc-timeout), GOAWAY at shutdown; no reflection, health or TLS yet (UNIMPLEMENTED).
//
// This header names no nghttp2, Asio or protobuf type.
#pragma once

#include <memory>

#include "base/clock.h"
#include "base/result.h"
#include "base/scheduler.h"
#include "grpc_api/grpc_server.h"
#include "metrics/registry.h"
#include "service/queue_service.h"

namespace chronoq::grpc_api {

Result<std::unique_ptr<GrpcServer>> StartH2Server(const GrpcOptions& options,
                                                  service::QueueService* service,
                                                  const base::Clock* clock,
                                                  base::Scheduler* scheduler,
                                                  metrics::Registry* registry);

}  // namespace chronoq::grpc_api
