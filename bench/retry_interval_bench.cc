// Lateness of redeliveries after a nack with a retry interval (docs/benchmarks.md, "Retry
// interval"): the engine times the end of a retry interval like a trigger time, so a nacked
// message must be consumable again at nack time + retryIntervalMillis, not "at the next scan".
//
// In process, over an embedded (RocksDB) store in --dir, like a server: a topic with
// retryIntervalMillis = --interval-ms; a producer sends --messages messages (consumable at once)
// at --rate per second; a consumer, woken by the engine's ReadyListener as a parked long poll
// is, pulls (batches of 100), nacks each first delivery and acks each second one. Lateness of a
// redelivery = the time the consumer received it again minus the time it became consumable
// again (the visible-at time the nack stored, i.e. the engine's nack time + the interval; both
// on the system clock). Prints the percentiles; exits non-zero when a redelivery is missing or
// early, or a call failed.
//
//   retry_interval_bench [--dir=/tmp/chronoq-retry] [--messages=20000] [--rate=2000]
//                        [--interval-ms=1000] [--storage=embedded|memory]
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/log.h"
#include "engine_store.h"

namespace chronoq {
namespace {

namespace fs = std::filesystem;
using benchutil::Ms;
using benchutil::Percentiles;
using benchutil::SteadyClock;
using benchutil::Summarize;
using testutil::Await;

constexpr const char* kUsage =
    "usage: retry_interval_bench [--dir=/tmp/chronoq-retry] [--messages=20000] [--rate=2000]\n"
    "                            [--interval-ms=1000] [--storage=embedded|memory]\n"
    "Sends --messages messages at --rate per second to a topic whose retryIntervalMillis is\n"
    "--interval-ms; a consumer woken like a parked long poll nacks each first delivery and acks\n"
    "each redelivery; prints the lateness of the redeliveries (received again - nack time -\n"
    "interval).\n";

struct Flags {
  std::string dir = "/tmp/chronoq-retry";
  int64_t messages = 20'000;
  int64_t rate = 2'000;
  int64_t interval_ms = 1'000;
  bool memory = false;  // --storage=memory: the in-memory store instead of RocksDB in --dir
};

// Wakes the consumer when messages become consumable (what wakes parked long polls).
class Wakeups final : public backend::ReadyListener {
 public:
  void OnReady(std::string_view) override {
    {
      std::lock_guard lock(mu_);
      ++count_;
    }
    cv_.notify_all();
  }
  // Waits until a wake-up after `*seen` (or `timeout`); updates `*seen`.
  void Wait(uint64_t* seen, std::chrono::milliseconds timeout) {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, timeout, [&] { return count_ != *seen; });
    *seen = count_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t count_ = 0;
};

double SystemMs() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int Main(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    std::string v;
    if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (benchutil::ParseFlag(a, "--dir", &v)) {
      f.dir = v;
    } else if (benchutil::ParseFlag(a, "--messages", &v)) {
      f.messages = std::atoll(v.c_str());
    } else if (benchutil::ParseFlag(a, "--rate", &v)) {
      f.rate = std::atoll(v.c_str());
    } else if (a == "--storage=memory" || a == "--storage=embedded") {
      f.memory = a == "--storage=memory";
    } else if (benchutil::ParseFlag(a, "--interval-ms", &v)) {
      f.interval_ms = std::atoll(v.c_str());
    } else {
      std::fprintf(stderr, "unknown argument %s\n%s", argv[i], kUsage);
      return 2;
    }
  }
  if (f.messages < 1 || f.rate < 1 || f.interval_ms < 0) {
    std::fprintf(stderr, "--messages and --rate must be at least 1, --interval-ms at least 0\n");
    return 2;
  }
  base::InitLogging(base::LogLevel::kWarn, /*json=*/false);
  std::error_code ec;
  fs::remove_all(f.dir, ec);
  auto s = benchutil::EngineStore::Open(f.memory ? std::string() : f.dir);
  engine::Engine& e = s->engine();
  Wakeups wakeups;
  e.SetReadyListener(&wakeups);
  const std::string topic = "retried";
  core::TopicConfig config;
  config.retry_interval = Millis(f.interval_ms);
  Result<core::TopicConfig> set = Await<Result<core::TopicConfig>>(
      [&](auto cb) { e.SetTopicConfig(topic, config, std::move(cb)); });
  if (!set.has_value()) {
    std::fprintf(stderr, "setTopicConfig: %s\n", set.error().ToString().c_str());
    return 1;
  }

  std::atomic<bool> sent_all{false};
  std::atomic<int64_t> errors{0};
  std::vector<double> lateness;
  std::thread consumer([&] {
    std::unordered_map<std::string, double> consumable_at;  // msgId -> system ms
    uint64_t seen = 0;
    int64_t idle_rounds = 0;
    while (static_cast<int64_t>(lateness.size()) < f.messages) {
      // A wake-up that never comes shows as lateness of up to the timeout.
      wakeups.Wait(&seen, std::chrono::milliseconds(100));
      bool got_any = false;
      for (;;) {
        Result<std::vector<core::Message>> got =
            Await<Result<std::vector<core::Message>>>([&](auto cb) {
              e.Pull(backend::PullRequest{topic, 100, Millis(600'000)}, std::move(cb));
            });
        const double received = SystemMs();
        if (!got.has_value()) {
          errors.fetch_add(1);
          break;
        }
        if (got->empty()) break;
        got_any = true;
        std::vector<backend::AckItem> nacks, acks;
        for (const core::Message& m : *got) {
          const std::string& id = m.record.msg_id;
          if (m.record.retry == 1) {
            nacks.push_back(backend::AckItem{id, false, {}});
          } else {
            // Unknown, or redelivered before its interval ended: an error of the engine.
            auto at = consumable_at.find(id);
            if (at == consumable_at.end() || received < at->second) {
              errors.fetch_add(1);
            } else {
              lateness.push_back(received - at->second);
            }
            acks.push_back(backend::AckItem{id, true, {}});
          }
        }
        std::vector<std::string> nacked;
        for (const backend::AckItem& n : nacks) nacked.push_back(n.msg_id);
        for (auto* items : {&nacks, &acks}) {
          if (items->empty()) continue;
          Result<std::vector<Status>> r = Await<Result<std::vector<Status>>>(
              [&](auto cb) { e.AckBatch(topic, std::move(*items), std::move(cb)); });
          if (!r.has_value()) errors.fetch_add(1);
        }
        // When each nacked one is consumable again: the visible-at time its nack stored.
        for (const std::string& id : nacked) {
          Result<core::Message> m =
              Await<Result<core::Message>>([&](auto cb) { e.Get(topic, id, std::move(cb)); });
          if (!m.has_value() || m->status != core::MsgStatus::kWaiting) {
            errors.fetch_add(1);
            continue;
          }
          consumable_at[id] = static_cast<double>(m->record.visible_at.time_since_epoch().count());
        }
      }
      // Give up when nothing arrives for a while after everything was sent (a lost message).
      idle_rounds = got_any || !sent_all.load() ? 0 : idle_rounds + 1;
      if (idle_rounds * 100 > 10 * f.interval_ms + 10'000) break;
    }
  });

  const auto start = SteadyClock::now();
  const int64_t per_batch = std::max<int64_t>(1, f.rate / 1000);  // one batch a millisecond
  for (int64_t i = 0; i < f.messages;) {
    std::vector<core::NewMessage> msgs;
    for (int64_t k = 0; k < per_batch && i < f.messages; ++k, ++i) {
      msgs.push_back(core::NewMessage{topic, "m" + std::to_string(i), "payload", Millis(0),
                                      Millis(3'600'000), 3});
    }
    Result<std::vector<Result<backend::Sent>>> r =
        Await<Result<std::vector<Result<backend::Sent>>>>(
            [&](auto cb) { e.SendBatch(std::move(msgs), std::move(cb)); });
    if (!r.has_value()) errors.fetch_add(1);
    std::this_thread::sleep_until(start + std::chrono::microseconds(i * 1'000'000 / f.rate));
  }
  sent_all.store(true);
  consumer.join();
  const double seconds = Ms(SteadyClock::now() - start) / 1000;
  const Percentiles p = Summarize(lateness);
  std::printf(
      "retry interval %lld ms, %lld messages sent at %lld/s, each nacked once: %zu redelivered "
      "in %.1f s; lateness (received again - nack time - interval) p50 %.3f ms p99 %.3f ms max "
      "%.3f ms; %lld errors\n",
      static_cast<long long>(f.interval_ms), static_cast<long long>(f.messages),
      static_cast<long long>(f.rate), p.n, seconds, p.p50, p.p99, p.max,
      static_cast<long long>(errors.load()));
  const bool complete = static_cast<int64_t>(p.n) == f.messages && errors.load() == 0;
  if (!complete) std::fprintf(stderr, "missing, early or failed redeliveries\n");
  e.SetReadyListener(nullptr);
  return complete ? 0 : 1;
}

}  // namespace
}  // namespace chronoq

int main(int argc, char** argv) { return chronoq::Main(argc, argv); }
