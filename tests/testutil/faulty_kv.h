// FaultyKv: a KvStore wrapper that fails chosen calls, to test that a failed write changes
// nothing visible (queue_backend.h: "the operation then changed nothing") and that the owner
// keeps serving afterwards. Forwards everything else to another KvStore.
//
// Commit failures take the shape the wrapped store's own failures have (which kind of store it
// is, FaultyKv finds out at construction by committing an empty batch):
// - over a synchronous store (Commit returns the outcome: MemKv), Commit returns kIOError at once
//   and the inner store is not touched;
// - over an asynchronous store (RocksKv: group commit), Commit returns std::nullopt and
//   the failure follows on another thread as a group-commit failure would: once every batch
//   committed before it is durable, `done` runs with kIOError, then the failure handler; from
//   the failing Commit on, every Commit returns kIOError at once until ResumeAfterFailure().
//   The failed batch never reaches the inner store, so reads never see it.
// Read failures: Get returns kIOError, Scan an iterator that ends at once with kIOError.
//
// Thread-safe like the store it wraps; the knobs are atomics.
#pragma once

#include <atomic>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "storage/kv.h"

namespace chronoq::testutil {

class FaultyKv final : public storage::KvStore {
 public:
  // `inner` must outlive this.
  explicit FaultyKv(storage::KvStore* inner)
      : inner_(inner), async_(!inner->Commit(storage::KvBatch(), [](Status) {}).has_value()) {
    inner_->SetFailureHandler([this](Status s) { CallHandler(std::move(s)); });
  }
  ~FaultyKv() override { WaitIdle(); }

  // The next `n` commits fail (see above).
  void FailNextCommits(int n) { fail_commits_.store(n); }
  // The next `n` reads (Get or Scan) fail with kIOError.
  void FailNextReads(int n) { fail_reads_.store(n); }
  int commits() const { return commits_.load(); }
  // Whether the wrapped store reports outcomes later (and failures through the handler).
  bool async() const { return async_; }
  int failed_commits() const { return failed_commits_.load(); }
  // Whether an injected asynchronous failure has not been resumed from yet.
  bool in_failed_state() const { return failed_.load(); }
  // Returns once every injected asynchronous failure has been delivered (callbacks run).
  void WaitIdle() {
    std::vector<std::thread> threads;
    {
      std::lock_guard lock(mu_);
      threads.swap(threads_);
    }
    for (std::thread& t : threads) t.join();
  }

  Result<std::optional<std::string>> Get(storage::Cf cf, std::string_view key) override {
    if (Take(fail_reads_)) return IOError("injected read failure");
    return inner_->Get(cf, key);
  }

  std::unique_ptr<storage::KvIterator> Scan(storage::Cf cf, std::string lower,
                                            std::string upper) override {
    if (Take(fail_reads_)) return std::make_unique<FailedIterator>();
    return inner_->Scan(cf, std::move(lower), std::move(upper));
  }

  std::optional<Status> Commit(storage::KvBatch batch, UniqueFunction<void(Status)> done) override {
    commits_.fetch_add(1);
    if (failed_.load()) {
      failed_commits_.fetch_add(1);
      return IOError("injected failure: the store is in the failed state");
    }
    if (!Take(fail_commits_)) return inner_->Commit(std::move(batch), std::move(done));
    failed_commits_.fetch_add(1);
    if (!async_) return IOError("injected write failure");
    // As a failed group commit: what was committed before is written, this batch is not.
    failed_.store(true);
    Flush();
    std::lock_guard lock(mu_);
    threads_.emplace_back([this, done = std::move(done)]() mutable {
      Status s = IOError("injected group commit failure");
      done(s);
      CallHandler(s);
    });
    return std::nullopt;
  }

  void SetFailureHandler(UniqueFunction<void(Status)> handler) override {
    std::lock_guard lock(handler_mu_);
    handler_ = std::move(handler);
  }

  void ResumeAfterFailure() override {
    failed_.store(false);
    inner_->ResumeAfterFailure();
  }

  std::vector<std::pair<std::string, int64_t>> Stats() override { return inner_->Stats(); }

  // Waits until every batch committed to `kv` so far is durable (an empty batch goes last; batches
  // apply in order).
  static void FlushStore(storage::KvStore* kv) {
    std::promise<void> p;
    std::future<void> f = p.get_future();
    std::optional<Status> now = kv->Commit(storage::KvBatch(), [&p](Status) { p.set_value(); });
    if (!now) f.wait();
  }

 private:
  class FailedIterator final : public storage::KvIterator {
   public:
    bool Valid() const override { return false; }
    void Next() override {}
    std::string_view key() const override { return {}; }
    std::string_view value() const override { return {}; }
    Status status() const override { return IOError("injected read failure"); }
  };

  void Flush() { FlushStore(inner_); }

  void CallHandler(Status s) {
    std::lock_guard lock(handler_mu_);
    if (handler_) handler_(std::move(s));
  }

  static bool Take(std::atomic<int>& budget) {
    int n = budget.load();
    while (n > 0) {
      if (budget.compare_exchange_weak(n, n - 1)) return true;
    }
    return false;
  }

  storage::KvStore* inner_;
  const bool async_;
  std::atomic<int> fail_commits_{0};
  std::atomic<int> fail_reads_{0};
  std::atomic<int> commits_{0};
  std::atomic<int> failed_commits_{0};
  std::atomic<bool> failed_{false};
  std::mutex handler_mu_;
  UniqueFunction<void(Status)> handler_;
  std::mutex mu_;
  std::vector<std::thread> threads_;
};

// DiscardWritesKv: reads through to another KvStore and drops every write (reporting success), so
// that a second engine can recover from a live store to compare its view with the first engine's
// without changing anything.
class DiscardWritesKv final : public storage::KvStore {
 public:
  explicit DiscardWritesKv(storage::KvStore* inner) : inner_(inner) {}
  Result<std::optional<std::string>> Get(storage::Cf cf, std::string_view key) override {
    return inner_->Get(cf, key);
  }
  std::unique_ptr<storage::KvIterator> Scan(storage::Cf cf, std::string lower,
                                            std::string upper) override {
    return inner_->Scan(cf, std::move(lower), std::move(upper));
  }
  std::optional<Status> Commit(storage::KvBatch, UniqueFunction<void(Status)>) override {
    return Status::Ok();
  }
  void SetFailureHandler(UniqueFunction<void(Status)>) override {}
  void ResumeAfterFailure() override {}

 private:
  storage::KvStore* inner_;
};

}  // namespace chronoq::testutil
