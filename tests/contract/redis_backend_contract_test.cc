// The backend contract suite on the Redis backend, against a real redis-server that this binary
// starts once (tests/testutil/redis_servers.h). Each test gets its own namespace, so tests never
// see each other's keys.
#include <atomic>
#include <future>

#include "redis/connection.h"
#include "redis/event_loop.h"
#include "redis/redis_backend.h"
#include "tests/contract/backend_contract.h"
#include "tests/testutil/redis_servers.h"

namespace chronoq::contract {
namespace {

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
  explicit RedisHarness(const HarnessOptions& o) : clock_(o.start), scheduler_(&clock_) {
    static std::atomic<int> next{0};
    redis::ConnectionOptions co;
    co.endpoint = redis::RedisEndpoint{"127.0.0.1", SharedRedis()->port()};
    conn_ = std::make_unique<redis::RedisConnection>(&loop_, co);
    redis::RedisBackendOptions bo;
    bo.ns = "contract" + std::to_string(next.fetch_add(1));
    bo.retention = o.retention;
    bo.topic_inactive = o.topic_inactive;
    backend_ = std::make_unique<redis::RedisBackend>(bo, conn_.get(), &clock_, &scheduler_);
  }
  ~RedisHarness() override {
    backend_.reset();
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
  std::unique_ptr<redis::RedisBackend> backend_;
};

class RedisFactory final : public BackendFactory {
 public:
  std::string name() const override { return "RedisStandalone"; }
  std::unique_ptr<BackendHarness> Make(const HarnessOptions& o) override {
    return std::make_unique<RedisHarness>(o);
  }
};

RedisFactory redis_standalone;

INSTANTIATE_TEST_SUITE_P(Redis, BackendContractTest,
                         ::testing::Values(static_cast<BackendFactory*>(&redis_standalone)),
                         FactoryName);

}  // namespace
}  // namespace chronoq::contract
