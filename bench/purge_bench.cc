// purgeTopic over a large backlog (docs/benchmarks.md, "purgeTopic"): fills an embedded store with
// N waiting messages in one topic (through the engine, not over HTTP), reopens it as a restarted
// server would, then purges that topic while a probe sends, pulls and acks one message of another
// topic every millisecond. Prints how long the purge took and the probe's latency before and
// during it: a purge works in bounded batches, so the other topic's latency must stay close to
// its baseline.
//
//   purge_bench [--dir=/tmp/chronoq-purge] [--messages=10000000] [--batch=1000] [--payload=64]
//               [--chunk=100] [--pause=1] [--reuse]
//
// --batch is the fill's send batch; --chunk and --pause the purge's (EngineOptions::purge_chunk,
// purge_pause). --reuse
// skips the fill when the directory holds a store this program filled with the same count (the
// purge empties it, so --reuse only helps after a failed run). --help prints this.
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
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

struct Flags {
  std::string dir = "/tmp/chronoq-purge";
  int64_t messages = 10'000'000;
  int batch = 1000;
  size_t payload = 64;
  size_t chunk = engine::EngineOptions{}.purge_chunk;
  double pause = engine::EngineOptions{}.purge_pause;
  bool reuse = false;
};

constexpr const char* kUsage =
    "usage: purge_bench [--dir=/tmp/chronoq-purge] [--messages=10000000] [--batch=1000]\n"
    "                   [--payload=64] [--chunk=100] [--pause=1] [--reuse]\n"
    "Fills one topic of an embedded store with --messages waiting messages (send batches of\n"
    "--batch), reopens it, and purges it in chunks of --chunk messages (pausing after each\n"
    "--pause times as long as it took) while a probe sends, pulls and acks one message of\n"
    "another topic every millisecond; prints the purge's rate and the probe's latency before\n"
    "and during the purge. --reuse skips the fill of a store filled before.\n";

// Sends, pulls and acks one message of `topic`; the milliseconds it took, or -1 on an error.
double ProbeOnce(engine::Engine& e, const std::string& topic, int64_t n) {
  auto start = SteadyClock::now();
  core::NewMessage m{topic, "p" + std::to_string(n), "probe", Millis(0), Millis(60'000), 3};
  Result<backend::Sent> sent =
      Await<Result<backend::Sent>>([&](auto cb) { e.Send(std::move(m), std::move(cb)); });
  if (!sent.has_value()) return -1;
  Result<std::vector<core::Message>> got = Await<Result<std::vector<core::Message>>>([&](auto cb) {
    e.Pull(backend::PullRequest{topic, 1, Millis(30'000)}, std::move(cb));
  });
  if (!got.has_value() || got->size() != 1) return -1;
  Status acked = Await<Status>(
      [&](auto cb) { e.Ack(topic, got->front().record.msg_id, true, std::move(cb)); });
  if (!acked.ok()) return -1;
  return Ms(SteadyClock::now() - start);
}

int Main(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    std::string v;
    if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (a == "--reuse") {
      f.reuse = true;
    } else if (benchutil::ParseFlag(a, "--pause", &v)) {
      f.pause = std::atof(v.c_str());
    } else if (benchutil::ParseFlag(a, "--chunk", &v)) {
      f.chunk = static_cast<size_t>(std::atoll(v.c_str()));
    } else if (benchutil::ParseFlag(a, "--dir", &v)) {
      f.dir = v;
    } else if (benchutil::ParseFlag(a, "--messages", &v)) {
      f.messages = std::atoll(v.c_str());
    } else if (benchutil::ParseFlag(a, "--batch", &v)) {
      f.batch = std::atoi(v.c_str());
    } else if (benchutil::ParseFlag(a, "--payload", &v)) {
      f.payload = static_cast<size_t>(std::atoll(v.c_str()));
    } else {
      std::fprintf(stderr, "unknown argument %s\n%s", argv[i], kUsage);
      return 2;
    }
  }
  base::InitLogging(base::LogLevel::kWarn, /*json=*/false);
  const std::string stamp = f.dir + "/BENCH-FILLED-" + std::to_string(f.messages);
  const std::string topic = "purged";
  if (!(f.reuse && fs::exists(stamp))) {
    std::error_code ec;
    fs::remove_all(f.dir, ec);
    auto s = benchutil::EngineStore::Open(f.dir);
    const TimePoint base = base::SystemClock::Get()->Now();
    // Two hours ahead, 100 per millisecond: mostly beyond the memory horizon (on disk only).
    benchutil::Fill(s->engine(), topic, f.messages, f.batch, f.payload,
                    [base](int64_t i) { return base + Millis(7'200'000 + i / 100); });
    s.reset();
    std::ofstream(stamp) << "filled\n";
  }
  engine::EngineOptions options;
  options.purge_chunk = f.chunk;
  options.purge_pause = f.pause;
  auto s = benchutil::EngineStore::Open(f.dir, options);
  engine::Engine& e = s->engine();
  std::printf("reopened in %.0f ms\n", s->recover_ms());

  std::mutex mu;
  std::vector<double> before, during;
  std::vector<double>* into = &before;
  std::atomic<bool> stop{false};
  std::atomic<int64_t> errors{0};
  std::thread probe([&] {
    for (int64_t n = 0; !stop.load(); ++n) {
      const double ms = ProbeOnce(e, "probe", n);
      if (ms < 0) {
        errors.fetch_add(1);
      } else {
        std::lock_guard lock(mu);
        into->push_back(ms);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));  // paces the probe
    }
  });
  std::this_thread::sleep_for(std::chrono::seconds(3));
  {
    std::lock_guard lock(mu);
    into = &during;
  }
  auto start = SteadyClock::now();
  Result<int64_t> purged =
      Await<Result<int64_t>>([&](auto cb) { e.Purge(topic, std::nullopt, std::move(cb)); });
  const double purge_s = Ms(SteadyClock::now() - start) / 1000;
  stop.store(true);
  probe.join();
  if (!purged.has_value()) {
    std::fprintf(stderr, "purge: %s\n", purged.error().ToString().c_str());
    return 1;
  }
  std::printf("purge: %lld messages in %.1f s (%.0f messages/s), chunks of %zu, pause %.2f\n",
              static_cast<long long>(*purged), purge_s, *purged / purge_s, f.chunk, f.pause);
  const Percentiles b = Summarize(before), d = Summarize(during);
  std::printf(
      "probe (send + pull + ack of another topic, one per ms): before p50 %.3f ms p99 %.3f ms "
      "max %.3f ms (%zu); during the purge p50 %.3f ms p99 %.3f ms max %.3f ms (%zu); %lld "
      "errors\n",
      b.p50, b.p99, b.max, b.n, d.p50, d.p99, d.max, d.n, static_cast<long long>(errors.load()));
  return errors.load() == 0 ? 0 : 1;
}

}  // namespace
}  // namespace chronoq

int main(int argc, char** argv) { return chronoq::Main(argc, argv); }
