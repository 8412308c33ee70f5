#include "redis/subscriber.h"

#include <fmt/format.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>

#include <algorithm>
#include <future>

#include "base/check.h"
#include "base/log.h"
#include "redis/hiredis_io.h"

namespace chronoq::redis {

using Clock = EventLoop::Clock;

// Everything here runs on the loop thread.
struct RedisSubscriber::State {
  EventLoop* loop;
  ConnectionOptions options;
  std::string channel;
  UniqueFunction<void(std::string_view)> on_message;
  UniqueFunction<void()> on_subscribed;

  redisAsyncContext* ac = nullptr;
  std::unique_ptr<HiredisIo> io;
  bool closed = false;
  bool connected = false;
  std::chrono::milliseconds backoff{0};
  EventLoop::TimerId timer = 0;  // connect timeout or reconnect

  static State* Of(const void* p) { return static_cast<State*>(const_cast<void*>(p)); }

  void CancelTimer() {
    if (timer != 0) loop->Cancel(timer);
    timer = 0;
  }

  void Connect() {
    timer = 0;
    if (closed) return;
    RedisEndpoint target = options.endpoint;
    if (options.resolve) {
      Result<RedisEndpoint> found = options.resolve();
      if (!found.has_value()) {
        Retry();
        return;
      }
      target = *found;
    }
    redisAsyncContext* c = redisAsyncConnect(target.host.c_str(), target.port);
    if (c == nullptr || c->err != 0) {
      if (c != nullptr) redisAsyncFree(c);
      Retry();
      return;
    }
    ac = c;
    c->data = this;
    io->Attach(c);
    redisAsyncSetConnectCallback(c, &OnConnect);
    redisAsyncSetDisconnectCallback(c, &OnDisconnect);
    timer = loop->RunAt(Clock::now() + options.connect_timeout, [this] {
      timer = 0;
      if (ac != nullptr && !connected) Drop();
    });
    if (!options.password.empty()) {
      if (options.username.empty()) {
        redisAsyncCommand(c, &OnAuth, nullptr, "AUTH %b", options.password.data(),
                          options.password.size());
      } else {
        redisAsyncCommand(c, &OnAuth, nullptr, "AUTH %b %b", options.username.data(),
                          options.username.size(), options.password.data(),
                          options.password.size());
      }
    }
    redisAsyncCommand(c, &OnMessage, nullptr, "SUBSCRIBE %b", channel.data(), channel.size());
  }

  // Closes the context (not from inside a hiredis callback); a retry follows.
  void Drop() {
    redisAsyncContext* c = ac;
    const bool was_connected = connected;
    redisAsyncFree(c);  // OnDisconnect when it was connected
    if (!was_connected) {
      ac = nullptr;
      io->Detach();
      Retry();
    }
  }

  void Retry() {
    connected = false;
    CancelTimer();
    if (closed) return;
    backoff = std::clamp(backoff * 2, options.reconnect_min, options.reconnect_max);
    timer = loop->RunAt(Clock::now() + backoff, [this] { Connect(); });
  }

  static void OnConnect(const redisAsyncContext* c, int status) {
    State* s = Of(c->data);
    if (status != REDIS_OK) {
      s->ac = nullptr;  // hiredis frees it
      s->io->Detach();
      s->Retry();
      return;
    }
    s->connected = true;
    s->CancelTimer();
  }

  static void OnDisconnect(const redisAsyncContext* c, int /*status*/) {
    State* s = Of(c->data);
    s->ac = nullptr;  // hiredis frees it
    s->io->Detach();
    if (!s->closed) {
      CQ_LOG_WARN("cq.redis", "redis subscription to {} lost: {}; reconnecting", s->channel,
                  c->err != 0 ? c->errstr : "closed by the server");
    }
    s->Retry();
  }

  static void OnAuth(redisAsyncContext* c, void* reply, void*) {
    auto* r = static_cast<redisReply*>(reply);
    if (r != nullptr && r->type == REDIS_REPLY_ERROR) {
      CQ_LOG_WARN("cq.redis", "redis subscription: AUTH refused: {}", std::string(r->str, r->len));
      redisAsyncDisconnect(c);
    }
  }

  // Every reply of the subscription: ["subscribe", channel, n] once, then
  // ["message", channel, payload] for each publication.
  static void OnMessage(redisAsyncContext* c, void* reply, void*) {
    auto* r = static_cast<redisReply*>(reply);
    if (r == nullptr || c->data == nullptr) return;
    State* s = Of(c->data);
    if (r->type == REDIS_REPLY_ERROR) {
      CQ_LOG_WARN("cq.redis", "redis SUBSCRIBE refused: {}", std::string(r->str, r->len));
      redisAsyncDisconnect(c);
      return;
    }
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 3) return;
    std::string_view kind(r->element[0]->str, r->element[0]->len);
    if (kind == "subscribe") {
      s->backoff = std::chrono::milliseconds(0);
      if (s->on_subscribed) s->on_subscribed();
    } else if (kind == "message" && r->element[2]->type == REDIS_REPLY_STRING) {
      s->on_message(std::string_view(r->element[2]->str, r->element[2]->len));
    }
  }

  void Close() {
    closed = true;
    CancelTimer();
    if (ac != nullptr) {
      redisAsyncContext* c = ac;
      ac = nullptr;
      redisAsyncFree(c);
    }
  }
};

RedisSubscriber::RedisSubscriber(EventLoop* loop, ConnectionOptions options, std::string channel,
                                 UniqueFunction<void(std::string_view)> on_message,
                                 UniqueFunction<void()> on_subscribed)
    : loop_(loop), state_(std::make_shared<State>()) {
  state_->loop = loop;
  state_->io = std::make_unique<HiredisIo>(loop);
  state_->options = std::move(options);
  state_->channel = std::move(channel);
  state_->on_message = std::move(on_message);
  state_->on_subscribed = std::move(on_subscribed);
  loop_->Post([s = state_] { s->Connect(); });
}

RedisSubscriber::~RedisSubscriber() {
  CQ_CHECK(!loop_->InLoop(), "a RedisSubscriber must not be destroyed on its loop thread");
  std::promise<void> closed;
  loop_->Post([s = state_, &closed] {
    s->Close();
    closed.set_value();
  });
  closed.get_future().wait();
}

}  // namespace chronoq::redis
