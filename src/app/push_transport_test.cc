// PusherTransport against a real HTTP receiver on loopback: what a target receives for a due
// message (the message object or the raw payload, the idempotency headers, the callback's own
// headers), and the outcome sentence a failure leaves for lastError. The calls for gRPC and
// Kafka are checked as built (the push module's own tests drive those transports).
#include "app/push_transport.h"

#include <gtest/gtest.h>

#include <future>
#include <memory>

#include "base/clock.h"
#include "push/testing/http_receiver.h"

namespace chronoq::app {
namespace {

using push::testing::HttpReceiver;
using namespace std::chrono_literals;

service::PushJob Job(core::Callback cb) {
  service::PushJob job;
  core::MessageRecord& r = job.message.record;
  r.topic = "orders";
  r.msg_id = "order-42";
  r.payload = R"({"orderId":42})";
  r.produce_time = FromEpochMs(1'000);
  r.trigger_time = FromEpochMs(2'000);
  r.expire_time = FromEpochMs(3'000);
  r.max_retry = 3;
  r.retry = 2;  // this is the second attempt
  job.message.status = core::MsgStatus::kConsuming;
  job.callback = std::move(cb);
  return job;
}

service::PushOutcome PushOnce(PusherTransport& t, const service::PushJob& job) {
  auto promise = std::make_shared<std::promise<service::PushOutcome>>();
  auto future = promise->get_future();
  t.Push(job, [promise](service::PushOutcome o) { promise->set_value(std::move(o)); });
  EXPECT_EQ(future.wait_for(30s), std::future_status::ready);
  return future.get();
}

TEST(PushTransportTest, AnHttpTargetGetsTheMessageObjectWithItsIdempotencyHeaders) {
  HttpReceiver receiver(HttpReceiver::Options{});
  push::Pusher pusher;
  PusherTransport transport(&pusher);
  core::Callback cb;
  cb.url = receiver.Url("/hooks/cancel?x=1");
  cb.method = "PUT";
  cb.headers = {{"Authorization", "Bearer s3cret"}};
  service::PushOutcome out = PushOnce(transport, Job(cb));
  EXPECT_TRUE(out.ok) << out.error;
  std::vector<push::testing::ReceivedRequest> requests = receiver.Requests();
  ASSERT_EQ(requests.size(), 1u);
  const push::testing::ReceivedRequest& req = requests[0];
  EXPECT_EQ(req.method, "PUT");
  EXPECT_EQ(req.target, "/hooks/cancel?x=1");
  EXPECT_EQ(req.Header("X-Chronoq-Msg-Id"), "order-42");
  EXPECT_EQ(req.Header("X-Chronoq-Topic"), "orders");
  EXPECT_EQ(req.Header("X-Chronoq-Attempt"), "2");
  EXPECT_EQ(req.Header("Authorization"), "Bearer s3cret");
  EXPECT_EQ(req.Header("Content-Type"), "application/json");
  EXPECT_EQ(req.body,
            R"({"topic":"orders","msgId":"order-42","msg":"{\"orderId\":42}","produceTime":1000,)"
            R"("triggerTime":2000,"expireTime":3000,"maxRetry":3,"retry":2,"status":3})");

  cb.raw_body = true;
  EXPECT_TRUE(PushOnce(transport, Job(cb)).ok);
  ASSERT_EQ(receiver.Requests().size(), 2u);
  EXPECT_EQ(receiver.Requests()[1].body, R"({"orderId":42})");
}

TEST(PushTransportTest, AFailedPushLeavesASentenceForLastError) {
  HttpReceiver::Options o;
  o.status = 500;
  o.body = "database down";
  HttpReceiver receiver(o);
  push::Pusher pusher;
  PusherTransport transport(&pusher);
  core::Callback cb;
  cb.url = receiver.Url("/");
  service::PushOutcome out = PushOnce(transport, Job(cb));
  EXPECT_FALSE(out.ok);
  EXPECT_FALSE(out.busy);
  EXPECT_EQ(out.error, "HTTP 500 Internal Server Error: database down");
}

// A starved node: the scheduler took the message (its lease counted from then), then the
// attempt reached the transport only after most of the lease had passed. It must not start an
// attempt the lease does not cover (another node may take the message at the lease's end and
// push it too): it is handed back untried. The lease is the taken message's ack deadline, on
// the store's clock (a manual one here, as under `serve --test-clock`).
TEST(PushTransportTest, AnAttemptIsNotStartedWhenItsLeaseWouldEndBeforeItsTimeout) {
  HttpReceiver receiver(HttpReceiver::Options{});
  base::ManualClock clock(FromEpochMs(1'700'000'000'000));
  push::Pusher pusher({.clock = &clock});
  PusherTransport transport(&pusher);
  core::Callback cb;
  cb.url = receiver.Url("/hook");
  cb.timeout = Millis(5'000);
  service::PushJob job = Job(cb);
  core::MessageRecord& r = job.message.record;
  r.phase = core::Phase::kDelivered;  // taken: leased for the timeout plus a 2 s margin
  r.retry_interval = Millis(10'000);
  r.visible_at = clock.Now() + Millis(7'000) + r.retry_interval;
  EXPECT_EQ(MakePushCall(job).lease_end, clock.Now() + Millis(7'000));

  // The node stalled between the take and the push: the lease covers the call, but no longer
  // the second kept to write its outcome (push::kOutcomeReserve), half the 2 s margin.
  clock.Advance(Millis(1'001));
  service::PushOutcome out = PushOnce(transport, job);
  EXPECT_FALSE(out.ok);
  EXPECT_TRUE(out.busy);  // released: not an attempt
  EXPECT_TRUE(out.lease_short);
  EXPECT_EQ(out.error,
            "push not attempted: its lease ends in 5999 ms, too soon for the call's timeout of "
            "5000 ms and 1000 ms to write its outcome");
  EXPECT_EQ(receiver.RequestCount(), 0u);

  clock.Set(clock.Now() - Millis(1));  // a stall of 1 s: the lease covers call and outcome
  out = PushOnce(transport, job);
  EXPECT_TRUE(out.ok) << out.error;
  EXPECT_EQ(receiver.RequestCount(), 1u);
}

TEST(PushTransportTest, GrpcAndKafkaCallsCarryThePayloadBytes) {
  core::Callback grpc;
  grpc.type = core::CallbackType::kGrpc;
  grpc.target = "127.0.0.1:50051";
  grpc.method = "/pkg.Orders/Cancel";
  service::PushJob job = Job(grpc);
  job.message.record.payload = "AAEC/w==";
  push::PushCall call = MakePushCall(job);
  EXPECT_EQ(call.kind, push::Kind::kGrpc);
  EXPECT_EQ(call.body, "AAEC/w==");  // format raw: the payload as it is
  job.callback->base64 = true;
  EXPECT_EQ(MakePushCall(job).body, std::string("\x00\x01\x02\xff", 4));
  EXPECT_EQ(MakePushCall(job).grpc_method, "/pkg.Orders/Cancel");

  core::Callback kafka;
  kafka.type = core::CallbackType::kKafka;
  kafka.brokers = "k1:9092";
  kafka.kafka_topic = "cancellations";
  call = MakePushCall(Job(kafka));
  EXPECT_EQ(call.kind, push::Kind::kKafka);
  EXPECT_EQ(call.body, R"({"orderId":42})");
  EXPECT_EQ(call.key, "");  // the transport uses the msgId
  EXPECT_EQ(call.msg_id, "order-42");
  EXPECT_EQ(call.attempt, 2);
}

TEST(PushTransportTest, AScopedTopicIsPushedUnderTheNameItsClientsKnow) {
  core::Callback cb;
  cb.url = "http://127.0.0.1:1/hook";
  service::PushJob job = Job(cb);
  job.message.record.topic =
      "shop\x1F"
      "orders.dlq";
  job.message.record.dead_letter = core::DeadLetter{};
  job.message.record.dead_letter->topic =
      "shop\x1F"
      "orders";
  push::PushCall call = MakePushCall(job);
  EXPECT_EQ(call.topic, "orders.dlq");
  EXPECT_NE(call.body.find(R"("topic":"orders.dlq")"), std::string::npos) << call.body;
  EXPECT_EQ(call.body.find("shop"), std::string::npos) << call.body;
  EXPECT_EQ(call.body.find("u001f"), std::string::npos) << call.body;
  EXPECT_EQ(job.message.record.topic,
            "shop\x1F"
            "orders.dlq");  // the job itself is untouched
}

}  // namespace
}  // namespace chronoq::app
