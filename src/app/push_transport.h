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

// One attempt of `job`, with lease_end the ack deadline of a taken (delivered) message.
// REQUIRES: job.callback is set.
push::PushCall MakePushCall(const service::PushJob& job);

class PusherTransport final : public service::PushTransport {
 public:
  // REQUIRES: `pusher` outlives this, and its clock (PusherOptions::clock) is the store's: each
  // call's lease_end is the taken message's ack deadline, so an attempt starts only while the
  // lease still covers its timeout and the write of its outcome (push::kOutcomeReserve; else it
  // is handed back untried, lease_short).
  explicit PusherTransport(push::Pusher* pusher) : pusher_(pusher) {}
  void Push(const service::PushJob& job, UniqueFunction<void(service::PushOutcome)> done) override;

 private:
  push::Pusher* const pusher_;
};

// The transport's figures on GET /metrics: cq_push_in_flight and cq_push_queued per target.
void RenderPusherTargets(const push::Pusher& pusher, metrics::TextWriter& w);

}  // namespace chronoq::app
