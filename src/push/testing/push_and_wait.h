// PushAndWait: one push, waited for, in tests. Header-only.
#pragma once

#include <chrono>
#include <future>
#include <memory>

#include "push/pusher.h"

namespace chronoq::push::testing {

// Pushes `call` and waits for its outcome. `bound` only keeps a broken test from hanging: past
// it, the outcome says so (ok=false).
inline PushOutcome PushAndWait(Pusher& pusher, PushCall call,
                               std::chrono::seconds bound = std::chrono::seconds(30)) {
  auto promise = std::make_shared<std::promise<PushOutcome>>();
  auto future = promise->get_future();
  pusher.Push(std::move(call), [promise](PushOutcome o) { promise->set_value(std::move(o)); });
  if (future.wait_for(bound) != std::future_status::ready) {
    PushOutcome none;
    none.error = "test: no outcome within the bound";
    return none;
  }
  return future.get();
}

}  // namespace chronoq::push::testing
