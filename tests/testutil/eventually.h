// Eventually: polls a condition in real time until it holds or a generous limit passes. For
// tests that wait on asynchronous I/O (a move between nodes, a publication heard, a reload), where
// how long it takes is not what the test is about: the limit only stops a test that would hang,
// and is long enough for a sanitizer build on a loaded 2-core CI host (docs/testing.md). A test
// about a time limit measures it itself.
//
//   EXPECT_TRUE(testutil::Eventually([&] { return Raw({"EXISTS", key}) == 0; }));
#pragma once

#include <chrono>
#include <thread>

namespace chronoq::testutil {

inline constexpr std::chrono::seconds kEventuallyLimit{30};

// True as soon as `check()` returns true (checked every `every`); false when it still does not
// once `limit` has passed.
template <typename F>
bool Eventually(F check, std::chrono::milliseconds every = std::chrono::milliseconds(10),
                std::chrono::milliseconds limit = kEventuallyLimit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    if (check()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(every);
  }
}

}  // namespace chronoq::testutil
