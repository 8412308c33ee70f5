// Transport: the internal interface of push/pusher.cc to one kind of target (HTTP, gRPC, Kafka).
// Each lives in its own .cc file, the only place where its third-party library is included, and
// owns its threads. Internal to the push module.
//
// Contract: Start() never blocks on I/O and calls `done` at most once, on any thread (the Pusher
// moves a `done` run inside Start to its own thread, and answers the calls a transport dropped
// at Stop). Stop() cancels what is still running, joins the transport's threads and drops the
// calls it did not answer: no `done` runs after Stop returns. A Start racing with Stop may be
// dropped the same way.
#pragma once

#include <chrono>
#include <memory>

#include "base/unique_function.h"
#include "push/push_call.h"
#include "push/pusher.h"

namespace chronoq::push::internal {

class Transport {
 public:
  virtual ~Transport() = default;
  // REQUIRES: ValidatePushCall(call).ok() and call.kind is this transport's.
  virtual void Start(PushCall call, UniqueFunction<void(PushOutcome)> done) = 0;
  virtual void Stop() = 0;
};

std::unique_ptr<Transport> NewHttpTransport(const PusherOptions& options);
std::unique_ptr<Transport> NewGrpcTransport(const PusherOptions& options);
std::unique_ptr<Transport> NewKafkaTransport(const PusherOptions& options);

}  // namespace chronoq::push::internal
