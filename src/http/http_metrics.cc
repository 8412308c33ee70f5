#include "http/http_metrics.h"

namespace chronoq::http {

void RegisterMetrics(const Router* router, const HttpServer* server, int64_t max_connections,
                     metrics::Registry& registry) {
  registry.Add([router](metrics::TextWriter& w) { router->RenderMetrics(w); });
  registry.Add([server, max_connections](metrics::TextWriter& w) {
    using metrics::MetricType;
    w.Family("cq_http_connections", "Open HTTP connections", MetricType::kGauge);
    w.Sample("cq_http_connections", {}, server->connections());
    w.Family("cq_http_max_connections",
             "Most open HTTP connections (max-connections, as fitted to the fd limit)",
             MetricType::kGauge);
    w.Sample("cq_http_max_connections", {}, static_cast<double>(max_connections));
    w.Family("cq_http_connections_refused_total",
             "Connections refused (HTTP 503) because max-connections were open",
             MetricType::kCounter);
    w.Sample("cq_http_connections_refused_total", {},
             static_cast<double>(server->refused_connections()));
    w.Family("cq_http_accept_errors_total",
             "Failed accepts (out of file descriptors, usually); each backs off up to 500 ms",
             MetricType::kCounter);
    w.Sample("cq_http_accept_errors_total", {}, static_cast<double>(server->accept_errors()));
    w.Family("cq_http_tls_handshake_failures_total",
             "TLS handshakes failed or timed out (HTTPS only): plain HTTP sent to the port, a "
             "client that does not trust the certificate or has no valid client certificate",
             MetricType::kCounter);
    w.Sample("cq_http_tls_handshake_failures_total", {},
             static_cast<double>(server->tls_handshake_failures()));
  });
}

}  // namespace chronoq::http
