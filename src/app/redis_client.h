// A blocking Redis client for the commands that work on a Redis directly (import-camellia,
// redis-migrate): connects as `chronoq serve --redis-url` does (standalone, Sentinel or Cluster,
// user and password from the URL) and runs commands, waiting for their replies. In app/ because
// the client commands that need Redis live here.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/result.h"
#include "base/status.h"
#include "redis/command_sink.h"
#include "redis/connection.h"
#include "redis/event_loop.h"
#include "redis/redis_url.h"

namespace chronoq::app {

class RedisClient {
 public:
  explicit RedisClient(const redis::RedisUrl& url);
  // Why the client could not be made (a Cluster none of whose seeds answered); OK otherwise.
  const Status& error() const { return error_; }
  // Where commands go (routed by key on a Cluster). REQUIRES: error() is OK.
  redis::CommandSink& sink() { return *sink_; }

  // Runs every command (key, args) and answers their replies in order; the first failure (no
  // connection, an error reply) fails the whole.
  Result<std::vector<redis::RedisReply>> Run(
      std::vector<std::pair<std::string, std::vector<std::string>>> cmds);
  Result<redis::RedisReply> One(std::string key, std::vector<std::string> args);

 private:
  // Declared first: destroyed last, after the connections that run on it.
  redis::EventLoop loop_;
  std::unique_ptr<redis::RedisConnection> conn_;
  std::unique_ptr<redis::CommandSink> sink_;
  Status error_;
};

}  // namespace chronoq::app
