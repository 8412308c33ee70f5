// The sessions the workloads are made of: producers (sendMsg), consumers (longPollingMsg) and
// ackers (ackMsg), sharing per-workload state. All run on the LoadLoop's thread.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/result.h"
#include "bench/common.h"
#include "bench/histogram.h"
#include "bench/load_loop.h"
#include "bench/report.h"
#include "client/http_client.h"

namespace chronoq::bench {

struct ProduceState {
  client::Endpoint endpoint;
  int64_t count = 0;  // messages to send; INT64_MAX: until stopped
  double rate = 0;    // messages per second over all producers; 0: as fast as possible
  // Appends the form body of message i (without the leading '&').
  std::function<void(int64_t i, std::string* body)> make_body;
  // batch > 1: each request is one sendMsgBatch of up to `batch` messages; make_item appends
  // message i as a JSON object (without topic), batch_prefix opens the body.
  int batch = 1;
  std::string batch_prefix;  // {"topic":"...","msgs":[
  std::function<void(int64_t i, std::string* json)> make_item;
  bool stop = false;  // set by the workload to end an open-ended run

  SteadyClock::time_point start = SteadyClock::now();
  int64_t next = 0;  // next message index to send
  int64_t ok = 0;
  int64_t failed = 0;
  std::string first_failure;
  Histogram latency;
};

class ProducerSession final : public Session {
 public:
  explicit ProducerSession(ProduceState* st) : st_(st) {}
  Next NextRequest(std::string* out) override;
  void OnResponse(int status, std::string_view body, std::chrono::microseconds latency) override;
  void OnError(std::string_view what) override;

 private:
  ProduceState* st_;
  std::string body_;
  int64_t in_request_ = 1;  // messages in the request in flight
};

struct ConsumeState {
  client::Endpoint endpoint;
  std::string topic;
  int batch = 100;
  int64_t long_poll_ms = 1000;
  int64_t ack_timeout_ms = 60'000;
  bool ack = true;
  int ack_batch = 1;         // > 1: ackers send ackMsgBatch with up to this many queued ids
  std::string id_prefix;     // msgIds are id_prefix + index
  int64_t expected = 0;      // indexes 0..expected-1
  LoadLoop* loop = nullptr;  // to wake ackers
  std::vector<Session*> ackers;

  bool stop = false;          // everything received, or the deadline passed
  std::vector<uint8_t> seen;  // deliveries per index (saturating)
  int64_t unique = 0;
  int64_t duplicates = 0;  // deliveries of an index already delivered
  int64_t foreign = 0;     // messages of another run
  int64_t pulls = 0;
  int64_t pull_failures = 0;
  std::string first_failure;
  Histogram lateness;  // receive time - trigger time, us
  int64_t first_receive_us = 0;
  int64_t last_receive_us = 0;
  std::deque<std::string> ack_queue;
  int64_t acked = 0;
  int64_t ack_failures = 0;
  int64_t last_ack_us = 0;  // when the last successful ack answer arrived

  // The run's messages: msgIds prefix + 0..count-1, none seen yet.
  void Expect(std::string prefix, int64_t count) {
    id_prefix = std::move(prefix);
    expected = count;
    seen.assign(static_cast<size_t>(count), 0);
  }
};

// Counts one message received by the run (seen, unique or duplicate, lateness from its trigger
// time, first and last receive); false (counted as foreign) for a message of another run.
bool RecordDelivery(ConsumeState& st, std::string_view id, int64_t trigger_ms, int64_t now_us);

// The run's msgId prefix: "<workload>-<random>-".
std::string RunPrefix(std::string_view workload);
// The figures of a run that sent with `ps` for `seconds`: sent, failed, throughput, latency.
void AddProduceFigures(class Report& r, const ProduceState& ps, double seconds);
// The delivery figures of a run that sent with `ps` and received with `cs`.
void AddDeliveryFigures(class Report& r, const ProduceState& ps, const ConsumeState& cs);
// The figures of an e2e run of `seconds`: AddDeliveryFigures, elapsed and delivery_throughput
// (from the first receive to the last).
void AddE2eFigures(class Report& r, const ProduceState& ps, const ConsumeState& cs, double seconds);

// Opens `n` producer sessions of `ps` on `loop` (kept in `sessions`).
Status ConnectProducers(LoadLoop& loop, ProduceState& ps, int n,
                        std::vector<std::unique_ptr<ProducerSession>>* sessions);

// Runs `connections` producer sessions of `ps` on one loop until `ps` is done or `deadline`,
// with a progress line named `name`; returns the elapsed seconds.
Result<double> RunProducers(const CommonOptions& c, ProduceState& ps, int connections,
                            std::string_view name, SteadyClock::time_point deadline);

class ConsumerSession final : public Session {
 public:
  explicit ConsumerSession(ConsumeState* st) : st_(st) {}
  const client::Endpoint* Target() const override { return &st_->endpoint; }
  Next NextRequest(std::string* out) override;
  void OnResponse(int status, std::string_view body, std::chrono::microseconds latency) override;
  void OnError(std::string_view what) override;

 private:
  ConsumeState* st_;
};

class AckerSession final : public Session {
 public:
  explicit AckerSession(ConsumeState* st) : st_(st) {}
  const client::Endpoint* Target() const override { return &st_->endpoint; }
  Next NextRequest(std::string* out) override;
  void OnResponse(int status, std::string_view body, std::chrono::microseconds latency) override;

 private:
  ConsumeState* st_;
  int64_t in_request_ = 0;  // ids in the ack request in flight
};

}  // namespace chronoq::bench
