// The HTTP layer's figures on GET /metrics (docs/metrics.md): per-route requests, application
// errors and latency (the Router's), open, refused and failed connections (the HttpServer's).
#pragma once

#include <cstdint>

#include "http/router.h"
#include "http/server.h"
#include "metrics/registry.h"

namespace chronoq::http {

// Adds the HTTP collectors to `registry`. `max_connections`: the cap the server runs with (as
// fitted to the fd limit). REQUIRES: router and server outlive the scrapes.
void RegisterMetrics(const Router* router, const HttpServer* server, int64_t max_connections,
                     metrics::Registry& registry);

}  // namespace chronoq::http
