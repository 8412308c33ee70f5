// The backend contract suite on the Redis backend, against a real redis-server, a real Sentinel
// deployment (master, replica, three sentinels; the master found through them) and a real
// 3-master Redis Cluster, which this binary starts once each, when first needed
// (tests/testutil/redis_servers.h). Each test gets its own namespace, so tests never
// see each other's keys. Those use the default record format (redis-format 2, MessagePack
// strings); on standalone also formats 1 (hashes, as before issue 20) and 3 (MessagePack with
// integers): every promise holds whichever format a fleet writes; and, as it is built, layout 4
// (RedisFormat4: topics created in redis-format 4's layout by a test-only switch).
#include <atomic>
#include <future>

#include "redis/cluster.h"
#include "redis/command_sink.h"
#include "redis/connection.h"
#include "redis/event_loop.h"
#include "redis/redis_backend.h"
#include "redis/sentinel.h"
#include "tests/contract/backend_contract.h"
#include "tests/testutil/redis_servers.h"
#include "tests/testutil/redis_test_options.h"

namespace chronoq::contract {
namespace {

class RedisHarness final : public BackendHarness {
 public:
  enum class Deployment { kStandalone, kSentinel, kCluster };
  RedisHarness(const HarnessOptions& o, Deployment d, int format)
      : clock_(o.start), scheduler_(&clock_) {
    static std::atomic<int> next{0};
    redis::ConnectionOptions co = testutil::TestConnectionOptions(0);  // the endpoint: below
    if (d == Deployment::kCluster) {
      std::vector<redis::RedisEndpoint> seeds;
      for (uint16_t p : testutil::SharedDeployment<testutil::RedisCluster>()->ports())
        seeds.push_back({"127.0.0.1", p});
      co.endpoint = seeds.front();
      Result<std::unique_ptr<redis::RedisClusterClient>> c =
          redis::RedisClusterClient::Connect(&loop_, co, seeds);
      if (!c.has_value()) ADD_FAILURE() << c.error().ToString();
      if (c.has_value()) sink_ = std::move(*c);
    }
    if (d == Deployment::kSentinel) {
      std::vector<redis::RedisEndpoint> sentinels;
      for (uint16_t p : testutil::SharedDeployment<testutil::RedisSentinelSet>()->sentinel_ports())
        sentinels.push_back({"127.0.0.1", p});
      co.resolve = [sentinels] {
        return redis::AskSentinels(sentinels, "mymaster", std::chrono::milliseconds(300));
      };
      conn_ = std::make_unique<redis::RedisConnection>(&loop_, co);
      sink_ = std::make_unique<redis::SingleServer>(conn_.get());
    }
    if (!sink_) {
      co.endpoint = redis::RedisEndpoint{
          "127.0.0.1", testutil::SharedDeployment<testutil::RedisStandalone>()->port()};
      conn_ = std::make_unique<redis::RedisConnection>(&loop_, co);
      sink_ = std::make_unique<redis::SingleServer>(conn_.get());
    }
    options_.ns = "contract" + std::to_string(next.fetch_add(1));
    options_.retention = o.retention;
    options_.topic_inactive = o.topic_inactive;
    options_.record_format = format;
    backend_ = std::make_unique<redis::RedisBackend>(options_, sink_.get(), &clock_, &scheduler_);
  }
  ~RedisHarness() override {
    backend_.reset();
    sink_.reset();
    conn_.reset();
  }
  backend::QueueBackend* backend() override { return backend_.get(); }
  base::ManualClock* clock() override { return &clock_; }
  base::ManualScheduler* scheduler() override { return &scheduler_; }
  // Commands are answered in order on the one connection: a PING answered means every script
  // sent before it was, and its callbacks (ready notifications) ran.
  void Settle() override {
    std::promise<void> done;
    backend_->Flush([&done] { done.set_value(); });
    done.get_future().wait();
  }
  // A new backend over the same keyspace (what a restarted node sees); the connection stays.
  bool Restart() override {
    Settle();
    backend_.reset();
    backend_ = std::make_unique<redis::RedisBackend>(options_, sink_.get(), &clock_, &scheduler_);
    return true;
  }

 private:
  redis::RedisBackendOptions options_;
  base::ManualClock clock_;
  base::ManualScheduler scheduler_;
  redis::EventLoop loop_;
  std::unique_ptr<redis::RedisConnection> conn_;
  std::unique_ptr<redis::CommandSink> sink_;
  std::unique_ptr<redis::RedisBackend> backend_;
};

class RedisFactory final : public BackendFactory {
 public:
  using Deployment = RedisHarness::Deployment;
  RedisFactory(Deployment d, std::string name, int format = 2)
      : d_(d), name_(std::move(name)), format_(format) {}
  std::string name() const override { return name_; }
  std::unique_ptr<BackendHarness> Make(const HarnessOptions& o) override {
    return std::make_unique<RedisHarness>(o, d_, format_);
  }

 private:
  Deployment d_;
  std::string name_;
  int format_;
};

RedisFactory redis_standalone(RedisFactory::Deployment::kStandalone, "RedisStandalone");
RedisFactory redis_sentinel(RedisFactory::Deployment::kSentinel, "RedisSentinel");
RedisFactory redis_cluster(RedisFactory::Deployment::kCluster, "RedisCluster");
RedisFactory redis_format1(RedisFactory::Deployment::kStandalone, "RedisFormat1", 1);
RedisFactory redis_format3(RedisFactory::Deployment::kStandalone, "RedisFormat3", 3);
// Topics created in layout 4 (docs/redis.md "Format 4", build step 4): record_format 4 is a
// test-only switch until the config accepts it (build step 6).
RedisFactory redis_format4(RedisFactory::Deployment::kStandalone, "RedisFormat4", 4);

INSTANTIATE_TEST_SUITE_P(Redis, BackendContractTest,
                         ::testing::Values(static_cast<BackendFactory*>(&redis_standalone),
                                           static_cast<BackendFactory*>(&redis_sentinel),
                                           static_cast<BackendFactory*>(&redis_cluster),
                                           static_cast<BackendFactory*>(&redis_format1),
                                           static_cast<BackendFactory*>(&redis_format3),
                                           static_cast<BackendFactory*>(&redis_format4)),
                         FactoryName);

}  // namespace
}  // namespace chronoq::contract
