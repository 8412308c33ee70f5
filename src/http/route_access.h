// The HTTP side of authentication (docs/security.md): the `/t/<token>` path prefix, and the
// 401/403 answers. The rules themselves (who may do an operation) are auth's; the operation of
// each endpoint is given where the endpoint is registered (Router::Add), so that no endpoint
// exists without its rule.
//
// Pure functions.
#pragma once

#include <optional>
#include <string_view>

#include "auth/access.h"
#include "auth/authenticator.h"
#include "http/http_types.h"

namespace chronoq::http {

// The operation of a path that no route serves: the dashboard's files and the test controls
// are open (so a missing file or a test control of a server not in test mode answers 404 to
// anyone); nullopt for any other path (any valid token will do: 401 before 404).
std::optional<auth::Operation> UnroutedOperation(std::string_view path);

// `/t/<token>/rest?query` -> token and `/rest?query` (the prefix the camellia Java SDK can carry
// in its base URL). `/t/<token>` alone gives `/`. False (nothing set) when the target does not
// start with `/t/`.
bool SplitTokenPrefix(std::string_view target, std::string_view* token, std::string_view* rest);

// The request's credential: its Authorization header, else the token of a /t/<token> path
// prefix. Strips that prefix from req.target (so req.path() is the endpoint's path after it).
// The credential's token views req's buffers: use it while req lives.
auth::Credential TakeCredential(HttpRequest& req);

// Authenticates and authorizes `req` for `op` (the operation of its route; nullopt for a path
// no route serves): with a verdict other than kAllowed, the 401 (with WWW-Authenticate: Bearer),
// 403 or 429 answer, whose body never holds the token. On success sets req.caller.
std::optional<HttpResponse> Admit(const auth::Authenticator& authenticator,
                                  const auth::Credential& cred, std::optional<auth::Operation> op,
                                  HttpRequest& req);

}  // namespace chronoq::http
