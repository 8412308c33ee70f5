// The embedded Engine as a contract-suite backend (backend_contract.h), over a KvStore made by a
// factory: MemKv, or RocksKv in a fresh temporary directory. Options choose the memory horizon
// and load chunk, so that the suite's long delays also run through the far tier.
#pragma once

#include <future>
#include <memory>
#include <optional>
#include <string>

#include "base/clock.h"
#include "base/scheduler.h"
#include "engine/engine.h"
#include "storage/kv.h"
#include "storage/memory/mem_kv.h"
#include "storage/message_store.h"
#include "storage/rocksdb/rocks_kv.h"
#include "tests/contract/backend_contract.h"
#include "tests/testutil/temp_dir.h"

namespace chronoq::contract {

struct EngineVariant {
  std::string name;
  enum class Kv { kMemory, kRocks, kRocksSync } kv = Kv::kMemory;
  Millis memory_horizon{60'000};
  size_t load_chunk = 4096;
};

class EngineHarness final : public BackendHarness {
 public:
  EngineHarness(const HarnessOptions& o, const EngineVariant& v)
      : options_(o), variant_(v), clock_(o.start), scheduler_(&clock_) {
    if (v.kv != EngineVariant::Kv::kMemory) dir_ = std::make_unique<testutil::TempDir>();
    OpenKv();
    OpenEngine();
  }
  ~EngineHarness() override { Close(); }

  backend::QueueBackend* backend() override { return engine_.get(); }
  base::ManualClock* clock() override { return &clock_; }
  base::ManualScheduler* scheduler() override { return &scheduler_; }
  // Waits until every write so far is durable (writes made by timers are not waited for
  // otherwise). Batches apply in order, so an empty one committed now completes after them.
  void Settle() override {
    std::promise<void> done;
    std::future<void> f = done.get_future();
    std::optional<Status> now =
        kv_->Commit(storage::KvBatch(), [&done](Status) { done.set_value(); });
    if (!now) f.wait();
  }
  // The engine closes and a new one recovers from the same store. Over RocksDB the database is
  // closed and reopened from its directory; the memory KV outlives the engine, as a process's
  // memory would not, but the engine keeps nothing of its own across.
  bool Restart() override {
    Settle();
    Close(/*keep_kv=*/variant_.kv == EngineVariant::Kv::kMemory);
    if (!kv_) OpenKv();
    OpenEngine();
    return true;
  }

 private:
  void OpenKv() {
    if (variant_.kv == EngineVariant::Kv::kMemory) {
      kv_ = std::make_unique<storage::MemKv>();
      return;
    }
    storage::RocksOptions ro;
    ro.dir = dir_->path();
    ro.sync_writes = variant_.kv == EngineVariant::Kv::kRocksSync;
    ro.memtable_bytes = size_t{4} << 20;
    ro.block_cache_bytes = size_t{4} << 20;
    Result<std::unique_ptr<storage::RocksKv>> kv = storage::RocksKv::Open(ro);
    if (!kv.has_value()) {
      ADD_FAILURE() << kv.error().ToString();
      kv_ = std::make_unique<storage::MemKv>();
    } else {
      kv_ = std::move(*kv);
    }
  }
  void OpenEngine() {
    store_ = std::make_unique<storage::MessageStore>(kv_.get(), "contract");
    engine::EngineOptions e;
    e.retention = options_.retention;
    e.topic_inactive = options_.topic_inactive;
    e.memory_horizon = variant_.memory_horizon;
    e.load_chunk = variant_.load_chunk;
    e.shards = 4;
    engine_ = std::make_unique<engine::Engine>(e, store_.get(), &clock_, &scheduler_);
    Status s = engine_->Recover();
    if (!s.ok()) ADD_FAILURE() << s.ToString();
    scheduler_.RunDue();  // the first retention purge
  }
  void Close(bool keep_kv = false) {
    engine_.reset();  // cancels its timers first
    store_.reset();
    if (!keep_kv) kv_.reset();
  }

  HarnessOptions options_;
  EngineVariant variant_;
  base::ManualClock clock_;
  base::ManualScheduler scheduler_;
  std::unique_ptr<testutil::TempDir> dir_;
  std::unique_ptr<storage::KvStore> kv_;
  std::unique_ptr<storage::MessageStore> store_;
  std::unique_ptr<engine::Engine> engine_;
};

class EngineFactory final : public BackendFactory {
 public:
  explicit EngineFactory(EngineVariant v) : v_(std::move(v)) {}
  std::string name() const override { return v_.name; }
  std::unique_ptr<BackendHarness> Make(const HarnessOptions& options) override {
    return std::make_unique<EngineHarness>(options, v_);
  }

 private:
  EngineVariant v_;
};

}  // namespace chronoq::contract
