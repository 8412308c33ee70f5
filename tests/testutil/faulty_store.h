// FaultyStore: a Store wrapper that fails chosen calls, to test that a failed write changes
// nothing (queue_backend.h: "the operation then changed nothing"). Forwards to another Store.
// Thread-safe like the store it wraps; the knobs are atomics.
#pragma once

#include <atomic>
#include <optional>
#include <string_view>

#include "storage/store.h"

namespace chronoq::testutil {

class FaultyStore final : public storage::Store {
 public:
  explicit FaultyStore(storage::Store* inner) : inner_(inner) {}  // inner must outlive this

  // The next `n` writes fail with kIOError without touching the inner store.
  void FailNextWrites(int n) { fail_writes_.store(n); }
  // The next `n` reads fail with kIOError.
  void FailNextReads(int n) { fail_reads_.store(n); }
  int writes() const { return writes_.load(); }

  Result<std::optional<core::MessageRecord>> Get(std::string_view topic, std::string_view msg_id,
                                                 bool with_payload) override {
    if (Take(fail_reads_)) return IOError("injected read failure");
    return inner_->Get(topic, msg_id, with_payload);
  }
  Status Write(const storage::WriteBatch& batch) override {
    writes_.fetch_add(1);
    if (Take(fail_writes_)) return IOError("injected write failure");
    return inner_->Write(batch);
  }

 private:
  static bool Take(std::atomic<int>& budget) {
    int n = budget.load();
    while (n > 0) {
      if (budget.compare_exchange_weak(n, n - 1)) return true;
    }
    return false;
  }
  storage::Store* inner_;
  std::atomic<int> fail_writes_{0};
  std::atomic<int> fail_reads_{0};
  std::atomic<int> writes_{0};
};

}  // namespace chronoq::testutil
