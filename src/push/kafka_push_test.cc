// The Kafka transport against librdkafka's mock cluster (a real Kafka protocol broker in this
// process): produce through the Pusher, consume the records back and check them.

#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <future>
#include <map>

#include "push/pusher.h"
#include "push/testing/push_and_wait.h"

namespace chronoq::push {
namespace {

using namespace std::chrono_literals;

// A one-broker mock cluster, held by a producer handle of its own.
class MockCluster {
 public:
  MockCluster() {
    char err[512];
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    rd_kafka_conf_set(conf, "log_level", "0", err, sizeof err);
    host_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
    EXPECT_NE(host_, nullptr) << err;
    cluster_ = rd_kafka_mock_cluster_new(host_, 1);
    EXPECT_NE(cluster_, nullptr);
  }
  ~MockCluster() {
    rd_kafka_mock_cluster_destroy(cluster_);
    rd_kafka_destroy(host_);
  }
  std::string brokers() const { return rd_kafka_mock_cluster_bootstraps(cluster_); }
  void CreateTopic(const std::string& topic) {
    ASSERT_EQ(rd_kafka_mock_topic_create(cluster_, topic.c_str(), 1, 1),
              RD_KAFKA_RESP_ERR_NO_ERROR);
  }

 private:
  rd_kafka_t* host_ = nullptr;
  rd_kafka_mock_cluster_t* cluster_ = nullptr;
};

struct Record {
  std::string key;
  std::string value;
  std::map<std::string, std::string> headers;
};

// Reads partition 0 of `topic` from the beginning until `n` records came (or 20 s passed);
// `*end` gets the partition's high watermark (how many records it holds).
std::vector<Record> Consume(const std::string& brokers, const std::string& topic, size_t n,
                            int64_t* end) {
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "bootstrap.servers", brokers.c_str(), err, sizeof err);
  rd_kafka_conf_set(conf, "group.id", "push-test", err, sizeof err);
  rd_kafka_conf_set(conf, "enable.auto.commit", "false", err, sizeof err);
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err);
  EXPECT_NE(rk, nullptr) << err;
  rd_kafka_poll_set_consumer(rk);
  rd_kafka_topic_partition_list_t* parts = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(parts, topic.c_str(), 0)->offset = RD_KAFKA_OFFSET_BEGINNING;
  EXPECT_EQ(rd_kafka_assign(rk, parts), RD_KAFKA_RESP_ERR_NO_ERROR);
  rd_kafka_topic_partition_list_destroy(parts);
  std::vector<Record> out;
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (out.size() < n && std::chrono::steady_clock::now() < deadline) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(rk, 200);
    if (m == nullptr) continue;
    if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      Record r;
      r.key.assign(static_cast<const char*>(m->key), m->key_len);
      r.value.assign(static_cast<const char*>(m->payload), m->len);
      rd_kafka_headers_t* hdrs = nullptr;
      if (rd_kafka_message_headers(m, &hdrs) == RD_KAFKA_RESP_ERR_NO_ERROR) {
        const char* name;
        const void* value;
        size_t size;
        for (size_t i = 0;
             rd_kafka_header_get_all(hdrs, i, &name, &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR;
             ++i) {
          r.headers[name] = std::string(static_cast<const char*>(value), size);
        }
      }
      out.push_back(std::move(r));
    }
    rd_kafka_message_destroy(m);
  }
  int64_t low = -1;
  *end = -1;
  EXPECT_EQ(rd_kafka_query_watermark_offsets(rk, topic.c_str(), 0, &low, end, 5000),
            RD_KAFKA_RESP_ERR_NO_ERROR);
  rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);
  return out;
}

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
  MockCluster cluster;
  cluster.CreateTopic("deliveries");
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
  std::vector<Record> got = Consume(cluster.brokers(), "deliveries", 10, &end);
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
  MockCluster cluster;  // only to learn a port that then goes away
  std::string brokers;
  {
    MockCluster gone;
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
