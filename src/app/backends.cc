#include "app/backends.h"

#include <unistd.h>

#include <chrono>
#include <future>
#include <memory>

#include "app/start_checks.h"
#include "base/log.h"
#include "engine/engine.h"
#include "redis/cluster.h"
#include "redis/command_sink.h"
#include "redis/connection.h"
#include "redis/event_loop.h"
#include "redis/redis_backend.h"
#include "redis/redis_metrics.h"
#include "redis/redis_url.h"
#include "redis/sentinel.h"
#include "redis/subscriber.h"
#include "storage/kv_metrics.h"
#include "storage/memory/mem_kv.h"
#include "storage/message_store.h"
#include "storage/rocksdb/rocks_kv.h"

namespace chronoq::app {
namespace {

constexpr const char* kLog = "cq.app";

// The node's name in message histories: node-id, else the host name.
std::string NodeName(const config::ServerConfig& cfg) {
  if (!cfg.node_id.empty()) return cfg.node_id;
  char host[256] = {};
  if (::gethostname(host, sizeof(host) - 1) != 0 || host[0] == '\0') return "chronoq";
  return host;
}

class EngineServing final : public ServingBackend {
 public:
  EngineServing(const config::ServerConfig& cfg, std::unique_ptr<storage::KvStore> kv,
                const base::Clock* clock, base::Scheduler* scheduler)
      : kv_(std::move(kv)), store_(kv_.get(), cfg.ns) {
    engine::EngineOptions eopts;
    eopts.retention = Millis(cfg.end_life_msg_expire_millis);
    eopts.topic_inactive = Millis(cfg.topic_inactive_millis);
    eopts.memory_horizon = Millis(cfg.memory_horizon_millis);
    eopts.node = NodeName(cfg);
    eopts.history_max_entries = cfg.history_max_entries;
    engine_ = std::make_unique<engine::Engine>(eopts, &store_, clock, scheduler);
  }
  Status Recover() { return engine_->Recover(); }
  backend::QueueBackend* backend() override { return engine_.get(); }
  void Close() override { kv_->Close(); }
  void RegisterMetrics(metrics::Registry& registry) override {
    storage::RegisterMetrics(kv_.get(), registry);
  }

 private:
  std::unique_ptr<storage::KvStore> kv_;
  storage::MessageStore store_;
  std::unique_ptr<engine::Engine> engine_;
};

class RedisServing final : public ServingBackend {
 public:
  RedisServing(const config::ServerConfig& cfg, const redis::RedisUrl& url,
               const base::Clock* clock, base::Scheduler* scheduler) {
    redis::ConnectionOptions co;
    co.endpoint = url.endpoints.front();
    if (url.mode == redis::RedisMode::kSentinel) {
      co.resolve = [sentinels = url.endpoints, name = url.master_name] {
        return redis::AskSentinels(sentinels, name, std::chrono::milliseconds(300));
      };
    }
    co.username = url.username;
    co.password = url.password;
    co.db = url.db;
    if (url.mode == redis::RedisMode::kCluster) {
      Result<std::unique_ptr<redis::RedisClusterClient>> cluster =
          redis::RedisClusterClient::Connect(&loop_, co, url.endpoints);
      if (!cluster.has_value()) {
        start_error_ = cluster.error();
        return;
      }
      sink_ = std::move(*cluster);
      // Publications reach every node of a cluster: subscribe on the first seed.
    } else {
      conn_ = std::make_unique<redis::RedisConnection>(&loop_, co);
      sink_ = std::make_unique<redis::SingleServer>(conn_.get());
    }
    redis::RedisBackendOptions bo;
    bo.ns = cfg.ns;
    bo.retention = Millis(cfg.end_life_msg_expire_millis);
    bo.topic_inactive = Millis(cfg.topic_inactive_millis);
    bo.publish = true;
    bo.wait_replicas = static_cast<int>(cfg.redis_wait_replicas);
    bo.record_format = static_cast<int>(cfg.redis_format);
    bo.node = NodeName(cfg);
    bo.history_max_entries = cfg.history_max_entries;
    backend_ = std::make_unique<redis::RedisBackend>(bo, sink_.get(), clock, scheduler);
    // Long polls parked here hear of sends and nacks made through other nodes. In a cluster any
    // node relays every publication: subscribe on the seeds in turn, the next after a failure.
    redis::ConnectionOptions so = co;
    if (url.mode == redis::RedisMode::kCluster) {
      so.resolve = [seeds = url.endpoints, next = std::make_shared<size_t>(0)] {
        return Result<redis::RedisEndpoint>(seeds[(*next)++ % seeds.size()]);
      };
    }
    subscriber_ = std::make_unique<redis::RedisSubscriber>(
        &loop_, so, backend_->ReadyChannel(),
        [b = backend_.get()](std::string_view payload) { b->OnPublished(payload); },
        [b = backend_.get()] { b->OnResubscribed(); });
  }
  // Why the deployment could not be used at all (a cluster whose slot map no seed gives).
  const Status& start_error() const { return start_error_; }
  // Whether Redis answers now (a node starts anyway and recovers when Redis comes).
  Status Ping() {
    std::promise<Status> p;
    sink_->Command("", {"PING"}, [&p](Result<redis::RedisReply> r) {
      if (!r.has_value()) return p.set_value(r.error());
      if (r->is_error()) return p.set_value(Unavailable("redis refused PING: " + r->str));
      p.set_value(Status::Ok());
    });
    return p.get_future().get();
  }
  backend::QueueBackend* backend() override { return backend_.get(); }
  void Close() override {
    subscriber_.reset();
    backend_.reset();
    sink_.reset();
    conn_.reset();
  }
  void RegisterMetrics(metrics::Registry& registry) override { redis::RegisterMetrics(registry); }

 private:
  redis::EventLoop loop_;
  Status start_error_;
  std::unique_ptr<redis::RedisConnection> conn_;  // standalone and Sentinel
  std::unique_ptr<redis::CommandSink> sink_;      // where the backend's commands go
  std::unique_ptr<redis::RedisBackend> backend_;
  std::unique_ptr<redis::RedisSubscriber> subscriber_;
};

OpenedBackend Failed(int code, std::string error) {
  OpenedBackend out;
  out.exit_code = code;
  out.error = std::move(error);
  return out;
}

}  // namespace

OpenedBackend OpenBackend(const config::ServerConfig& cfg, const base::Clock* clock,
                          base::Scheduler* scheduler) {
  OpenedBackend out;
  if (cfg.storage == "redis") {
    Result<redis::RedisUrl> url = redis::ParseRedisUrl(cfg.redis_url);
    if (!url.has_value()) return Failed(2, url.error().message());
    auto serving = std::make_unique<RedisServing>(cfg, *url, clock, scheduler);
    if (!serving->start_error().ok()) return Failed(1, serving->start_error().message());
    if (Status s = serving->Ping(); !s.ok()) {
      CQ_LOG_WARN(kLog, "{}; serving anyway, requests answer code 500 until it is reachable",
                  s.message());
    }
    out.serving = std::move(serving);
    return out;
  }
  std::unique_ptr<storage::KvStore> kv;
  if (cfg.storage == "embedded") {
    storage::RocksOptions ropts;
    ropts.dir = cfg.data_dir;
    ropts.sync_writes = cfg.sync_writes;
    Result<std::unique_ptr<storage::RocksKv>> opened = storage::RocksKv::Open(ropts);
    if (!opened.has_value()) {
      return Failed(ExitCodeForStoreOpen(opened.error()), opened.error().message());
    }
    kv = std::move(opened).value();
  } else {
    kv = std::make_unique<storage::MemKv>();
  }
  auto serving = std::make_unique<EngineServing>(cfg, std::move(kv), clock, scheduler);
  auto start = std::chrono::steady_clock::now();
  if (Status s = serving->Recover(); !s.ok()) {
    return Failed(1, "recovery failed: " + s.ToString());
  }
  CQ_LOG_INFO(kLog, "storage ready in {} ms",
              std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::steady_clock::now() - start)
                  .count());
  out.serving = std::move(serving);
  return out;
}

}  // namespace chronoq::app
