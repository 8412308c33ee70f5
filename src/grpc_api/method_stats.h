// The gRPC layer's figures on GET /metrics (docs/metrics.md): per method, the calls answered by
// status code and their latency (a Consume stream counts once, when it ends, with its lifetime
// as its duration), and the open Consume streams. Lock-free counters (metrics/instruments.h).
//
// Thread-safety: all methods are thread-safe.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string_view>

#include "metrics/exposition.h"
#include "metrics/instruments.h"

namespace chronoq::grpc_api {

// The methods of chronoq.v1.DelayQueue, in the proto's order.
enum class Method {
  kSend,
  kSendBatch,
  kGet,
  kDelete,
  kUpdate,
  kTouch,
  kCount,
  kList,
  kPull,
  kAck,
  kTopicInfo,
  kListTopics,
  kGetTopicConfig,
  kSetTopicConfig,
  kDeleteTopicConfig,
  kPurge,
  kRedrive,
  kConsume,
  kGetMonitorData,
  kGetMsgHistory,
};
inline constexpr int kMethodCount = 20;
std::string_view MethodName(Method m);  // "Send", ...

// gRPC status codes 0..16 by name ("OK", "INVALID_ARGUMENT", ...); "UNKNOWN" beyond.
inline constexpr int kStatusCodeCount = 17;
std::string_view StatusCodeName(int code);

class MethodStats {
 public:
  MethodStats();

  // A call of `m` ended with gRPC status `code` after `nanos`.
  void Record(Method m, int code, int64_t nanos);
  void StreamOpened() { streams_.fetch_add(1, std::memory_order_relaxed); }
  void StreamClosed() { streams_.fetch_sub(1, std::memory_order_relaxed); }
  int64_t streams() const { return streams_.load(std::memory_order_relaxed); }
  uint64_t calls(Method m, int code) const;

  // cq_grpc_requests_total{method,code} (OK always, other codes once seen),
  // cq_grpc_request_duration_seconds{method}, cq_grpc_consume_streams.
  void Render(metrics::TextWriter& w) const;

 private:
  struct PerMethod {
    PerMethod();
    std::array<metrics::Counter, kStatusCodeCount> by_code;
    metrics::DurationHistogram latency;
  };
  std::array<std::unique_ptr<PerMethod>, kMethodCount> methods_;
  std::atomic<int64_t> streams_{0};
};

}  // namespace chronoq::grpc_api
