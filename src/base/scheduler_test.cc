#include "base/scheduler.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace chronoq::base {
namespace {

const TimePoint kT0 = FromEpochMs(1'700'000'000'000);

TimePoint At(int64_t ms) { return kT0 + Millis(ms); }

// ---- TimerQueue ----

TEST(TimerQueueTest, EmptyQueueHasNoDeadline) {
  TimerQueue q;
  EXPECT_EQ(q.NextDeadline(), kTimeMax);
  EXPECT_FALSE(static_cast<bool>(q.PopDue(kTimeMax)));
  EXPECT_EQ(q.size(), 0u);
}

TEST(TimerQueueTest, PopsInDeadlineOrderThenInsertionOrder) {
  TimerQueue q;
  std::vector<int> order;
  q.Add(At(30), [&] { order.push_back(3); });
  q.Add(At(10), [&] { order.push_back(1); });
  q.Add(At(20), [&] { order.push_back(21); });
  q.Add(At(20), [&] { order.push_back(22); });
  q.Add(At(20), [&] { order.push_back(23); });
  EXPECT_EQ(q.size(), 5u);
  EXPECT_EQ(q.NextDeadline(), At(10));
  while (auto fn = q.PopDue(At(100))) fn();
  EXPECT_EQ(order, (std::vector<int>{1, 21, 22, 23, 3}));
  EXPECT_EQ(q.size(), 0u);
}

TEST(TimerQueueTest, PopDueRespectsNow) {
  TimerQueue q;
  int ran = 0;
  q.Add(At(10), [&] { ++ran; });
  EXPECT_FALSE(static_cast<bool>(q.PopDue(At(9))));
  auto fn = q.PopDue(At(10));  // due exactly at its deadline
  ASSERT_TRUE(static_cast<bool>(fn));
  fn();
  EXPECT_EQ(ran, 1);
}

TEST(TimerQueueTest, CancelMiddleKeepsOrder) {
  TimerQueue q;
  std::vector<int> order;
  q.Add(At(1), [&] { order.push_back(1); });
  TimerId mid = q.Add(At(2), [&] { order.push_back(2); });
  q.Add(At(3), [&] { order.push_back(3); });
  EXPECT_TRUE(q.Cancel(mid));
  EXPECT_FALSE(q.Cancel(mid));  // already cancelled
  EXPECT_EQ(q.size(), 2u);
  while (auto fn = q.PopDue(At(10))) fn();
  EXPECT_EQ(order, (std::vector<int>{1, 3}));
}

TEST(TimerQueueTest, CancelHeadMovesNextDeadline) {
  TimerQueue q;
  TimerId head = q.Add(At(1), [] {});
  q.Add(At(5), [] {});
  EXPECT_TRUE(q.Cancel(head));
  EXPECT_EQ(q.NextDeadline(), At(5));
  EXPECT_FALSE(static_cast<bool>(q.PopDue(At(4))));
}

TEST(TimerQueueTest, CancelAfterPopFails) {
  TimerQueue q;
  TimerId id = q.Add(At(1), [] {});
  auto fn = q.PopDue(At(1));
  ASSERT_TRUE(static_cast<bool>(fn));
  EXPECT_FALSE(q.Cancel(id));
  EXPECT_FALSE(q.Cancel(12345));  // never issued
}

TEST(TimerQueueTest, IdsAreUnique) {
  TimerQueue q;
  TimerId a = q.Add(At(1), [] {});
  TimerId b = q.Add(At(1), [] {});
  EXPECT_NE(a, b);
  EXPECT_NE(a, 0u);  // 0 is free for "no timer"
  EXPECT_NE(b, 0u);
}

TEST(TimerQueueTest, DeadlinesAtTheLimitsWork) {
  TimerQueue q;
  int ran = 0;
  q.Add(kTimeMin, [&] { ++ran; });
  q.Add(kTimeMax, [&] { ++ran; });
  EXPECT_EQ(q.NextDeadline(), kTimeMin);
  while (auto fn = q.PopDue(kTimeMax)) fn();
  EXPECT_EQ(ran, 2);
}

// ---- ManualScheduler ----

TEST(ManualSchedulerTest, RunsNothingUntilAdvanced) {
  ManualClock clock(kT0);
  ManualScheduler s(&clock);
  int ran = 0;
  s.Schedule(At(10), [&] { ++ran; });
  EXPECT_EQ(s.pending(), 1u);
  clock.Advance(Millis(100));  // moving the clock alone fires nothing
  EXPECT_EQ(ran, 0);
  s.RunDue();
  EXPECT_EQ(ran, 1);
  EXPECT_EQ(s.pending(), 0u);
}

TEST(ManualSchedulerTest, FiresInTimeOrderWithClockAtDueTime) {
  ManualClock clock(kT0);
  ManualScheduler s(&clock);
  std::vector<std::pair<int, TimePoint>> seen;
  s.Schedule(At(30), [&] { seen.emplace_back(3, clock.Now()); });
  s.Schedule(At(10), [&] { seen.emplace_back(1, clock.Now()); });
  s.Schedule(At(20), [&] { seen.emplace_back(2, clock.Now()); });
  s.Schedule(At(20), [&] { seen.emplace_back(22, clock.Now()); });
  s.Advance(Millis(25));
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0], std::make_pair(1, At(10)));
  EXPECT_EQ(seen[1], std::make_pair(2, At(20)));
  EXPECT_EQ(seen[2], std::make_pair(22, At(20)));
  EXPECT_EQ(clock.Now(), At(25));
  s.Advance(Millis(5));
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen[3], std::make_pair(3, At(30)));
}

TEST(ManualSchedulerTest, FiresExactlyAtDeadlineNotBefore) {
  ManualClock clock(kT0);
  ManualScheduler s(&clock);
  int ran = 0;
  s.Schedule(At(10), [&] { ++ran; });
  s.AdvanceTo(At(9));
  EXPECT_EQ(ran, 0);
  s.AdvanceTo(At(10));
  EXPECT_EQ(ran, 1);
}

TEST(ManualSchedulerTest, PastDeadlineRunsAtOnceWithoutMovingClockBack) {
  ManualClock clock(kT0);
  ManualScheduler s(&clock);
  TimePoint seen{};
  s.Schedule(At(-50), [&] { seen = clock.Now(); });
  s.RunDue();
  EXPECT_EQ(seen, kT0);
  EXPECT_EQ(clock.Now(), kT0);
}

TEST(ManualSchedulerTest, AdvanceToThePastDoesNotMoveClockBack) {
  ManualClock clock(kT0);
  ManualScheduler s(&clock);
  s.AdvanceTo(At(-100));
  EXPECT_EQ(clock.Now(), kT0);
}

TEST(ManualSchedulerTest, CancelPreventsRun) {
  ManualClock clock(kT0);
  ManualScheduler s(&clock);
  int ran = 0;
  TimerId a = s.Schedule(At(1), [&] { ran += 1; });
  s.Schedule(At(2), [&] { ran += 10; });
  EXPECT_TRUE(s.Cancel(a));
  EXPECT_FALSE(s.Cancel(a));
  s.Advance(Millis(5));
  EXPECT_EQ(ran, 10);
  EXPECT_EQ(s.pending(), 0u);
}

TEST(ManualSchedulerTest, CancelOfRunTimerFails) {
  ManualClock clock(kT0);
  ManualScheduler s(&clock);
  TimerId a = s.Schedule(At(1), [] {});
  s.Advance(Millis(1));
  EXPECT_FALSE(s.Cancel(a));
}

TEST(ManualSchedulerTest, CallbackSchedulingMoreCallbacksRunsThemWhenDue) {
  ManualClock clock(kT0);
  ManualScheduler s(&clock);
  std::vector<TimePoint> fired;
  // A chain: each callback schedules the next one 10 ms later, five in all.
  std::function<void(int)> chain = [&](int left) {
    fired.push_back(clock.Now());
    if (left > 0) s.Schedule(clock.Now() + Millis(10), [&, left] { chain(left - 1); });
  };
  s.Schedule(At(10), [&] { chain(4); });
  s.Advance(Millis(35));
  EXPECT_EQ(fired, (std::vector<TimePoint>{At(10), At(20), At(30)}));
  EXPECT_EQ(s.pending(), 1u);
  s.Advance(Millis(100));
  EXPECT_EQ(fired.size(), 5u);
  EXPECT_EQ(fired.back(), At(50));
  EXPECT_EQ(s.pending(), 0u);
}

TEST(ManualSchedulerTest, CallbackSchedulingAtNowRunsInSameAdvance) {
  ManualClock clock(kT0);
  ManualScheduler s(&clock);
  std::vector<int> order;
  s.Schedule(At(10), [&] {
    order.push_back(1);
    s.Schedule(clock.Now(), [&] { order.push_back(2); });
    s.Schedule(At(5), [&] { order.push_back(3); });  // already past: runs at once too
  });
  s.Schedule(At(11), [&] { order.push_back(4); });
  s.Advance(Millis(20));
  EXPECT_EQ(order, (std::vector<int>{1, 3, 2, 4}));
}

TEST(ManualSchedulerTest, CallbackCancellingALaterOne) {
  ManualClock clock(kT0);
  ManualScheduler s(&clock);
  int ran = 0;
  TimerId later = s.Schedule(At(20), [&] { ran += 10; });
  s.Schedule(At(10), [&] {
    ran += 1;
    EXPECT_TRUE(s.Cancel(later));
  });
  s.Advance(Millis(30));
  EXPECT_EQ(ran, 1);
}

TEST(ManualSchedulerTest, AdvanceBySaturates) {
  ManualClock clock(kT0);
  ManualScheduler s(&clock);
  int ran = 0;
  s.Schedule(At(int64_t{1} << 50), [&] { ++ran; });
  s.Advance(Millis::max());  // must terminate, clock saturates
  EXPECT_EQ(ran, 1);
  EXPECT_EQ(clock.Now(), kTimeMax);
}

TEST(ManualSchedulerTest, AdvanceToTimeMaxOnEmptyQueueTerminates) {
  ManualClock clock(kT0);
  ManualScheduler s(&clock);
  s.AdvanceTo(kTimeMax);
  EXPECT_EQ(clock.Now(), kTimeMax);
}

TEST(ManualSchedulerTest, TimerAtTimeMaxRunsWhenAdvancedToIt) {
  ManualClock clock(kT0);
  ManualScheduler s(&clock);
  int ran = 0;
  s.Schedule(kTimeMax, [&] { ++ran; });
  s.Advance(Millis(1000));
  EXPECT_EQ(ran, 0);
  s.AdvanceTo(kTimeMax);
  EXPECT_EQ(ran, 1);
}

// ---- ManualClock ----

TEST(ManualClockTest, SetAndAdvance) {
  ManualClock clock(kT0);
  EXPECT_EQ(clock.Now(), kT0);
  clock.Advance(Millis(5));
  EXPECT_EQ(clock.Now(), At(5));
  clock.Set(At(-3));
  EXPECT_EQ(clock.Now(), At(-3));
}

TEST(SystemClockTest, IsNearRealTime) {
  auto real = std::chrono::floor<Millis>(std::chrono::system_clock::now());
  TimePoint now = SystemClock::Get()->Now();
  EXPECT_LE((now.time_since_epoch() - real.time_since_epoch()).count(), 1000);
  EXPECT_GE((now.time_since_epoch() - real.time_since_epoch()).count(), 0);
}

// ---- ThreadScheduler (real time: the waits here are tiny and bounded) ----

TEST(ThreadSchedulerTest, FiresTimerScheduledAboutNow) {
  ThreadScheduler s(SystemClock::Get());
  std::promise<void> fired;
  s.Schedule(SystemClock::Get()->Now(), [&] { fired.set_value(); });
  EXPECT_EQ(fired.get_future().wait_for(std::chrono::seconds(5)), std::future_status::ready);
}

TEST(ThreadSchedulerTest, FiresPastTimerAndInOrder) {
  ThreadScheduler s(SystemClock::Get());
  std::mutex mu;
  std::vector<int> order;
  std::promise<void> done;
  TimePoint now = SystemClock::Get()->Now();
  s.Schedule(now - Millis(10), [&] {
    std::lock_guard l(mu);
    order.push_back(1);
  });
  s.Schedule(now + Millis(2), [&] {
    std::lock_guard l(mu);
    order.push_back(2);
    done.set_value();
  });
  ASSERT_EQ(done.get_future().wait_for(std::chrono::seconds(5)), std::future_status::ready);
  std::lock_guard l(mu);
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
}

TEST(ThreadSchedulerTest, EarlierTimerWakesTheThread) {
  // The thread first sleeps towards a far deadline; a nearer one scheduled later must still fire.
  ThreadScheduler s(SystemClock::Get());
  std::atomic<bool> far_ran{false};
  s.Schedule(SystemClock::Get()->Now() + Millis(3'600'000), [&] { far_ran = true; });
  std::promise<void> fired;
  s.Schedule(SystemClock::Get()->Now() + Millis(1), [&] { fired.set_value(); });
  EXPECT_EQ(fired.get_future().wait_for(std::chrono::seconds(5)), std::future_status::ready);
  EXPECT_FALSE(far_ran.load());
}

TEST(ThreadSchedulerTest, CancelledTimerNeverRuns) {
  ThreadScheduler s(SystemClock::Get());
  std::atomic<int> ran{0};
  TimerId id = s.Schedule(SystemClock::Get()->Now() + Millis(3'600'000), [&] { ran += 1; });
  EXPECT_TRUE(s.Cancel(id));
  EXPECT_FALSE(s.Cancel(id));
  std::promise<void> fired;
  s.Schedule(SystemClock::Get()->Now(), [&] { fired.set_value(); });
  ASSERT_EQ(fired.get_future().wait_for(std::chrono::seconds(5)), std::future_status::ready);
  EXPECT_EQ(ran.load(), 0);
}

TEST(ThreadSchedulerTest, StopDropsPendingCallbacksAndIsIdempotent) {
  auto owned = std::make_shared<int>(0);
  std::weak_ptr<int> weak = owned;
  {
    ThreadScheduler s(SystemClock::Get());
    s.Schedule(SystemClock::Get()->Now() + Millis(3'600'000), [o = std::move(owned)] { ++*o; });
    s.Stop();
    s.Stop();
  }
  EXPECT_TRUE(weak.expired());  // the pending callback was destroyed, never run
}

TEST(ThreadSchedulerTest, CallbackMaySchedule) {
  ThreadScheduler s(SystemClock::Get());
  std::promise<void> second;
  s.Schedule(SystemClock::Get()->Now(),
             [&] { s.Schedule(SystemClock::Get()->Now(), [&] { second.set_value(); }); });
  EXPECT_EQ(second.get_future().wait_for(std::chrono::seconds(5)), std::future_status::ready);
}

}  // namespace
}  // namespace chronoq::base
