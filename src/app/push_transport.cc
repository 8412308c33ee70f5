#include "app/push_transport.h"

#include <utility>

#include "base/base64.h"
#include "http/codec.h"
#include "service/session.h"

namespace chronoq::app {

// An attempt starts only while its lease covers its timeout and push::kOutcomeReserve after it;
// the rest of the scheduler's margin is what a call may wait before it starts.
static_assert(push::kOutcomeReserve < service::PushOptions{}.lease_margin,
              "the lease margin must leave room after the outcome reserve");

push::PushCall MakePushCall(const service::PushJob& job) {
  const core::Callback& cb = *job.callback;
  const core::Message shown = service::AsItsClientsSeeIt(job.message);
  const core::MessageRecord& r = shown.record;
  push::PushCall call;
  call.msg_id = r.msg_id;
  call.topic = r.topic;
  call.attempt = static_cast<int32_t>(r.retry);  // the lease counted this attempt
  call.timeout = cb.timeout;
  // The store holds the message for this attempt until its ack deadline (the lease); the call
  // keeps push::kOutcomeReserve of it for the ack or nack (call.outcome_reserve's default).
  if (r.phase == core::Phase::kDelivered) call.lease_end = r.ack_deadline();
  switch (cb.type) {
    case core::CallbackType::kHttp:
      call.kind = push::Kind::kHttp;
      call.url = cb.url;
      call.method = cb.method;
      call.headers = cb.headers;
      if (cb.raw_body) {
        call.content_type = "text/plain; charset=utf-8";
        call.body = r.payload;
      } else {
        call.content_type = "application/json";
        call.body = http::EncodeMessageObject(shown);
      }
      break;
    case core::CallbackType::kGrpc:
      call.kind = push::Kind::kGrpc;
      call.grpc_target = cb.target;
      call.grpc_method = cb.method;
      // Checked at send; a payload that is not base64 is sent as it is rather than dropped.
      call.body = cb.base64 ? base::Base64Decode(r.payload).value_or(r.payload) : r.payload;
      break;
    case core::CallbackType::kKafka:
      call.kind = push::Kind::kKafka;
      call.brokers = cb.brokers;
      call.kafka_topic = cb.kafka_topic;
      call.key = cb.key;
      call.body = r.payload;
      break;
  }
  return call;
}

void PusherTransport::Push(const service::PushJob& job,
                           UniqueFunction<void(service::PushOutcome)> done) {
  pusher_->Push(MakePushCall(job), [done = std::move(done)](push::PushOutcome out) mutable {
    done(service::PushOutcome{out.ok, out.busy, std::move(out.error), out.lease_short});
  });
}

void RenderPusherTargets(const push::Pusher& pusher, metrics::TextWriter& w) {
  const std::vector<push::TargetLoad> targets = pusher.Targets();
  w.Family("cq_push_in_flight", "push attempts running now, per target (host:port or brokers)",
           metrics::MetricType::kGauge);
  for (const push::TargetLoad& t : targets) {
    w.Sample("cq_push_in_flight", {{"target", t.key}}, t.in_flight);
  }
  w.Family("cq_push_queued",
           "push attempts waiting for a free slot of their target (per-target in-flight limit)",
           metrics::MetricType::kGauge);
  for (const push::TargetLoad& t : targets) {
    w.Sample("cq_push_queued", {{"target", t.key}}, t.queued);
  }
}

}  // namespace chronoq::app
