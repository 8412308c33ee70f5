// CommandSink: where the Redis backend sends its commands: one server (SingleServer) or a Redis
// Cluster (cluster.h), which routes each command by the hash slot of its key.
#pragma once

#include <string_view>
#include <vector>

#include "redis/connection.h"

namespace chronoq::redis {

class CommandSink {
 public:
  using Done = RedisConnection::Done;
  virtual ~CommandSink() = default;
  // Sends `args` to the server that owns `key` (a key of the command, or one with the same hash
  // tag); an empty key: any server.
  virtual void Command(std::string_view key, std::vector<std::string> args, Done done) = 0;
  // `done` runs once every command sent so far, to every server, has been answered.
  virtual void Flush(UniqueFunction<void()> done) = 0;
};

// Every command to one connection (standalone Redis, or the master a Sentinel names).
class SingleServer final : public CommandSink {
 public:
  explicit SingleServer(RedisConnection* conn) : conn_(conn) {}
  void Command(std::string_view, std::vector<std::string> args, Done done) override {
    conn_->Command(std::move(args), std::move(done));
  }
  void Flush(UniqueFunction<void()> done) override {
    conn_->Command({"PING"}, [done = std::move(done)](Result<RedisReply>) mutable { done(); });
  }

 private:
  RedisConnection* const conn_;
};

}  // namespace chronoq::redis
