// What the gRPC API's pieces share (grpc_server.cc builds it; delay_queue_service.cc and
// consume.cc use it), and their factories. gRPC and the generated classes are only declared here.
#pragma once

#include <memory>
#include <optional>
#include <string_view>

#include "auth/authenticator.h"
#include "base/clock.h"
#include "base/scheduler.h"
#include "grpc_api/consume_streams.h"
#include "grpc_api/method_stats.h"
#include "service/queue_service.h"
#include "service/session.h"

namespace grpc {
class CallbackServerContext;
class Service;
template <class Request, class Response>
class ServerBidiReactor;
}  // namespace grpc

namespace chronoq::v1 {
class ConsumeRequest;
class ConsumeResponse;
}  // namespace chronoq::v1

namespace chronoq::grpc_api {

// Outlives every call (the GrpcServer owns it and shuts the server down first).
struct ApiContext {
  service::QueueService* service = nullptr;
  const base::Clock* clock = nullptr;
  base::Scheduler* scheduler = nullptr;
  MethodStats* stats = nullptr;
  ConsumeStreams* streams = nullptr;
  // Tokens (docs/security.md); null or disabled: every call is anonymous.
  const auth::Authenticator* authenticator = nullptr;
};

// The call's `authorization` metadata (nullopt: none, or no authentication configured).
std::optional<std::string_view> AuthorizationOf(const ApiContext* api,
                                                const grpc::CallbackServerContext* call);
// The decision for a call of `op` (grpc_auth.cc): its `authorization` metadata's value ("Bearer
// <token>"; nullopt: none) checked by the authenticator, as HTTP's Authorization header.
auth::Decision AuthenticateHeader(const ApiContext* api, std::optional<std::string_view> header,
                                  auth::Operation op);
// The gRPC status code of a refusal: UNAUTHENTICATED (16), PERMISSION_DENIED (7) or
// RESOURCE_EXHAUSTED (8, a token's rate limit).
int RefusalCode(auth::Verdict v);

// chronoq.v1.DelayQueue over ctx->service (delay_queue_service.cc).
std::unique_ptr<grpc::Service> NewDelayQueueService(ApiContext* ctx);

// One Consume stream (consume.cc, over consume_stream.h) of the call `call`; deletes itself when
// gRPC is done with it.
grpc::ServerBidiReactor<v1::ConsumeRequest, v1::ConsumeResponse>* NewConsumeReactor(
    ApiContext* ctx, grpc::CallbackServerContext* call);

}  // namespace chronoq::grpc_api
