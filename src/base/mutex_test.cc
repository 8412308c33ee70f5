#include "base/mutex.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "base/time.h"

namespace chronoq::base {
namespace {

TEST(MutexTest, MutexLockHoldsForItsScopeAndMayLetGoWithin) {
  Mutex mu;
  {
    MutexLock lock(mu);
    std::thread([&mu] { EXPECT_FALSE(mu.TryLock()); }).join();
    lock.Unlock();
    std::thread([&mu] {
      ASSERT_TRUE(mu.TryLock());
      mu.Unlock();
    }).join();
    lock.Lock();
    std::thread([&mu] { EXPECT_FALSE(mu.TryLock()); }).join();
  }
  ASSERT_TRUE(mu.TryLock());  // released at the end of the scope
  mu.Unlock();
}

TEST(MutexTest, AnUnlockedScopeDoesNotUnlockAgain) {
  AdaptiveMutex mu;
  {
    MutexLock lock(mu);
    lock.Unlock();
    mu.Lock();  // someone else's hold, which the scope's end must leave alone
  }
  std::thread([&mu] { EXPECT_FALSE(mu.TryLock()); }).join();
  mu.Unlock();
}

TEST(CondVarTest, TimedWaitsReturnFalseOncePastTheDeadline) {
  Mutex mu;
  CondVar cv;
  MutexLock lock(mu);
  EXPECT_FALSE(cv.WaitFor(mu, std::chrono::milliseconds(0)));
  EXPECT_FALSE(cv.WaitUntil(mu, std::chrono::steady_clock::now()));
  EXPECT_FALSE(cv.WaitUntil(mu, std::chrono::system_clock::now() - std::chrono::hours(1)));
  EXPECT_FALSE(cv.WaitUntil(mu, FromEpochMs(0)));
}

// A millisecond deadline beyond what nanoseconds since 1970 can hold (year 2262) waits; it must
// not wrap around to the past and return at once.
TEST(CondVarTest, AFarDeadlineWaitsUntilSignalled) {
  Mutex mu;
  CondVar cv;
  bool ready = false;
  std::thread signaller;
  {
    MutexLock lock(mu);
    // Started with the lock held: it signals only once this thread waits.
    signaller = std::thread([&] {
      MutexLock lock(mu);
      ready = true;
      cv.Signal();
    });
    const TimePoint far = FromEpochMs(int64_t{1} << 60);  // tens of millions of years
    while (!ready) EXPECT_TRUE(cv.WaitUntil(mu, far));
  }
  signaller.join();
}

}  // namespace
}  // namespace chronoq::base
