// Pusher: performs push attempts (push/push_call.h) against real targets, HTTP, gRPC and Kafka,
// with isolation between targets. The scheduler (not in this module) hands it one PushCall per
// attempt of a due message and acks or retries the message by the PushOutcome.
//
// Operation
//   Push() admits the call under its target's limits (TargetKey): at most
//   `max_in_flight_per_target` attempts run at once per target, at most
//   `max_queued_per_target` more wait in that target's FIFO queue; beyond both the call is
//   answered at once with busy=true ("target 127.0.0.1:9 busy: 64 pushes in flight, 1024
//   queued"). A target that hangs or black-holes therefore holds only its own slots, each for at
//   most its call's timeout, and never the threads or slots of other targets. A call whose lease
//   (PushCall::lease_end) would end before its timeout and the reserve for writing its outcome
//   (PushCall::outcome_reserve), when it is admitted or when it leaves the queue, is answered
//   busy and lease_short without an attempt.
//   HTTP(S): Boost.Beast client (TLS through OpenSSL, server certificate and host name
//   verified), keep-alive connection pool per host:port (one pool per I/O thread),
//   a reused connection that turns out closed is retried once on a fresh one. gRPC: a generic
//   unary call (no generated stubs), one channel per target. Kafka: librdkafka, one idempotent
//   producer (acks=all) per brokers string; the delivery report decides.
//
// Lifecycle
//   Construct, Push from any threads, Shutdown (or destroy, which shuts down). Shutdown fails the
//   queued calls (busy=true, "not attempted"), lets the in-flight ones finish for up to
//   `shutdown_grace`, then ends the rest with ok=false ("push in flight when the pusher shut
//   down": the outcome is unknown, the scheduler retries). After Shutdown, Push answers busy.
//
// Concurrency
//   Thread-safe. Push never blocks on I/O (it takes a short lock). `done` runs exactly once, on a
//   thread of the Pusher (never inside Push, also not for busy or invalid calls; the calls that
//   Shutdown ends after its grace are answered on Shutdown's thread), and must not block for
//   long: it holds up that transport's other calls. It may call Push, never Shutdown. Call
//   Shutdown from one thread at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/unique_function.h"
#include "push/push_call.h"

namespace chronoq::push {

struct PusherOptions {
  // Attempts running at once per target key (TargetKey). Default 64.
  int max_in_flight_per_target = 64;
  // Attempts waiting per target key once its in-flight limit is reached. Default 1,024.
  int max_queued_per_target = 1024;
  // HTTP: the longest a TCP connect may take (the call's timeout bounds it too). Default 2 s.
  std::chrono::milliseconds http_connect_timeout{2000};
  // HTTP: threads running the Beast client, each with its own connection pools. Default 1.
  int http_threads = 1;
  // HTTP: an idle pooled connection is closed after this long. Default 30 s.
  std::chrono::milliseconds http_idle_timeout{30000};
  // HTTP: the largest answer body read (a 2xx answer over it still succeeds, and its connection
  // is closed). Default 1 MiB.
  size_t http_max_answer_bytes = 1 << 20;
  // HTTPS: certificate authorities trusted besides the system's (/etc/ssl/certs), as a PEM file
  // and/or PEM text. Servers are always verified (chain and host name).
  std::string tls_ca_file = "";
  std::string tls_ca_pem = "";
  // Shutdown waits this long for in-flight attempts. Default 5 s.
  std::chrono::milliseconds shutdown_grace{5000};
  // The clock PushCall::lease_end is on (the store's: the server's clock, a manual one in tests
  // and under `serve --test-clock`). nullptr: the system clock. Must outlive the Pusher.
  const base::Clock* clock = nullptr;
};

// Load of one target, for metrics.
struct TargetLoad {
  std::string key;
  int in_flight = 0;
  int queued = 0;
};

class Pusher {
 public:
  explicit Pusher(PusherOptions options = {});
  ~Pusher();  // Shutdown()
  Pusher(const Pusher&) = delete;
  Pusher& operator=(const Pusher&) = delete;

  // Starts or queues one attempt; `done` gets its outcome (see above). An invalid call
  // (ValidatePushCall) is answered ok=false, busy=false with the validation sentence.
  void Push(PushCall call, UniqueFunction<void(PushOutcome)> done);

  // Attempts running now for one target key (0 for an unknown key).
  int InFlight(std::string_view target_key) const;
  // Attempts waiting in one target's queue.
  int Queued(std::string_view target_key) const;
  // Every target with attempts running or queued, by key.
  std::vector<TargetLoad> Targets() const;

  // See Lifecycle. Idempotent; returns when every `done` has run.
  void Shutdown();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace chronoq::push
