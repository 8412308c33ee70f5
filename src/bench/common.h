// Shared pieces of the benchmark workloads: options every workload has, request building, the
// live progress line, and the client-bottleneck check.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>

#include "bench/load_loop.h"
#include "bench/report.h"
#include "client/http_client.h"

namespace chronoq::bench {

struct CommonOptions {
  std::string server;  // --server; empty: $CHRONOQ_SERVER, else the default
  client::Endpoint endpoint;
  std::string topic;  // empty: a fresh "bench-<workload>-<random>"
  bool json = false;
  bool progress = true;  // only shown on a terminal
  int server_pid = 0;    // for RSS (and burst: CPU) figures, when the server runs here
  std::string token;     // gRPC calls of the h2 client carry `authorization: Bearer <token>`
};

// Raw HTTP/1.1 POST of a form body, ready to send on a keep-alive connection.
std::string FormPost(const client::Endpoint& ep, std::string_view path, std::string_view body);
// `s` as a JSON string literal (quotes, backslashes and control characters escaped).
std::string JsonString(std::string_view s);
// The same with a JSON body.
std::string JsonPost(const client::Endpoint& ep, std::string_view path, std::string_view body);

// Random printable payload of `bytes` bytes, already form-encoded (letters and digits only).
std::string RandomPayload(size_t bytes, std::mt19937_64& rng);

// "bench-produce-1a2b3c".
std::string FreshTopic(std::string_view workload);

// System time in microseconds since the epoch (to compare with the server's triggerTime).
int64_t NowEpochMicros();

// A one-line live display on stderr when it is a terminal: "[e2e] 12,345/100,000 ...".
class Progress {
 public:
  explicit Progress(std::string name, bool enabled);
  // done/total items, plus free text; computes rate, elapsed and ETA.
  void Update(int64_t done, int64_t total, std::string_view extra = {});
  void Finish();

 private:
  std::string name_;
  bool enabled_;
  SteadyClock::time_point start_ = SteadyClock::now();
};

// Measures this process's CPU over a phase and adds a warning when the client was busy enough to
// be the bottleneck.
class CpuMeter {
 public:
  CpuMeter();
  // Adds "client_cpu_percent" (of one core) and, above 85 %, a warning; with `sends` > 0, also
  // "client_cpu_us_per_send" (this process's CPU time over the phase divided by them).
  void Report(class Report& r, int64_t sends = 0) const;

 private:
  double cpu0_;
  SteadyClock::time_point t0_;
};

// Checks that the server answers /camellia/health/check.
Status CheckServer(const client::Endpoint& ep);

// The value of an unlabelled sample of the server's GET /metrics ("cq_http_long_polls_parked");
// -1 when it cannot be read.
double ServerMetric(const client::Endpoint& ep, std::string_view name);

// True when body is a JSON answer with "code":200.
inline bool IsSuccess(std::string_view body) { return body.rfind("{\"code\":200", 0) == 0; }

}  // namespace chronoq::bench
