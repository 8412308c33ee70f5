// The HTTP side of authentication (docs/security.md): which operation (auth/access.h) each
// endpoint is, the `/t/<token>` path prefix, and the 401/403 answers. The rules themselves (who
// may do an operation) are auth's; this file only names the operation of each path.
//
// Pure functions.
#pragma once

#include <optional>
#include <string_view>

#include "auth/access.h"
#include "auth/authenticator.h"
#include "http/http_types.h"

namespace chronoq::http {

// The operation of an endpoint; nullopt for a path that is no endpoint.
std::optional<auth::Operation> RouteOperation(std::string_view path);

// `/t/<token>/rest?query` -> token and `/rest?query` (the prefix the camellia Java SDK can carry
// in its base URL). `/t/<token>` alone gives `/`. False (nothing set) when the target does not
// start with `/t/`.
bool SplitTokenPrefix(std::string_view target, std::string_view* token, std::string_view* rest);

// Authenticates and authorizes `req` (for the operation of `path`, the path after any prefix):
// with a verdict other than kAllowed, the 401 (with WWW-Authenticate: Bearer) or 403 answer,
// whose body never holds the token. On success sets req.caller. Strips the /t/<token> prefix
// from req.target when tokens are on.
std::optional<HttpResponse> Admit(const auth::Authenticator& authenticator, HttpRequest& req);

}  // namespace chronoq::http
