// The Kafka transport: librdkafka's C API. One idempotent producer (acks=all) per brokers string
// and call timeout (librdkafka's message timeout is a producer or topic setting, not a
// per-message one; a deployment has few distinct timeouts), each with a thread that serves its
// delivery reports. The delivery report decides the outcome.

#include <fmt/format.h>
#include <librdkafka/rdkafka.h>
#include <pthread.h>

#include <atomic>
#include <map>
#include <thread>

#include "base/log.h"
#include "base/mutex.h"
#include "push/transport.h"

namespace chronoq::push::internal {
namespace {

struct KafkaCall {
  UniqueFunction<void(PushOutcome)> done;
};

void OnDelivery(rd_kafka_t*, const rd_kafka_message_t* m, void*) {
  std::unique_ptr<KafkaCall> call(static_cast<KafkaCall*>(m->_private));
  if (!call) return;
  PushOutcome out;
  out.code = static_cast<int>(m->err);
  out.ok = m->err == RD_KAFKA_RESP_ERR_NO_ERROR;
  if (!out.ok) {
    // Not rd_kafka_message_errstr: on a delivery report the payload is the record, not a text.
    out.error = fmt::format("Kafka {}: {}", rd_kafka_err2name(m->err), rd_kafka_err2str(m->err));
  }
  call->done(std::move(out));
}

void OnLog(const rd_kafka_t*, int level, const char* fac, const char* buf) {
  CQ_LOG_DEBUG("cq.push", "librdkafka {} {}: {}", level, fac, buf);
}

void OnError(rd_kafka_t*, int err, const char* reason, void*) {
  CQ_LOG_DEBUG("cq.push", "librdkafka error {}: {}",
               rd_kafka_err2name(static_cast<rd_kafka_resp_err_t>(err)), reason);
}

class Producer {
 public:
  Producer(rd_kafka_t* rk) : rk_(rk) {
    thread_ = std::thread([this] {
      pthread_setname_np(pthread_self(), "cq-push-kafka");
      while (!stop_.load()) rd_kafka_poll(rk_, 100);
    });
  }
  ~Producer() {
    // Ends what is still queued or in flight (their reports say _PURGE_QUEUE/_PURGE_INFLIGHT)
    // and serves those reports before the handle goes.
    rd_kafka_purge(rk_, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
    stop_.store(true);
    thread_.join();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (rd_kafka_outq_len(rk_) > 0 && std::chrono::steady_clock::now() < deadline) {
      rd_kafka_poll(rk_, 50);
    }
    rd_kafka_destroy(rk_);
  }
  rd_kafka_t* rk() const { return rk_; }

 private:
  rd_kafka_t* const rk_;  // owned
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

class KafkaTransport final : public Transport {
 public:
  ~KafkaTransport() override { Stop(); }

  void Start(PushCall call, UniqueFunction<void(PushOutcome)> done) override {
    rd_kafka_t* rk = nullptr;
    {
      base::MutexLock lock(mu_);
      if (stopped_) return;  // dropped: the Pusher answers it
      const std::string key = fmt::format("{}|{}", call.brokers, call.timeout.count());
      auto it = producers_.find(key);
      if (it == producers_.end()) {
        std::string error;
        rd_kafka_t* made = NewProducer(call, &error);
        if (made == nullptr) {
          lock.Unlock();
          PushOutcome out;
          out.error = std::move(error);
          done(std::move(out));
          return;
        }
        it = producers_.emplace(key, std::make_unique<Producer>(made)).first;
      }
      rk = it->second->rk();
    }
    const std::string& key = call.key.empty() ? call.msg_id : call.key;
    const std::string attempt = std::to_string(call.attempt);
    auto* kc = new KafkaCall{std::move(done)};
    const rd_kafka_resp_err_t err = rd_kafka_producev(
        rk, RD_KAFKA_V_TOPIC(call.kafka_topic.c_str()), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
        RD_KAFKA_V_VALUE(call.body.data(), call.body.size()),
        RD_KAFKA_V_KEY(key.data(), key.size()),
        RD_KAFKA_V_HEADER("x-chronoq-msg-id", call.msg_id.data(),
                          static_cast<ssize_t>(call.msg_id.size())),
        RD_KAFKA_V_HEADER("x-chronoq-topic", call.topic.data(),
                          static_cast<ssize_t>(call.topic.size())),
        RD_KAFKA_V_HEADER("x-chronoq-attempt", attempt.data(),
                          static_cast<ssize_t>(attempt.size())),
        RD_KAFKA_V_OPAQUE(kc), RD_KAFKA_V_END);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      std::unique_ptr<KafkaCall> owned(kc);
      PushOutcome out;
      out.code = static_cast<int>(err);
      out.error = fmt::format("Kafka {}: {}", rd_kafka_err2name(err), rd_kafka_err2str(err));
      owned->done(std::move(out));
    }
  }

  void Stop() override {
    std::map<std::string, std::unique_ptr<Producer>> producers;
    {
      base::MutexLock lock(mu_);
      stopped_ = true;
      producers.swap(producers_);
    }
    producers.clear();  // each purges, serves its reports and joins its thread
  }

 private:
  static rd_kafka_t* NewProducer(const PushCall& call, std::string* error) {
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    char errstr[512];
    const std::string timeout = std::to_string(call.timeout.count());
    const std::pair<const char*, std::string> settings[] = {
        {"bootstrap.servers", call.brokers},
        {"acks", "all"},
        {"enable.idempotence", "true"},
        {"message.timeout.ms", timeout},
        {"linger.ms", call.timeout.count() > 1 ? "1" : "0"},
        {"client.id", "chronoq"},
    };
    for (const auto& [name, value] : settings) {
      if (rd_kafka_conf_set(conf, name, value.c_str(), errstr, sizeof errstr) != RD_KAFKA_CONF_OK) {
        *error = fmt::format("Kafka producer for {}: {}", call.brokers, errstr);
        rd_kafka_conf_destroy(conf);
        return nullptr;
      }
    }
    rd_kafka_conf_set_dr_msg_cb(conf, OnDelivery);
    rd_kafka_conf_set_log_cb(conf, OnLog);
    rd_kafka_conf_set_error_cb(conf, OnError);
    rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof errstr);
    if (rk == nullptr) {  // conf is still ours
      rd_kafka_conf_destroy(conf);
      *error = fmt::format("Kafka producer for {}: {}", call.brokers, errstr);
    }
    return rk;
  }

  base::Mutex mu_;
  std::map<std::string, std::unique_ptr<Producer>> producers_ CQ_GUARDED_BY(mu_);
  bool stopped_ CQ_GUARDED_BY(mu_) = false;
};

}  // namespace

std::unique_ptr<Transport> NewKafkaTransport(const PusherOptions&) {
  return std::make_unique<KafkaTransport>();
}

}  // namespace chronoq::push::internal
