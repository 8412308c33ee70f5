// listMsg over a large backlog (docs/benchmarks.md, "listMsg"): fills an embedded (RocksDB) store
// with N waiting messages through the engine (SendBatch, big batches, not over HTTP), reopens it
// as a restarted server would, and times Engine::List pages: the first page, the 1,000th page of
// a cursor walk, and pages seeked directly deep into the backlog (a cursor made for a far
// position). Then the same for a store of a few messages, for comparison.
//
//   listmsg_bench [--dir=/tmp/chronoq-listmsg] [--messages=10000000] [--small=10] [--limit=100]
//                 [--walk=1000] [--batch=1000] [--payload=64] [--reuse]
//
// --reuse skips the fill when the directory already holds a store this program filled with the
// same message count (to re-time without refilling). Prints one line per figure.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/log.h"
#include "base/scheduler.h"
#include "engine/engine.h"
#include "engine/list_cursor.h"
#include "engine_store.h"
#include "storage/message_store.h"
#include "storage/rocksdb/rocks_kv.h"

namespace chronoq {
namespace {

namespace fs = std::filesystem;
using Clock = benchutil::SteadyClock;
using benchutil::Median;
using benchutil::Ms;
using benchutil::ParseFlag;

struct Flags {
  std::string dir = "/tmp/chronoq-listmsg";
  int64_t messages = 10'000'000;
  int64_t small = 10;
  int32_t limit = 100;
  int walk = 1000;
  int batch = 1000;
  size_t payload = 64;
  bool reuse = false;
};

// The first message triggers two hours after the fill starts; the message i triggers i / 100 ms
// later (100 messages per millisecond), so that 10M messages span about 28 hours.
TimePoint TriggerOf(TimePoint base, int64_t i) { return base + Millis(7'200'000 + i / 100); }

Result<backend::ListPage> ListSync(engine::Engine& e, backend::ListRequest req) {
  std::optional<Result<backend::ListPage>> out;
  e.List(std::move(req), [&](Result<backend::ListPage> r) { out.emplace(std::move(r)); });
  return std::move(*out);  // the engine answers List inline
}

// One timed page; exits on an error or a short page where a full one was expected.
double TimePage(engine::Engine& e, const std::string& topic, const Flags& f,
                const std::string& cursor, std::string* next, size_t want) {
  auto start = Clock::now();
  Result<backend::ListPage> p =
      ListSync(e, backend::ListRequest{topic, core::MsgStatus::kWaiting, f.limit, cursor});
  double ms = Ms(Clock::now() - start);
  if (!p.has_value() || p->messages.size() != want) {
    std::fprintf(stderr, "list: %s\n",
                 p.has_value() ? ("short page: " + std::to_string(p->messages.size())).c_str()
                               : p.error().ToString().c_str());
    std::exit(1);
  }
  if (next != nullptr) *next = p->next_cursor;
  return ms;
}

void Measure(const std::string& label, int64_t n, const Flags& f) {
  const std::string dir = f.dir + "-" + std::to_string(n);
  const std::string topic = "listed";
  const std::string stamp = dir + "/BENCH-FILLED";
  bool fill = true;
  TimePoint base = base::SystemClock::Get()->Now();
  if (f.reuse && fs::exists(stamp)) {
    std::ifstream in(stamp);
    int64_t base_ms = 0;
    in >> base_ms;
    base = FromEpochMs(base_ms);
    fill = false;
  } else {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  if (fill) {
    auto s = benchutil::EngineStore::Open(dir);
    benchutil::Fill(s->engine(), topic, n, f.batch, f.payload,
                    [base](int64_t i) { return TriggerOf(base, i); });
    s.reset();  // written and closed
    std::ofstream(stamp) << ToEpochMs(base) << "\n";
  }
  // A restarted server: the far messages are on disk only (counted, not held).
  auto s = benchutil::EngineStore::Open(dir);
  engine::Engine& e = s->engine();
  const engine::Engine::TierCounts tiers = e.TEST_Tiers(topic);
  std::printf(
      "%s: %lld waiting messages (%zu held in memory, %lld on disk only); reopened in %.0f ms\n",
      label.c_str(), static_cast<long long>(n), tiers.near, static_cast<long long>(tiers.far),
      s->recover_ms());
  const size_t full = static_cast<size_t>(std::min<int64_t>(f.limit, n));

  std::string next;
  const double first_cold = TimePage(e, topic, f, "", &next, full);
  std::vector<double> warm;
  for (int i = 0; i < 50; ++i) warm.push_back(TimePage(e, topic, f, "", nullptr, full));
  std::printf(
      "  first page (limit %d): %.3f ms the first time after the reopen, %.3f ms median of "
      "50\n",
      f.limit, first_cold, Median(warm));

  const int64_t pages = (n + f.limit - 1) / f.limit;
  if (pages >= f.walk) {
    std::vector<double> walk;
    std::string cursor = next;
    double last = 0;
    for (int page = 2; page <= f.walk; ++page) {
      last = TimePage(e, topic, f, cursor, &cursor, full);
      walk.push_back(last);
    }
    std::printf("  walking the cursor: page %d %.3f ms; pages 2..%d median %.3f ms, max %.3f ms\n",
                f.walk, last, f.walk, Median(walk), *std::max_element(walk.begin(), walk.end()));
  }
  // Direct seeks: cursors made for the positions of messages deep in the backlog.
  for (double frac : {0.5, 0.9, 0.999}) {
    const auto at = static_cast<int64_t>(static_cast<double>(n) * frac);
    if (at + f.limit > n || n < 1000) continue;
    engine::ListCursor c;
    c.status = core::MsgStatus::kWaiting;
    c.at_start = false;
    c.t = TriggerOf(base, at);
    c.seq = 0;
    const std::string cursor = engine::EncodeListCursor(topic, c);
    const double cold = TimePage(e, topic, f, cursor, nullptr, full);
    std::vector<double> times;
    for (int i = 0; i < 20; ++i) times.push_back(TimePage(e, topic, f, cursor, nullptr, full));
    std::printf(
        "  page at message %lld (%.1f%% deep, seek by cursor): %.3f ms first, %.3f ms "
        "median of 20\n",
        static_cast<long long>(at), frac * 100, cold, Median(times));
  }
}

int Main(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    std::string v;
    if (a == "--reuse") {
      f.reuse = true;
    } else if (ParseFlag(a, "--dir", &v)) {
      f.dir = v;
    } else if (ParseFlag(a, "--messages", &v)) {
      f.messages = std::atoll(v.c_str());
    } else if (ParseFlag(a, "--small", &v)) {
      f.small = std::atoll(v.c_str());
    } else if (ParseFlag(a, "--limit", &v)) {
      f.limit = std::atoi(v.c_str());
    } else if (ParseFlag(a, "--walk", &v)) {
      f.walk = std::atoi(v.c_str());
    } else if (ParseFlag(a, "--batch", &v)) {
      f.batch = std::atoi(v.c_str());
    } else if (ParseFlag(a, "--payload", &v)) {
      f.payload = static_cast<size_t>(std::atoll(v.c_str()));
    } else {
      std::fprintf(stderr, "unknown argument %s (see the comment at the top of listmsg_bench.cc)\n",
                   argv[i]);
      return 2;
    }
  }
  base::InitLogging(base::LogLevel::kWarn, /*json=*/false);
  Measure("large store", f.messages, f);
  Measure("small store", f.small, f);
  return 0;
}

}  // namespace
}  // namespace chronoq

int main(int argc, char** argv) { return chronoq::Main(argc, argv); }
