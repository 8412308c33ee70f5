#include "redis/connection.h"

#include <fmt/format.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>

#include <algorithm>
#include <deque>
#include <future>

#include "base/check.h"
#include "redis/hiredis_io.h"

namespace chronoq::redis {
namespace {

std::atomic<uint64_t> g_errors{0};
std::atomic<uint64_t> g_reconnects{0};

using Clock = EventLoop::Clock;

RedisReply Convert(const redisReply* r) {
  RedisReply out;
  switch (r->type) {
    case REDIS_REPLY_STRING:
      out.type = RedisReply::Type::kString;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_STATUS:
      out.type = RedisReply::Type::kStatus;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_ERROR:
      out.type = RedisReply::Type::kError;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_INTEGER:
      out.type = RedisReply::Type::kInteger;
      out.integer = r->integer;
      break;
    case REDIS_REPLY_ARRAY:
      out.type = RedisReply::Type::kArray;
      out.elements.reserve(r->elements);
      for (size_t i = 0; i < r->elements; ++i) out.elements.push_back(Convert(r->element[i]));
      break;
    default:
      out.type = RedisReply::Type::kNil;
      break;
  }
  return out;
}

}  // namespace

// Everything here runs on the loop thread.
struct RedisConnection::State {
  enum class Phase { kConnecting, kReady, kBackoff, kClosed };
  struct Pending {
    Done done;
    Clock::time_point deadline;
  };

  EventLoop* loop;
  ConnectionOptions options;
  std::atomic<bool>* ready;
  std::string where;  // "host:port", for messages

  Phase phase = Phase::kBackoff;
  bool connected_once = false;
  redisAsyncContext* ac = nullptr;
  std::unique_ptr<HiredisIo> io;
  std::deque<std::unique_ptr<Pending>> inflight;  // in send order, like the replies
  std::string fail_reason;                        // why the current context is being dropped
  std::string last_error = "not connected yet";
  std::chrono::milliseconds backoff{0};
  EventLoop::TimerId connect_timer = 0;
  EventLoop::TimerId command_timer = 0;
  EventLoop::TimerId reconnect_timer = 0;

  Status Unreachable() const {
    return Unavailable(fmt::format("redis {} is unreachable: {}", where, last_error));
  }

  void Connect() {
    reconnect_timer = 0;
    if (phase == Phase::kClosed) return;
    fail_reason.clear();
    RedisEndpoint target = options.endpoint;
    if (options.resolve) {
      Result<RedisEndpoint> found = options.resolve();
      if (!found.has_value()) {
        last_error = found.error().message();
        EnterBackoff();
        return;
      }
      target = *found;
      where = fmt::format("{}:{}", target.host, target.port);
    }
    redisAsyncContext* c = redisAsyncConnect(target.host.c_str(), target.port);
    if (c == nullptr || c->err != 0) {
      last_error = c != nullptr ? c->errstr : "out of memory";
      if (c != nullptr) redisAsyncFree(c);
      EnterBackoff();
      return;
    }
    ac = c;
    phase = Phase::kConnecting;
    c->data = this;
    io->Attach(c);
    redisAsyncSetConnectCallback(c, &OnConnect);
    redisAsyncSetDisconnectCallback(c, &OnDisconnect);
    connect_timer = loop->RunAt(Clock::now() + options.connect_timeout, [this] {
      connect_timer = 0;
      if (phase == Phase::kConnecting) {
        Drop(fmt::format("connect timed out after {} ms", options.connect_timeout.count()));
      }
    });
    // Log in first: hiredis writes these as soon as the socket connects.
    if (!options.password.empty()) {
      std::vector<std::string> auth = {"AUTH"};
      if (!options.username.empty()) auth.push_back(options.username);
      auth.push_back(options.password);
      Send(std::move(auth), LoginStep("AUTH"));
    }
    if (options.db != 0) Send({"SELECT", std::to_string(options.db)}, LoginStep("SELECT"));
  }

  Done LoginStep(std::string what) {
    return [this, what = std::move(what)](Result<RedisReply> r) {
      if (r.has_value() && r->is_error() && phase != Phase::kClosed) {
        Drop(fmt::format("{} refused: {}", what, r->str));
      }
    };
  }

  static State* Of(const void* p) { return static_cast<State*>(const_cast<void*>(p)); }

  static void OnConnect(const redisAsyncContext* c, int status) {
    State* s = Of(c->data);
    if (s->connect_timer != 0) s->loop->Cancel(s->connect_timer);
    s->connect_timer = 0;
    if (status != REDIS_OK) {
      // hiredis frees the context after this returns; pending commands see a null reply.
      s->fail_reason = c->errstr[0] != '\0' ? c->errstr : "connect failed";
      s->last_error = s->fail_reason;
      s->ac = nullptr;
      s->io->Detach();
      s->EnterBackoff();
      return;
    }
    s->phase = Phase::kReady;
    if (s->connected_once) g_reconnects.fetch_add(1, std::memory_order_relaxed);
    s->connected_once = true;
    s->backoff = std::chrono::milliseconds(0);
    s->ready->store(true);
  }

  static void OnDisconnect(const redisAsyncContext* c, int /*status*/) {
    State* s = Of(c->data);
    if (s->fail_reason.empty()) {
      s->fail_reason = c->err != 0 ? c->errstr : "connection closed by the server";
    }
    s->last_error = s->fail_reason;
    s->ac = nullptr;  // hiredis frees it after this returns
    s->io->Detach();
    s->EnterBackoff();
  }

  static void OnReply(redisAsyncContext* c, void* reply, void* privdata) {
    State* s = Of(c->data);
    auto* p = static_cast<Pending*>(privdata);
    CQ_CHECK(!s->inflight.empty() && s->inflight.front().get() == p, "redis replies out of order");
    std::unique_ptr<Pending> mine = std::move(s->inflight.front());
    s->inflight.pop_front();
    if (reply != nullptr) {
      RedisReply r = Convert(static_cast<redisReply*>(reply));
      if (r.error_kind() == "READONLY" && s->ac != nullptr) {
        s->Drop("the server is a replica now (READONLY): finding the master again");
      }
      mine->done(std::move(r));
    } else {
      std::string why = !s->fail_reason.empty() ? s->fail_reason
                        : c->err != 0           ? std::string(c->errstr)
                                                : std::string("connection closed");
      mine->done(Unavailable(fmt::format("redis {}: {}", s->where, why)));
    }
  }

  void Send(std::vector<std::string> args, Done done) {
    if (phase == Phase::kBackoff || phase == Phase::kClosed || ac == nullptr) {
      done(Unreachable());
      return;
    }
    std::vector<const char*> argv;
    std::vector<size_t> lens;
    argv.reserve(args.size());
    lens.reserve(args.size());
    for (const std::string& a : args) {
      argv.push_back(a.data());
      lens.push_back(a.size());
    }
    auto p =
        std::make_unique<Pending>(Pending{std::move(done), Clock::now() + options.command_timeout});
    Pending* raw = p.get();
    inflight.push_back(std::move(p));
    if (redisAsyncCommandArgv(ac, &OnReply, raw, static_cast<int>(argv.size()), argv.data(),
                              lens.data()) != REDIS_OK) {
      std::unique_ptr<Pending> mine = std::move(inflight.back());
      inflight.pop_back();
      mine->done(Unavailable(fmt::format("redis {}: cannot send: {}", where,
                                         ac != nullptr && ac->errstr[0] ? ac->errstr : "closing")));
      return;
    }
    ArmCommandTimer();
  }

  // One timer at a time, at the oldest pending command's deadline; when it fires early (that
  // command was answered) it moves on to the new oldest.
  void ArmCommandTimer() {
    if (command_timer != 0 || inflight.empty() || ac == nullptr) return;
    command_timer = loop->RunAt(inflight.front()->deadline, [this] {
      command_timer = 0;
      if (!inflight.empty() && inflight.front()->deadline <= Clock::now() && ac != nullptr) {
        Drop(fmt::format("no reply within {} ms", options.command_timeout.count()));
      } else {
        ArmCommandTimer();
      }
    });
  }

  // Closes the current context: every pending command fails with `why`.
  void Drop(std::string why) {
    if (ac == nullptr) return;
    fail_reason = std::move(why);
    last_error = fail_reason;
    redisAsyncContext* c = ac;
    const bool was_connected = phase == Phase::kReady;
    redisAsyncFree(c);  // pending callbacks run (null reply); OnDisconnect if it was connected
    if (!was_connected || ac != nullptr) {
      // Not connected yet (no OnDisconnect), or freed later because we are inside a callback.
      ac = nullptr;
      io->Detach();
      EnterBackoff();
    }
  }

  void EnterBackoff() {
    ready->store(false);
    if (connect_timer != 0) loop->Cancel(connect_timer);
    connect_timer = 0;
    if (command_timer != 0) loop->Cancel(command_timer);
    command_timer = 0;
    if (phase == Phase::kClosed) return;
    if (phase != Phase::kBackoff) g_errors.fetch_add(1, std::memory_order_relaxed);
    phase = Phase::kBackoff;
    if (reconnect_timer != 0) return;
    backoff = std::clamp(backoff * 2, options.reconnect_min, options.reconnect_max);
    reconnect_timer = loop->RunAt(Clock::now() + backoff, [this] { Connect(); });
  }

  void Close() {
    phase = Phase::kClosed;
    if (reconnect_timer != 0) loop->Cancel(reconnect_timer);
    reconnect_timer = 0;
    if (ac != nullptr) {
      fail_reason = "connection closed";
      redisAsyncContext* c = ac;
      ac = nullptr;
      redisAsyncFree(c);
    }
    if (connect_timer != 0) loop->Cancel(connect_timer);
    if (command_timer != 0) loop->Cancel(command_timer);
    connect_timer = command_timer = 0;
    ready->store(false);
  }
};

RedisConnection::RedisConnection(EventLoop* loop, ConnectionOptions options)
    : loop_(loop), options_(std::move(options)), state_(std::make_shared<State>()) {
  state_->loop = loop_;
  state_->io = std::make_unique<HiredisIo>(loop_);
  state_->options = options_;
  state_->ready = &ready_;
  state_->where = fmt::format("{}:{}", options_.endpoint.host, options_.endpoint.port);
  state_->phase = State::Phase::kConnecting;  // commands wait for the first connect's outcome
  loop_->Post([s = state_] { s->Connect(); });
}

RedisConnection::~RedisConnection() {
  CQ_CHECK(!loop_->InLoop(), "a RedisConnection must not be destroyed on its loop thread");
  std::promise<void> closed;
  loop_->Post([s = state_, &closed] {
    s->Close();
    closed.set_value();
  });
  closed.get_future().wait();
}

void RedisConnection::Command(std::vector<std::string> args, Done done) {
  loop_->Post([s = state_, args = std::move(args), done = std::move(done)]() mutable {
    s->Send(std::move(args), std::move(done));
  });
}

ConnectionCounts GlobalConnectionCounts() {
  return {g_errors.load(std::memory_order_relaxed), g_reconnects.load(std::memory_order_relaxed)};
}

}  // namespace chronoq::redis
