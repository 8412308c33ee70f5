// RedisConnection: one pipelined connection to one Redis server, on an EventLoop. Commands are
// sent at once (replies come back in order); the connection logs in (AUTH, SELECT) by itself,
// reconnects with backoff after a failure, and never lets a caller wait past its bounds:
//   - while the server cannot be reached, commands fail at once with kUnavailable and the
//     reason (after the first failure; during the first connect they wait for its outcome);
//   - a connect that takes longer than connect_timeout fails;
//   - a command without a reply after command_timeout fails, and with it the connection (RESP
//     replies come in order, so every later command would wait behind it): the connection is
//     closed, every pending command fails, and a new connection is made.
// A Redis error reply (e.g. "MOVED ...") is a reply, not a failure; a READONLY reply (the server
// became a replica after a failover) also closes the connection, so that the next one asks
// `resolve` for the new master.
//
// Thread-safety: Command() from any thread; `done` runs on the loop thread. Lifecycle: the
// destructor (any thread but the loop's) fails what is pending and closes the connection.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/result.h"
#include "base/unique_function.h"
#include "redis/event_loop.h"
#include "redis/redis_url.h"
#include "redis/reply.h"

namespace chronoq::redis {

struct ConnectionOptions {
  RedisEndpoint endpoint;
  // When set, asked for the address at each (re)connect instead of `endpoint` (Sentinel). It
  // runs on the loop thread and may block briefly.
  std::function<Result<RedisEndpoint>()> resolve;
  std::string username;  // AUTH username password (Redis 6 ACL) when set
  std::string password;  // AUTH password when set
  int db = 0;            // SELECT db when not 0
  std::chrono::milliseconds connect_timeout{1000};
  std::chrono::milliseconds command_timeout{1000};
  std::chrono::milliseconds reconnect_min{50};
  std::chrono::milliseconds reconnect_max{1000};
};

class RedisConnection {
 public:
  using Done = UniqueFunction<void(Result<RedisReply>)>;

  // Starts connecting at once.
  RedisConnection(EventLoop* loop, ConnectionOptions options);
  ~RedisConnection();
  RedisConnection(const RedisConnection&) = delete;
  RedisConnection& operator=(const RedisConnection&) = delete;

  void Command(std::vector<std::string> args, Done done);

  // Connected and logged in, as of the last event.
  bool ready() const { return ready_.load(); }
  const ConnectionOptions& options() const { return options_; }

  struct State;  // loop-thread state (connection.cc)

 private:
  EventLoop* const loop_;
  const ConnectionOptions options_;
  std::atomic<bool> ready_{false};
  std::shared_ptr<State> state_;
};

// Counts over every RedisConnection of the process (metrics; the subscriber's connection too).
struct ConnectionCounts {
  uint64_t errors = 0;      // failures: connect failed or timed out, connection lost, a command
                            // timed out, READONLY; each leads to a reconnect attempt
  uint64_t reconnects = 0;  // successful connects after the connection's first one
};
ConnectionCounts GlobalConnectionCounts();

}  // namespace chronoq::redis
