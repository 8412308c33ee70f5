// The benchmark workloads of `chronoq bench` (docs/benchmarks.md describes each). Every workload
// returns a Report; none links server code: they talk HTTP to a running server.
#pragma once

#include <cstdint>
#include <string>

#include "base/result.h"
#include "bench/common.h"
#include "bench/report.h"

namespace chronoq::bench {

struct ProduceState;

struct ProduceOptions {
  int64_t count = 200'000;
  int connections = 64;
  size_t payload_bytes = 100;
  int64_t delay_min_ms = 3'600'000;  // far future: nothing is consumed meanwhile
  int64_t delay_max_ms = 3'600'000;
  double rate = 0;               // 0: as fast as possible
  int batch = 1;                 // > 1: messages per sendMsgBatch request
  std::string grpc;              // HOST:PORT: send over the gRPC API instead (Send / SendBatch)
  int calls_per_connection = 1;  // gRPC: calls in flight on each connection (HTTP/2 streams)
  std::string grpc_client;       // "h2" (the bench's own HTTP/2 client), "grpcpp"; empty: h2
  std::string beanstalkd;        // HOST:PORT: put to a beanstalkd there instead (delays in seconds)
};

struct E2eOptions {
  int64_t count = 100'000;
  int64_t delay_min_ms = 1'000;
  int64_t delay_max_ms = 10'000;
  int producers = 16;
  int consumers = 8;
  int ackers = 8;
  int batch = 100;
  double rate = 20'000;  // sends per second
  size_t payload_bytes = 100;
  bool ack = true;
  int64_t grace_ms = 30'000;   // after the last trigger time, before missing messages count
  std::string consume_server;  // empty: consumers and ackers use --server too
  std::string grpc;            // HOST:PORT: consumers are gRPC Consume streams there (credit batch)
  std::string grpc_client;     // as ProduceOptions::grpc_client
  std::string beanstalkd;      // HOST:PORT: the whole run against a beanstalkd there
};

struct BurstOptions {
  int64_t count = 1'000'000;
  int slots = 1000;  // distinct trigger times within the second
  int producers = 64;
  int consumers = 8;
  int ackers = 8;
  int batch = 100;
  size_t payload_bytes = 100;
  int64_t lead_ms = 0;  // 0: 5 s + count / 25,000 per second
  bool ack = true;
  int ack_batch = 1;  // > 1: ackers send ackMsgBatch with up to this many ids
  int64_t grace_ms = 30'000;
};

struct BacklogOptions {
  int64_t count = 1'000'000;
  int connections = 64;
  size_t payload_bytes = 100;
  int64_t delay_ms = 3'600'000;
  int64_t delay_max_ms = 0;  // > delay_ms: each message's delay at random in [delay_ms, this]
  int topics = 1;            // messages spread round robin over topic, topic-1, topic-2, ...
  std::string data_dir;      // for disk bytes per message
  std::string restart_cmd;   // shell command that restarts the server (then time to serving)
};

struct LongPollOptions {
  int parked = 10'000;
  int connections = 64;  // producers
  double seconds = 10;   // per phase
  size_t payload_bytes = 100;
};

struct PushBenchOptions {
  int64_t count = 100'000;
  double rate = 0;           // sends per second; 0: send all first, due at once after lead_ms
  int64_t delay_ms = 1'000;  // rate > 0: each message falls due this long after its send
  int64_t lead_ms = 0;       // rate 0: 0 means 3 s + count / 20,000 s
  int connections = 16;      // producer connections
  size_t payload_bytes = 100;
  int64_t timeout_ms = 5'000;  // the callback's timeoutMillis
  int receiver_threads = 1;
  int64_t grace_ms = 30'000;  // after the last due time, before missing pushes count
};

Result<Report> RunProduce(const CommonOptions& c, const ProduceOptions& o);
// RunProduce over gRPC (o.grpc) with gRPC's C++ client: one channel per connection,
// o.calls_per_connection calls in flight on each.
Result<Report> RunProduceGrpc(const CommonOptions& c, const ProduceOptions& o);
// The same with the bench's own HTTP/2 client (h2_grpc_client.h: one epoll thread; h2c, or TLS).
Result<Report> RunProduceGrpcH2(const CommonOptions& c, const ProduceOptions& o);
Result<Report> RunE2e(const CommonOptions& c, const E2eOptions& o);
// RunE2e with Consume streams (o.grpc) instead of long polls: `consumers` streams of credit
// `batch`, acking on the stream; producers as in RunE2e (HTTP).
Result<Report> RunE2eGrpc(const CommonOptions& c, const E2eOptions& o);
// RunE2eGrpc with the bench's own HTTP/2 client (the streams on a thread of their own).
Result<Report> RunE2eGrpcH2(const CommonOptions& c, const E2eOptions& o);
// RunProduce and RunE2e against beanstalkd (o.beanstalkd), in its text protocol: put, then
// reserve-with-timeout (with the previous job's delete) on consumers + ackers connections; delays
// in whole seconds.
Result<Report> RunProduceBeanstalkd(const CommonOptions& c, const ProduceOptions& o);
Result<Report> RunE2eBeanstalkd(const CommonOptions& c, const E2eOptions& o);
// When an e2e run gives up: the sends at their rate, the longest delay, then the grace time.
SteadyClock::time_point E2eDeadline(const E2eOptions& o);
// An e2e report with the run's settings (topic, messages, delays, rate, consumers).
Report E2eReport(const std::string& topic, const E2eOptions& o);
// e2e's sends: message i of `topic` has msgId prefix + i and a delay in [delay_min, delay_max].
void SetUpE2eSends(ProduceState& ps, const std::string& topic, const std::string& prefix,
                   const E2eOptions& o);
Result<Report> RunBurst(const CommonOptions& c, const BurstOptions& o);
Result<Report> RunBacklog(const CommonOptions& c, const BacklogOptions& o);
Result<Report> RunLongPoll(const CommonOptions& c, const LongPollOptions& o);
Result<Report> RunPush(const CommonOptions& c, const PushBenchOptions& o);

}  // namespace chronoq::bench
