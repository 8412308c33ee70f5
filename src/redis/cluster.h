// RedisClusterClient: a CommandSink over a Redis Cluster. It loads the slot map (CLUSTER SLOTS)
// from the seed nodes, keeps one RedisConnection per master, sends each command to the master
// of its key's hash slot (the hash tag "{...}" when there is one, as Redis does), follows MOVED
// (correcting that slot in the map at once) and ASK (ASKING, once). After a MOVED or a failed
// command (a master died; the cluster promotes a replica) it reloads the whole map in the
// background from any node that answers, at most once per second.
//
// Thread-safety: all methods from any thread; replies arrive on the loop thread.
#pragma once

#include <array>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "redis/command_sink.h"
#include "redis/connection.h"
#include "redis/event_loop.h"

namespace chronoq::redis {

// The cluster hash slot (0..16383) of a key.
int HashSlot(std::string_view key);

class RedisClusterClient final : public CommandSink {
 public:
  // `base` gives the login and timeouts of every node connection; `seeds` the nodes to ask for
  // the slot map. Loads the map before returning (fails when no seed answers).
  static Result<std::unique_ptr<RedisClusterClient>> Connect(EventLoop* loop,
                                                             ConnectionOptions base,
                                                             std::vector<RedisEndpoint> seeds);
  ~RedisClusterClient() override;

  void Command(std::string_view key, std::vector<std::string> args, Done done) override;
  void Flush(UniqueFunction<void()> done) override;

 private:
  RedisClusterClient(EventLoop* loop, ConnectionOptions base, std::vector<RedisEndpoint> seeds);
  Status LoadSlots();
  // Stores a CLUSTER SLOTS reply (`asked_host` stands for an empty host). REQUIRES: mu_.
  void ApplySlots(const RedisReply& r, const std::string& asked_host);
  // The background reload (see above).
  void RefreshSlots();
  void AskSlots(std::vector<RedisEndpoint> nodes, size_t i);
  RedisConnection* NodeFor(int slot);  // the connection of the slot's master (a seed if unknown)
  RedisConnection* Node(const std::string& host, int port);
  void Send(int slot, std::vector<std::string> args, Done done, int redirects);

  EventLoop* const loop_;
  const ConnectionOptions base_;
  const std::vector<RedisEndpoint> seeds_;
  std::mutex mu_;
  std::map<std::string, std::unique_ptr<RedisConnection>> nodes_;  // "host:port"; guarded by mu_
  std::array<std::string, 16384> slots_;                           // guarded by mu_
  bool refreshing_ = false;                                        // guarded by mu_
  bool closing_ = false;                                           // guarded by mu_
  std::chrono::steady_clock::time_point last_refresh_{};           // guarded by mu_
};

}  // namespace chronoq::redis
