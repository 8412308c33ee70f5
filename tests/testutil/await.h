// Await: runs an asynchronous call (one that takes a completion callback, as every QueueBackend
// operation does) and waits for its answer, which may come inline or on another thread. Tests
// only.
#pragma once

#include <future>
#include <utility>

namespace chronoq::testutil {

// `start` receives the callback to hand to the call; returns what it was called with.
template <typename T, typename Start>
T Await(Start start) {
  std::promise<T> p;
  std::future<T> f = p.get_future();
  start([&p](T value) { p.set_value(std::move(value)); });
  return f.get();
}

}  // namespace chronoq::testutil
