// The timer structure behind every deadline (base::TimerQueue, used by both Schedulers):
// schedule, cancel and expire at several queue sizes.
#include <benchmark/benchmark.h>

#include <random>

#include "base/scheduler.h"

namespace chronoq {
namespace {

const TimePoint kT0 = FromEpochMs(1'700'000'000'000);

void BM_Schedule(benchmark::State& state) {
  std::mt19937_64 rng(1);
  base::TimerQueue q;
  for (int64_t i = 0; i < state.range(0); ++i) q.Add(kT0 + Millis(rng() % 3'600'000), [] {});
  for (auto _ : state) {
    base::TimerId id = q.Add(kT0 + Millis(rng() % 3'600'000), [] {});
    benchmark::DoNotOptimize(id);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Schedule)->Arg(1'000)->Arg(100'000)->Arg(1'000'000);

// Churn: schedule one timer and expire the earliest, keeping the size constant.
void BM_ScheduleAndExpire(benchmark::State& state) {
  std::mt19937_64 rng(2);
  base::TimerQueue q;
  for (int64_t i = 0; i < state.range(0); ++i) q.Add(kT0 + Millis(rng() % 3'600'000), [] {});
  for (auto _ : state) {
    TimePoint next = q.NextDeadline();
    q.Add(next + Millis(rng() % 3'600'000), [] {});
    auto fn = q.PopDue(next);
    fn();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ScheduleAndExpire)->Arg(1'000)->Arg(100'000)->Arg(1'000'000);

void BM_ScheduleAndCancel(benchmark::State& state) {
  std::mt19937_64 rng(3);
  base::TimerQueue q;
  for (int64_t i = 0; i < state.range(0); ++i) q.Add(kT0 + Millis(rng() % 3'600'000), [] {});
  for (auto _ : state) {
    base::TimerId id = q.Add(kT0 + Millis(rng() % 3'600'000), [] {});
    q.Cancel(id);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ScheduleAndCancel)->Arg(1'000)->Arg(100'000);

}  // namespace
}  // namespace chronoq
