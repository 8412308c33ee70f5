// The gRPC API (API-EXTENSIONS.md section 6): the service chronoq.v1.DelayQueue of
// proto/chronoq/v1/delay_queue.proto, with server reflection and the standard health service
// (grpc.health.v1: SERVING while the node is online, NOT_SERVING while it is offline
// (QueueService::SetOnline) and from Shutdown() on), over the same service::QueueService as HTTP.
// Protocol only: every method decodes its proto into a service request, makes one service call and
// encodes the answer; the service's error sentences are the status messages (Errc -> status code in
// one table). Consume streams messages with credit over the service's long polls.
//
// This header names no gRPC or protobuf type (they stay in the module's .cc files).
//
// Lifecycle: StartGrpcServer, serve, EndStreams() (Consume streams end with OK), then
// QueueService::Shutdown() (parked Pulls answer empty, as HTTP's long polls), then Shutdown(),
// then destroy. REQUIRES: the service, clock and scheduler outlive the GrpcServer.
//
// Thread-safety: all methods are thread-safe. gRPC's own threads run the calls (the callback
// API: a parked Pull or an open Consume stream holds no thread).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "auth/authenticator.h"
#include "base/clock.h"
#include "base/result.h"
#include "base/scheduler.h"
#include "metrics/registry.h"
#include "service/queue_service.h"
#include "tls/identity.h"

namespace chronoq::grpc_api {

// What a request may weigh beyond its payload: a request larger than max-msg-bytes plus this is
// refused by gRPC (RESOURCE_EXHAUSTED) before it is read whole.
inline constexpr int64_t kEnvelopeBytes = 64 * 1024;

struct GrpcOptions {
  std::string host = "0.0.0.0";              // as in `grpc-listen` (IPv6 in brackets)
  uint16_t port = 9090;                      // 0: a free port (GrpcServer::port() tells which)
  int64_t max_msg_bytes = int64_t{4} << 20;  // max-msg-bytes
  // TLS (the files of tls-cert-file, tls-key-file and tls-client-ca-file, checked); nullptr:
  // plain. With a client CA every client must present a certificate it signed.
  const tls::TlsIdentity* tls = nullptr;
  // Tokens (docs/security.md): each call is authenticated from its `authorization` metadata.
  // Null: none. REQUIRES: outlives the server.
  const auth::Authenticator* authenticator = nullptr;
  // grpc-engine: "h2" (h2_server.h: our own HTTP/2 server on Asio, h2c or TLS, framing HTTP/2
  // itself: h2_own_session.h), "nghttp2" (the same server over nghttp2's sessions: h2_session.h)
  // or "grpc++" (gRPC's C++ server).
  std::string engine = "h2";
  int threads = 2;  // our own server's threads (gRPC's server sizes its own)
  // Our own server's connection limits, as HTTP's (http::ServerOptions): open connections at
  // most (one beyond is closed at once), a connection with no call open this long gets GOAWAY and
  // is closed, a TLS handshake not done this long after the accept is closed. RST_STREAMs from
  // one client: `rst_stream_burst` at once, refilled at `rst_stream_per_second` (beyond: GOAWAY
  // ENHANCE_YOUR_CALM; h2_limits.h).
  int64_t max_connections = 10'000;
  std::chrono::milliseconds idle_timeout{120'000};
  std::chrono::milliseconds handshake_timeout{10'000};
  int rst_stream_burst = 1000;
  int rst_stream_per_second = 33;
};

class GrpcServer {
 public:
  virtual ~GrpcServer() = default;

  // The bound port.
  virtual uint16_t port() const = 0;
  // Open Consume streams.
  virtual size_t streams() const = 0;
  // Ends every Consume stream with OK (the messages sent on it and not acked wait for their ack
  // deadline); streams opened from now on end at once.
  virtual void EndStreams() = 0;
  // Stops the server: calls in flight have until `deadline` to answer, then are cancelled.
  // The health service answers NOT_SERVING from now on.
  virtual void Shutdown(std::chrono::milliseconds deadline) = 0;
  // TLS servers: serves `identity` (already checked) to the connections made from about a second
  // from now on (gRPC's certificate watcher polls its in-memory copies each second); open
  // connections keep theirs. kInvalidState for a plain server.
  virtual Status ReloadTls(const tls::TlsIdentity& identity) = 0;
};

// Builds and starts the server on options.host:options.port. `registry` (may be null) gets the
// per-method figures (docs/metrics.md). kUnavailable naming the address when it cannot listen.
Result<std::unique_ptr<GrpcServer>> StartGrpcServer(const GrpcOptions& options,
                                                    service::QueueService* service,
                                                    const base::Clock* clock,
                                                    base::Scheduler* scheduler,
                                                    metrics::Registry* registry);

}  // namespace chronoq::grpc_api
