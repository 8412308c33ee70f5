#include "redis/redis_metrics.h"

#include "redis/connection.h"

namespace chronoq::redis {
namespace {

void Render(metrics::TextWriter& w) {
  ConnectionCounts c = GlobalConnectionCounts();
  w.Family("cq_redis_errors_total",
           "Redis connection failures seen by this node (connect failed, connection lost, "
           "command timeout, READONLY)",
           metrics::MetricType::kCounter);
  w.Sample("cq_redis_errors_total", {}, static_cast<double>(c.errors));
  w.Family("cq_redis_reconnects_total", "Successful Redis reconnects of this node",
           metrics::MetricType::kCounter);
  w.Sample("cq_redis_reconnects_total", {}, static_cast<double>(c.reconnects));
}

}  // namespace

void RegisterMetrics(metrics::Registry& registry) { registry.Add(Render); }

}  // namespace chronoq::redis
