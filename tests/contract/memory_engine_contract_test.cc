// The backend contract suite on the embedded Engine over a MemoryStore.
#include <memory>

#include "base/clock.h"
#include "base/scheduler.h"
#include "engine/engine.h"
#include "metrics/monitor.h"
#include "storage/memory/memory_store.h"
#include "tests/contract/backend_contract.h"

namespace chronoq::contract {
namespace {

class MemoryEngineHarness final : public BackendHarness {
 public:
  explicit MemoryEngineHarness(const HarnessOptions& o)
      : clock_(o.start),
        scheduler_(&clock_),
        monitor_(Millis(60'000)),
        engine_(engine::EngineOptions{o.retention, o.topic_inactive, 4}, &store_, &clock_,
                &scheduler_, &monitor_) {}

  engine::QueueBackend* backend() override { return &engine_; }
  base::ManualClock* clock() override { return &clock_; }
  base::ManualScheduler* scheduler() override { return &scheduler_; }

 private:
  // Destroyed in reverse: the engine (cancelling its timers) before the scheduler and clock.
  base::ManualClock clock_;
  base::ManualScheduler scheduler_;
  storage::MemoryStore store_;
  metrics::MonitorRecorder monitor_;
  engine::Engine engine_;
};

class MemoryEngineFactory final : public BackendFactory {
 public:
  std::string name() const override { return "MemoryEngine"; }
  std::unique_ptr<BackendHarness> Make(const HarnessOptions& options) override {
    return std::make_unique<MemoryEngineHarness>(options);
  }
};

MemoryEngineFactory factory;

INSTANTIATE_TEST_SUITE_P(MemoryEngine, BackendContractTest,
                         ::testing::Values(static_cast<BackendFactory*>(&factory)), FactoryName);

}  // namespace
}  // namespace chronoq::contract
