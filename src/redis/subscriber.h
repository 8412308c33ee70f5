// RedisSubscriber: one connection in subscribe mode on one channel, on an EventLoop. It logs in,
// subscribes, hands every message to `on_message`, and after a lost connection reconnects with
// backoff and subscribes again; `on_subscribed` runs after each successful (re)subscription, so
// that the owner can catch up on what it may have missed meanwhile.
//
// Thread-safety: the handlers run on the loop thread. Lifecycle: the destructor (any thread but
// the loop's) closes the connection; no handler runs after it returns.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "base/unique_function.h"
#include "redis/connection.h"
#include "redis/event_loop.h"

namespace chronoq::redis {

class RedisSubscriber {
 public:
  RedisSubscriber(EventLoop* loop, ConnectionOptions options, std::string channel,
                  UniqueFunction<void(std::string_view)> on_message,
                  UniqueFunction<void()> on_subscribed);
  ~RedisSubscriber();
  RedisSubscriber(const RedisSubscriber&) = delete;
  RedisSubscriber& operator=(const RedisSubscriber&) = delete;

  struct State;

 private:
  EventLoop* const loop_;
  std::shared_ptr<State> state_;
};

}  // namespace chronoq::redis
