// PushReceiver: the push benchmark's own HTTP/1.1 target, on 127.0.0.1 (an ephemeral port), made
// to cost little per request so that the server, not the receiver, is measured: epoll threads
// (each with its own SO_REUSEPORT listening socket), keep-alive, pipelining, a minimal request
// parse (Content-Length bodies only), and a fixed empty 200 answer. For each request it reads
// the X-Chronoq-Msg-Id header and the "triggerTime" of the JSON body (the default body of an
// HTTP callback: the message object), and records
//   - which benchmark message came (msgIds `id_prefix` + index 0..expected-1), and duplicates;
//   - lateness: its receive time minus its trigger time, in microseconds;
//   - the first and the last receive time.
//
// Thread-safety: the counters may be read from any thread while it runs; Stop() then the figures.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/result.h"
#include "bench/histogram.h"

namespace chronoq::bench {

class PushReceiver {
 public:
  struct Options {
    std::string id_prefix;
    int64_t expected = 0;
    int threads = 1;
  };
  static Result<std::unique_ptr<PushReceiver>> Start(Options options);
  ~PushReceiver();  // Stop()
  PushReceiver(const PushReceiver&) = delete;
  PushReceiver& operator=(const PushReceiver&) = delete;

  uint16_t port() const { return port_; }
  // Distinct benchmark messages received so far.
  int64_t unique() const { return unique_.load(std::memory_order_relaxed); }
  int64_t requests() const { return requests_.load(std::memory_order_relaxed); }

  // Stops the threads (idempotent). The figures below are final afterwards.
  void Stop();
  struct Figures {
    int64_t requests = 0;
    int64_t unique = 0;
    int64_t duplicates = 0;  // requests of a message already received
    int64_t foreign = 0;     // requests without a benchmark msgId
    int64_t bad = 0;         // requests it could not parse (answered 400, connection closed)
    int64_t connections = 0;
    Histogram lateness;    // us
    int64_t first_us = 0;  // epoch microseconds of the first benchmark request
    int64_t last_us = 0;   // and of the last new one
  };
  Figures figures() const;  // REQUIRES: Stop() was called

  struct Worker;
  struct Conn;

 private:
  explicit PushReceiver(Options options);
  void Parse(Worker& w, Conn& c);
  void Record(std::string_view msg_id, int64_t trigger_ms, int64_t now_us, Worker& w);

  const Options options_;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> unique_{0};
  std::atomic<int64_t> requests_{0};
  std::unique_ptr<std::atomic<uint8_t>[]> seen_;  // per index
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<std::thread> threads_;
};

}  // namespace chronoq::bench
