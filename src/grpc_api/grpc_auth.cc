// Authentication of gRPC calls (docs/security.md): the `authorization` metadata, checked by the
// same auth::Authenticator as HTTP's Authorization header, with the same sentences.
#include <grpcpp/grpcpp.h>

#include "grpc_api/api_context.h"

namespace chronoq::grpc_api {

std::optional<std::string_view> AuthorizationOf(const ApiContext* api,
                                                const grpc::CallbackServerContext* call) {
  if (api->authenticator == nullptr || !api->authenticator->enabled()) return std::nullopt;
  const auto& md = call->client_metadata();
  auto it = md.find("authorization");  // gRPC metadata keys are lower case
  if (it == md.end()) return std::nullopt;
  return std::string_view(it->second.data(), it->second.size());
}

auth::Decision AuthenticateHeader(const ApiContext* api, std::optional<std::string_view> header,
                                  auth::Operation op) {
  if (api->authenticator == nullptr || !api->authenticator->enabled()) return auth::Decision{};
  return api->authenticator->Check(auth::ParseAuthorization(header), op);
}

int RefusalCode(auth::Verdict v) {
  switch (v) {
    case auth::Verdict::kForbidden:
      return grpc::StatusCode::PERMISSION_DENIED;
    case auth::Verdict::kRateLimited:
      return grpc::StatusCode::RESOURCE_EXHAUSTED;
    default:
      return grpc::StatusCode::UNAUTHENTICATED;
  }
}

}  // namespace chronoq::grpc_api
