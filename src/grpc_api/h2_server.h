// Our own gRPC server (grpc-engine=h2, the default, or nghttp2; docs/grpc.md): the gRPC protocol
// served by our own HTTP/2 server over Asio sockets on `threads` single-threaded io_contexts (as
// http/server.h), instead of gRPC's C++ server; each connection's HTTP/2 session is framed by the
// server itself (h2: h2_own_session.h) or by nghttp2 (h2_session.h). h2c or TLS with ALPN h2
// (tls/server_context.h); the unary methods (h2_routes.h over unary_methods.h, the grpc++ engine's
// code below the protocol), Consume (h2_consume.h over consume_stream.h, as the grpc++ engine's),
// deadlines (grpc-timeout), grpc.health.v1 and server reflection (h2_stream.h), the connection
// limits of GrpcOptions, graceful GOAWAY at shutdown.
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
