// The pure state machine: status derivation and each legal move.
#include <benchmark/benchmark.h>

#include "core/state_machine.h"

namespace chronoq {
namespace {

const TimePoint kT0 = FromEpochMs(1'700'000'000'000);

core::MessageRecord Ready() {
  return core::CreateRecord(core::NewMessage{"topic", "0123456789abcdef0123456789abcdef", "",
                                             Millis(0), Millis(3'600'000), 10},
                            kT0, 1);
}

void BM_StatusAt(benchmark::State& state) {
  core::MessageRecord r = Ready();
  TimePoint now = kT0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(core::StatusAt(r, now));
    now += Millis(1);
  }
}
BENCHMARK(BM_StatusAt);

void BM_DeliverAckCycle(benchmark::State& state) {
  core::MessageRecord r = Ready();
  for (auto _ : state) {
    auto d = core::Apply(r, {core::EventKind::kDeliver, Millis(30'000)}, kT0);
    auto a = core::Apply(*d, {core::EventKind::kAck}, kT0 + Millis(5));
    benchmark::DoNotOptimize(a);
  }
  state.SetItemsProcessed(state.iterations() * 2);
}
BENCHMARK(BM_DeliverAckCycle);

void BM_IllegalMove(benchmark::State& state) {
  core::MessageRecord r = Ready();
  for (auto _ : state) {
    auto x = core::Apply(r, {core::EventKind::kNack}, kT0);  // READY cannot be nacked
    benchmark::DoNotOptimize(x);
  }
}
BENCHMARK(BM_IllegalMove);

}  // namespace
}  // namespace chronoq
