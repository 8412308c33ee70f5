// The Redis module's figures on GET /metrics: connection failures and reconnects of this node
// (docs/metrics.md).
#pragma once

#include "metrics/registry.h"

namespace chronoq::redis {

// Adds the collector of cq_redis_errors_total and cq_redis_reconnects_total to `registry`.
void RegisterMetrics(metrics::Registry& registry);

}  // namespace chronoq::redis
