// Answer<T>: the reply of one Engine operation (engine.h), given once its writes are durable.
// The operation sets the value under its topic's lock; the store's durability callback (or the
// operation itself, when the outcome is known at once) finishes it. T is Status or Result<U>; both
// are constructible from an error Status, which replaces the value when the write failed.
//
// Thread-safety: Set before handing OnDurable to the store; Finish runs once, on any thread.
#pragma once

#include <memory>
#include <optional>
#include <utility>

#include "backend/queue_backend.h"
#include "base/status.h"
#include "base/unique_function.h"

namespace chronoq::engine {

template <typename T>
class Answer {
 public:
  explicit Answer(backend::Callback<T> done) : state_(std::make_shared<State>(std::move(done))) {}
  // Sets the value, constructed in place from `v` (a T, or what T is made from: no move of a T).
  template <typename U>
  void Set(U&& v) {
    state_->value.emplace(std::forward<U>(v));
  }
  const T& value() const { return *state_->value; }
  // For the store: called once the batch is durable (or failed).
  UniqueFunction<void(Status)> OnDurable() {
    return [s = state_](Status st) { s->Finish(std::move(st)); };
  }
  void Finish(Status st) { state_->Finish(std::move(st)); }

 private:
  struct State {
    explicit State(backend::Callback<T> d) : done(std::move(d)) {}
    void Finish(Status st) {
      if (st.ok()) {
        done(std::move(*value));
      } else {
        done(T(std::move(st)));
      }
    }
    backend::Callback<T> done;
    std::optional<T> value;
  };
  std::shared_ptr<State> state_;
};

}  // namespace chronoq::engine
