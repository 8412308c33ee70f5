// Shared by the programs of bench/ that drive the embedded engine directly (no HTTP): a store
// opened as a restarted server opens it, a fill through SendBatch, flag parsing and medians.
// Header-only; each program includes it once.
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/scheduler.h"
#include "engine/engine.h"
#include "storage/memory/mem_kv.h"
#include "storage/message_store.h"
#include "storage/rocksdb/rocks_kv.h"
#include "tests/testutil/await.h"

namespace chronoq::benchutil {

using SteadyClock = std::chrono::steady_clock;

inline double Ms(SteadyClock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

inline double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

struct Percentiles {
  double p50 = 0, p99 = 0, max = 0;
  size_t n = 0;
};

inline Percentiles Summarize(std::vector<double> v) {
  Percentiles p;
  if (v.empty()) return p;
  std::sort(v.begin(), v.end());
  p.n = v.size();
  p.p50 = v[v.size() / 2];
  p.p99 = v[std::min(v.size() - 1, v.size() * 99 / 100)];
  p.max = v.back();
  return p;
}

// "--name=value" -> value.
inline bool ParseFlag(std::string_view arg, std::string_view name, std::string* value) {
  if (arg.substr(0, name.size()) != name || arg.size() <= name.size() || arg[name.size()] != '=') {
    return false;
  }
  *value = std::string(arg.substr(name.size() + 1));
  return true;
}

// An embedded store in `dir` with its engine, recovered (timed) as a server does at start. An
// empty `dir`: the in-memory store (`--storage=memory` of the server) instead of RocksDB.
class EngineStore {
 public:
  static std::unique_ptr<EngineStore> Open(const std::string& dir,
                                           engine::EngineOptions options = {}) {
    auto s = std::unique_ptr<EngineStore>(new EngineStore());
    if (dir.empty()) {
      s->kv_ = std::make_unique<storage::MemKv>();
    } else {
      storage::RocksOptions o;
      o.dir = dir;
      Result<std::unique_ptr<storage::RocksKv>> kv = storage::RocksKv::Open(o);
      if (!kv.has_value()) {
        std::fprintf(stderr, "open %s: %s\n", dir.c_str(), kv.error().ToString().c_str());
        std::exit(1);
      }
      s->kv_ = std::move(*kv);
    }
    s->store_ = std::make_unique<storage::MessageStore>(s->kv_.get(), "bench");
    s->sched_ = std::make_unique<base::ThreadScheduler>(base::SystemClock::Get());
    s->engine_ = std::make_unique<engine::Engine>(options, s->store_.get(),
                                                  base::SystemClock::Get(), s->sched_.get());
    auto start = SteadyClock::now();
    Status r = s->engine_->Recover();
    if (!r.ok()) {
      std::fprintf(stderr, "recover: %s\n", r.ToString().c_str());
      std::exit(1);
    }
    s->recover_ms_ = Ms(SteadyClock::now() - start);
    return s;
  }
  ~EngineStore() {
    sched_->Stop();
    engine_.reset();
    store_.reset();
    kv_.reset();
  }
  engine::Engine& engine() { return *engine_; }
  double recover_ms() const { return recover_ms_; }

 private:
  EngineStore() = default;
  std::unique_ptr<storage::KvStore> kv_;
  std::unique_ptr<storage::MessageStore> store_;
  std::unique_ptr<base::ThreadScheduler> sched_;
  std::unique_ptr<engine::Engine> engine_;
  double recover_ms_ = 0;
};

// Sends n messages "m<i>" to `topic` in batches of `batch`, keeping a few batches in flight (group
// commit writes what queued meanwhile as one RocksDB write). `trigger_of(i)` is message i's
// trigger time. Exits on a failed write; prints the rate.
inline void Fill(engine::Engine& e, const std::string& topic, int64_t n, int batch,
                 size_t payload_bytes, const std::function<TimePoint(int64_t)>& trigger_of) {
  std::mutex mu;
  std::condition_variable cv;
  int in_flight = 0;
  bool failed = false;
  const std::string payload(payload_bytes, 'x');
  auto start = SteadyClock::now();
  auto last_report = start;
  for (int64_t i = 0; i < n;) {
    std::vector<core::NewMessage> msgs;
    for (int k = 0; k < batch && i < n; ++k, ++i) {
      core::NewMessage m{topic,     "m" + std::to_string(i), payload,
                         Millis(0), Millis(86'400'000 * 7),  3};
      m.trigger_time = trigger_of(i);
      msgs.push_back(std::move(m));
    }
    {
      std::unique_lock lock(mu);
      cv.wait(lock, [&] { return in_flight < 8; });
      ++in_flight;
    }
    e.SendBatch(std::move(msgs), [&](Result<std::vector<Result<backend::Sent>>> r) {
      std::lock_guard lock(mu);
      if (!r.has_value()) {
        std::fprintf(stderr, "send: %s\n", r.error().ToString().c_str());
        failed = true;
      }
      --in_flight;
      cv.notify_all();
    });
    if (SteadyClock::now() - last_report > std::chrono::seconds(30)) {
      last_report = SteadyClock::now();
      std::fprintf(stderr, "  filled %lld of %lld (%.0f/s)\n", static_cast<long long>(i),
                   static_cast<long long>(n), i / (Ms(last_report - start) / 1000));
    }
  }
  std::unique_lock lock(mu);
  cv.wait(lock, [&] { return in_flight == 0; });
  if (failed) std::exit(1);
  const double s = Ms(SteadyClock::now() - start) / 1000;
  std::printf("fill: %lld messages in %.1f s (%.0f messages/s, batches of %d)\n",
              static_cast<long long>(n), s, n / s, batch);
}

}  // namespace chronoq::benchutil
