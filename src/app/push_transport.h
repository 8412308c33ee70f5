// PusherTransport: the push scheduler's transport (service::PushTransport) over the push module's
// Pusher (push/pusher.h). It turns a due message and the callback it goes to into one attempt:
// HTTP gets the message object as JSON (API-EXTENSIONS.md section 1; the raw payload with
// "body":"raw"), gRPC the payload's bytes (base64-decoded with "format":"base64"), Kafka the
// payload as the record value; every attempt carries the msgId, topic and attempt number
// (docs/push.md). Lives in app because it is the one place that sees the service, the transports
// and the HTTP message encoding.
//
// Thread-safety: as the Pusher's (Push may be called from any thread).
#pragma once

#include "base/time.h"
#include "metrics/exposition.h"
#include "push/push_call.h"
#include "push/pusher.h"
#include "service/push_scheduler.h"

namespace chronoq::app {

// One attempt of `job`. REQUIRES: job.callback is set.
push::PushCall MakePushCall(const service::PushJob& job);

class PusherTransport final : public service::PushTransport {
 public:
  // REQUIRES: `pusher` outlives this. `max_queue_wait`: the longest an attempt may wait behind
  // its target's in-flight limit before it is handed back untried (keep it below the
  // scheduler's lease margin, so that a lease never runs out under an attempt).
  explicit PusherTransport(push::Pusher* pusher, Millis max_queue_wait = Millis(1000))
      : pusher_(pusher), max_queue_wait_(max_queue_wait) {}
  void Push(const service::PushJob& job, UniqueFunction<void(service::PushOutcome)> done) override;

 private:
  push::Pusher* const pusher_;
  const Millis max_queue_wait_;
};

// The transport's figures on GET /metrics: cq_push_in_flight and cq_push_queued per target.
void RenderPusherTargets(const push::Pusher& pusher, metrics::TextWriter& w);

}  // namespace chronoq::app
