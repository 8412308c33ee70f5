#include "app/push_transport.h"

#include <utility>

#include "base/base64.h"
#include "http/codec.h"

namespace chronoq::app {

push::PushCall MakePushCall(const service::PushJob& job) {
  const core::Callback& cb = *job.callback;
  const core::MessageRecord& r = job.message.record;
  push::PushCall call;
  call.msg_id = r.msg_id;
  call.topic = r.topic;
  call.attempt = static_cast<int32_t>(r.retry);  // the lease counted this attempt
  call.timeout = cb.timeout;
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
        call.body = http::EncodeMessageObject(job.message);
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
    done(service::PushOutcome{out.ok, out.busy, std::move(out.error)});
  });
}

}  // namespace chronoq::app
