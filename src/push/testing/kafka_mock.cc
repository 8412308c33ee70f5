#include "push/testing/kafka_mock.h"

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <algorithm>
#include <tuple>

#include "base/check.h"

namespace chronoq::push::testing {

struct KafkaMock::Impl {
  rd_kafka_t* host = nullptr;  // the handle the mock cluster lives in
  rd_kafka_mock_cluster_t* cluster = nullptr;
};

KafkaMock::KafkaMock(int brokers) : impl_(std::make_unique<Impl>()) {
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "log_level", "0", err, sizeof err);
  impl_->host = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
  CQ_CHECK(impl_->host != nullptr, "rd_kafka_new: {}", err);
  impl_->cluster = rd_kafka_mock_cluster_new(impl_->host, brokers);
  CQ_CHECK(impl_->cluster != nullptr, "rd_kafka_mock_cluster_new failed");
}

KafkaMock::~KafkaMock() {
  rd_kafka_mock_cluster_destroy(impl_->cluster);
  rd_kafka_destroy(impl_->host);
}

std::string KafkaMock::brokers() const { return rd_kafka_mock_cluster_bootstraps(impl_->cluster); }

Status KafkaMock::CreateTopic(const std::string& topic, int partitions) {
  rd_kafka_resp_err_t e = rd_kafka_mock_topic_create(impl_->cluster, topic.c_str(), partitions, 1);
  if (e != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Internal("mock topic " + topic + ": " + rd_kafka_err2str(e));
  }
  return Status::Ok();
}

namespace {

KafkaRecord ToRecord(const rd_kafka_message_t* m) {
  KafkaRecord r;
  r.partition = m->partition;
  if (m->key != nullptr) r.key.assign(static_cast<const char*>(m->key), m->key_len);
  if (m->payload != nullptr) r.value.assign(static_cast<const char*>(m->payload), m->len);
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
  return r;
}

// The topic's partition count from the cluster's metadata (1 when it cannot tell).
int Partitions(rd_kafka_t* rk, const std::string& topic) {
  rd_kafka_topic_t* t = rd_kafka_topic_new(rk, topic.c_str(), nullptr);
  const rd_kafka_metadata_t* md = nullptr;
  int n = 1;
  if (rd_kafka_metadata(rk, 0, t, &md, 5000) == RD_KAFKA_RESP_ERR_NO_ERROR) {
    if (md->topic_cnt == 1 && md->topics[0].partition_cnt > 0) n = md->topics[0].partition_cnt;
    rd_kafka_metadata_destroy(md);
  }
  rd_kafka_topic_destroy(t);
  return n;
}

}  // namespace

std::vector<KafkaRecord> KafkaMock::Consume(const std::string& topic, size_t n,
                                            std::chrono::milliseconds bound, int64_t* end) const {
  const auto deadline = std::chrono::steady_clock::now() + bound;
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "bootstrap.servers", brokers().c_str(), err, sizeof err);
  rd_kafka_conf_set(conf, "group.id", "push-test", err, sizeof err);
  rd_kafka_conf_set(conf, "enable.auto.commit", "false", err, sizeof err);
  rd_kafka_conf_set(conf, "log_level", "0", err, sizeof err);
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err);
  CQ_CHECK(rk != nullptr, "rd_kafka_new: {}", err);
  rd_kafka_poll_set_consumer(rk);
  const int partitions = Partitions(rk, topic);
  rd_kafka_topic_partition_list_t* parts = rd_kafka_topic_partition_list_new(partitions);
  for (int p = 0; p < partitions; ++p) {
    rd_kafka_topic_partition_list_add(parts, topic.c_str(), p)->offset = RD_KAFKA_OFFSET_BEGINNING;
  }
  rd_kafka_assign(rk, parts);
  rd_kafka_topic_partition_list_destroy(parts);
  std::vector<std::tuple<int32_t, int64_t, KafkaRecord>> got;
  while (got.size() < n && std::chrono::steady_clock::now() < deadline) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(rk, 100);
    if (m == nullptr) continue;
    if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR)
      got.emplace_back(m->partition, m->offset, ToRecord(m));
    rd_kafka_message_destroy(m);
  }
  if (end != nullptr) {
    *end = 0;
    for (int p = 0; p < partitions && *end >= 0; ++p) {
      int64_t low = -1, high = -1;
      if (rd_kafka_query_watermark_offsets(rk, topic.c_str(), p, &low, &high, 5000) !=
          RD_KAFKA_RESP_ERR_NO_ERROR) {
        *end = -1;
      } else {
        *end += high;
      }
    }
  }
  rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);
  std::sort(got.begin(), got.end(), [](const auto& a, const auto& b) {
    return std::tie(std::get<0>(a), std::get<1>(a)) < std::tie(std::get<0>(b), std::get<1>(b));
  });
  std::vector<KafkaRecord> out;
  out.reserve(got.size());
  for (auto& g : got) out.push_back(std::move(std::get<2>(g)));
  return out;
}

}  // namespace chronoq::push::testing
