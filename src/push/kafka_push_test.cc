// The Kafka transport against librdkafka's mock cluster (a real Kafka protocol broker in this
// process): produce through the Pusher, consume the records back and check them.

#include <gtest/gtest.h>

#include <future>

#include "push/pusher.h"
#include "push/testing/kafka_mock.h"
#include "push/testing/push_and_wait.h"

namespace chronoq::push {
namespace {

using namespace std::chrono_literals;
using testing::KafkaMock;
using testing::KafkaRecord;

PushCall KafkaCall(std::string brokers, std::string msg_id, std::string value) {
  PushCall c;
  c.kind = Kind::kKafka;
  c.brokers = std::move(brokers);
  c.kafka_topic = "deliveries";
  c.msg_id = std::move(msg_id);
  c.topic = "orders";
  c.attempt = 1;
  c.body = std::move(value);
  return c;
}

TEST(KafkaPushTest, ProducesRecordsThatAConsumerReadsBack) {
  KafkaMock cluster;
  ASSERT_TRUE(cluster.CreateTopic("deliveries").ok());
  std::vector<std::future<PushOutcome>> futures;
  {
    Pusher pusher;
    for (int i = 0; i < 10; ++i) {
      PushCall call =
          KafkaCall(cluster.brokers(), "m" + std::to_string(i), "v" + std::to_string(i));
      if (i == 9) call.key = "custom-key";
      auto promise = std::make_shared<std::promise<PushOutcome>>();
      futures.push_back(promise->get_future());
      pusher.Push(std::move(call), [promise](PushOutcome o) { promise->set_value(std::move(o)); });
    }
    for (auto& f : futures) {
      ASSERT_EQ(f.wait_for(30s), std::future_status::ready);
      PushOutcome out = f.get();
      EXPECT_TRUE(out.ok) << out.error;
      EXPECT_FALSE(out.busy);
    }
  }
  int64_t end = -1;
  std::vector<KafkaRecord> got = cluster.Consume("deliveries", 10, 20s, &end);
  ASSERT_EQ(got.size(), 10u);
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(got[i].value, "v" + std::to_string(i));
    EXPECT_EQ(got[i].key, i == 9 ? "custom-key" : "m" + std::to_string(i));
    EXPECT_EQ(got[i].headers["x-chronoq-msg-id"], "m" + std::to_string(i));
    EXPECT_EQ(got[i].headers["x-chronoq-topic"], "orders");
    EXPECT_EQ(got[i].headers["x-chronoq-attempt"], "1");
  }
  // Nothing more than what was pushed (idempotent producer: no duplicates).
  EXPECT_EQ(end, 10);
}

TEST(KafkaPushTest, UnreachableBrokerTimesOutWithTheKafkaErrorName) {
  std::string brokers;
  {
    KafkaMock gone;  // only to learn a port that then goes away
    brokers = gone.brokers();
  }
  Pusher pusher;
  PushCall call = KafkaCall(brokers, "m1", "v");
  call.timeout = 300ms;
  PushOutcome out = testing::PushAndWait(pusher, std::move(call));
  EXPECT_FALSE(out.ok);
  EXPECT_EQ(out.error, "Kafka _MSG_TIMED_OUT: Local: Message timed out");
  EXPECT_GE(out.latency, 300ms);
  EXPECT_LT(out.latency, 5s);  // librdkafka checks message timeouts once a second
}

}  // namespace
}  // namespace chronoq::push
