#include "grpc_api/method_stats.h"

#include <string>

namespace chronoq::grpc_api {
namespace {

constexpr std::array<std::string_view, kMethodCount> kMethodNames = {
    "Send",
    "SendBatch",
    "Get",
    "Delete",
    "Update",
    "Touch",
    "Count",
    "List",
    "Pull",
    "Ack",
    "TopicInfo",
    "ListTopics",
    "GetTopicConfig",
    "SetTopicConfig",
    "DeleteTopicConfig",
    "Purge",
    "Redrive",
    "Consume",
    "GetMonitorData",
    "GetMsgHistory",
};

constexpr std::array<std::string_view, kStatusCodeCount> kCodeNames = {
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
};

}  // namespace

std::string_view MethodName(Method m) { return kMethodNames[static_cast<size_t>(m)]; }

std::string_view StatusCodeName(int code) {
  return code >= 0 && code < kStatusCodeCount ? kCodeNames[static_cast<size_t>(code)] : "UNKNOWN";
}

MethodStats::PerMethod::PerMethod() : latency(metrics::LatencyBuckets()) {}

MethodStats::MethodStats() {
  for (auto& m : methods_) m = std::make_unique<PerMethod>();
}

void MethodStats::Record(Method m, int code, int64_t nanos) {
  PerMethod& pm = *methods_[static_cast<size_t>(m)];
  pm.by_code[code >= 0 && code < kStatusCodeCount ? code : 2].Add();
  pm.latency.ObserveNanos(nanos);
}

uint64_t MethodStats::calls(Method m, int code) const {
  return methods_[static_cast<size_t>(m)]->by_code[static_cast<size_t>(code)].value();
}

void MethodStats::Render(metrics::TextWriter& w) const {
  using metrics::MetricType;
  w.Family("cq_grpc_requests_total",
           "gRPC calls answered, per method and status code (a Consume stream counts when it "
           "ends)",
           MetricType::kCounter);
  for (int m = 0; m < kMethodCount; ++m) {
    for (int c = 0; c < kStatusCodeCount; ++c) {
      const uint64_t n = methods_[m]->by_code[c].value();
      if (n == 0 && c != 0) continue;
      w.Sample("cq_grpc_requests_total", {{"method", kMethodNames[m]}, {"code", kCodeNames[c]}},
               static_cast<double>(n));
    }
  }
  w.Family("cq_grpc_request_duration_seconds",
           "Time from receiving a gRPC call to answering it, per method (a Pull includes its "
           "wait, a Consume stream its whole life)",
           MetricType::kHistogram);
  for (int m = 0; m < kMethodCount; ++m) {
    const metrics::Label labels[] = {{"method", kMethodNames[m]}};
    w.Histogram("cq_grpc_request_duration_seconds", labels, methods_[m]->latency.Read());
  }
  w.Family("cq_grpc_consume_streams", "Open Consume streams", MetricType::kGauge);
  w.Sample("cq_grpc_consume_streams", {}, static_cast<double>(streams()));
}

}  // namespace chronoq::grpc_api
