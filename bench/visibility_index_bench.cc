// The per-topic visibility index (engine::Topic): insert, pull from the head (deliver and
// re-key), ack, and advancing time across trigger times and bucket boundaries, at several sizes.
#include <benchmark/benchmark.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/state_machine.h"
#include "engine/topic.h"

namespace chronoq {
namespace {

const TimePoint kT0 = FromEpochMs(1'700'000'000'000);

core::MessageRecord Record(uint64_t i, Millis delay) {
  return core::CreateRecord(
      core::NewMessage{"t", "id-" + std::to_string(i), "", delay, Millis(3'600'000 * 24), 10}, kT0,
      i + 1);
}

// Fills a topic with n messages due over the next hour.
void Fill(engine::Topic& t, int64_t n, std::mt19937_64& rng) {
  for (int64_t i = 0; i < n; ++i) {
    t.Insert(Record(static_cast<uint64_t>(i), Millis(rng() % 3'600'000)), kT0);
  }
}

void BM_Insert(benchmark::State& state) {
  std::mt19937_64 rng(1);
  engine::Topic t("t", kT0);
  Fill(t, state.range(0), rng);
  uint64_t i = static_cast<uint64_t>(state.range(0));
  for (auto _ : state) {
    t.Insert(Record(i++, Millis(rng() % 3'600'000)), kT0);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Insert)->Arg(1'000)->Arg(100'000)->Arg(1'000'000);

// Deliver the head message, then ack it: the pull + ack cycle of a consumer.
void BM_DeliverAndAck(benchmark::State& state) {
  std::mt19937_64 rng(2);
  engine::Topic t("t", kT0);
  Fill(t, state.range(0), rng);
  TimePoint now = kT0 + Millis(3'600'000);  // everything is ready
  engine::AdvanceResult adv;
  t.AdvanceTo(now, &adv);
  uint64_t next = static_cast<uint64_t>(state.range(0));
  for (auto _ : state) {
    auto head = t.DueHead(now, 1, engine::Lane::kPull);
    if (head.empty()) {  // refill outside the measurement
      state.PauseTiming();
      for (int i = 0; i < 1000; ++i) t.Insert(Record(next++, Millis(0)), now);
      state.ResumeTiming();
      head = t.DueHead(now, 1, engine::Lane::kPull);
    }
    auto delivered = core::Apply(*head[0], {core::EventKind::kDeliver, Millis(30'000)}, now);
    auto acked = core::Apply(*delivered, {core::EventKind::kAck}, now);
    t.Update(std::move(delivered).value(), now);
    t.Update(std::move(acked).value(), now);  // ended: dropped (retention is the engine's)
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DeliverAndAck)->Arg(1'000)->Arg(100'000)->Arg(1'000'000);

// Advancing the clock 1 ms at a time over a topic whose messages fall due over the next second:
// the per-message cost of time passing (trigger counting and bucket moves).
void BM_AdvancePerMessage(benchmark::State& state) {
  const int64_t n = state.range(0);
  int64_t processed = 0;
  for (auto _ : state) {
    state.PauseTiming();
    std::mt19937_64 rng(3);
    auto t = std::make_unique<engine::Topic>("t", kT0);
    for (int64_t i = 0; i < n; ++i) {
      t->Insert(Record(static_cast<uint64_t>(i), Millis(1 + rng() % 1000)), kT0);
    }
    state.ResumeTiming();
    engine::AdvanceResult adv;
    for (int ms = 1; ms <= 1000; ++ms) t->AdvanceTo(kT0 + Millis(ms), &adv);
    processed += adv.triggered;
    state.PauseTiming();
    t.reset();  // tearing down a million records is not what is measured
    state.ResumeTiming();
  }
  state.SetItemsProcessed(processed);
}
BENCHMARK(BM_AdvancePerMessage)->Arg(10'000)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace chronoq
