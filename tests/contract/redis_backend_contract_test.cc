// The backend contract suite on the Redis backend, against a real redis-server and a real
// 3-master Redis Cluster that this binary starts once each, when first needed
// (tests/testutil/redis_servers.h). Each test gets its own namespace, so tests never
// see each other's keys.
#include <atomic>
#include <future>

#include "redis/cluster.h"
#include "redis/command_sink.h"
#include "redis/connection.h"
#include "redis/event_loop.h"
#include "redis/redis_backend.h"
#include "tests/contract/backend_contract.h"
#include "tests/testutil/redis_servers.h"

namespace chronoq::contract {
namespace {

testutil::RedisCluster* SharedCluster() {
  static testutil::RedisCluster* cluster = [] {
    auto* c = new testutil::RedisCluster();  // lives until exit; its destructor kills it
    Status s = c->Start();
    if (!s.ok()) ADD_FAILURE() << "cannot start the redis cluster: " << s.ToString();
    return c;
  }();
  return cluster;
}

testutil::RedisStandalone* SharedRedis() {
  static testutil::RedisStandalone* redis = [] {
    auto* r = new testutil::RedisStandalone();  // lives until exit; its destructor kills it
    Status s = r->Start();
    if (!s.ok()) ADD_FAILURE() << "cannot start redis-server: " << s.ToString();
    return r;
  }();
  return redis;
}

class RedisHarness final : public BackendHarness {
 public:
  RedisHarness(const HarnessOptions& o, bool cluster) : clock_(o.start), scheduler_(&clock_) {
    static std::atomic<int> next{0};
    redis::ConnectionOptions co;
    if (cluster) {
      std::vector<redis::RedisEndpoint> seeds;
      for (uint16_t p : SharedCluster()->ports()) seeds.push_back({"127.0.0.1", p});
      co.endpoint = seeds.front();
      Result<std::unique_ptr<redis::RedisClusterClient>> c =
          redis::RedisClusterClient::Connect(&loop_, co, seeds);
      if (!c.has_value()) ADD_FAILURE() << c.error().ToString();
      if (c.has_value()) sink_ = std::move(*c);
    }
    if (!sink_) {
      co.endpoint = redis::RedisEndpoint{"127.0.0.1", SharedRedis()->port()};
      conn_ = std::make_unique<redis::RedisConnection>(&loop_, co);
      sink_ = std::make_unique<redis::SingleServer>(conn_.get());
    }
    redis::RedisBackendOptions bo;
    bo.ns = "contract" + std::to_string(next.fetch_add(1));
    bo.retention = o.retention;
    bo.topic_inactive = o.topic_inactive;
    backend_ = std::make_unique<redis::RedisBackend>(bo, sink_.get(), &clock_, &scheduler_);
  }
  ~RedisHarness() override {
    backend_.reset();
    sink_.reset();
    conn_.reset();
  }
  engine::QueueBackend* backend() override { return backend_.get(); }
  base::ManualClock* clock() override { return &clock_; }
  base::ManualScheduler* scheduler() override { return &scheduler_; }
  // Commands are answered in order on the one connection: a PING answered means every script
  // sent before it was, and its callbacks (ready notifications) ran.
  void Settle() override {
    std::promise<void> done;
    backend_->Flush([&done] { done.set_value(); });
    done.get_future().wait();
  }

 private:
  base::ManualClock clock_;
  base::ManualScheduler scheduler_;
  redis::EventLoop loop_;
  std::unique_ptr<redis::RedisConnection> conn_;
  std::unique_ptr<redis::CommandSink> sink_;
  std::unique_ptr<redis::RedisBackend> backend_;
};

class RedisFactory final : public BackendFactory {
 public:
  explicit RedisFactory(bool cluster) : cluster_(cluster) {}
  std::string name() const override { return cluster_ ? "RedisCluster" : "RedisStandalone"; }
  std::unique_ptr<BackendHarness> Make(const HarnessOptions& o) override {
    return std::make_unique<RedisHarness>(o, cluster_);
  }

 private:
  bool cluster_;
};

RedisFactory redis_standalone(false);
RedisFactory redis_cluster(true);

INSTANTIATE_TEST_SUITE_P(Redis, BackendContractTest,
                         ::testing::Values(static_cast<BackendFactory*>(&redis_standalone),
                                           static_cast<BackendFactory*>(&redis_cluster)),
                         FactoryName);

}  // namespace
}  // namespace chronoq::contract
