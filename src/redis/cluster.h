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
#include <string>
#include <vector>

#include "base/mutex.h"
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

  void Command(std::string_view key, std::vector<std::string> args, Done done) override
      CQ_EXCLUDES(mu_);
  void Flush(UniqueFunction<void()> done) override CQ_EXCLUDES(mu_);

 private:
  RedisClusterClient(EventLoop* loop, ConnectionOptions base, std::vector<RedisEndpoint> seeds);
  Status LoadSlots() CQ_EXCLUDES(mu_);
  // Stores a CLUSTER SLOTS reply (`asked_host` stands for an empty host).
  void ApplySlots(const RedisReply& r, const std::string& asked_host) CQ_REQUIRES(mu_);
  // The background reload (see above).
  void RefreshSlots() CQ_EXCLUDES(mu_);
  void AskSlots(std::vector<RedisEndpoint> nodes, size_t i) CQ_EXCLUDES(mu_);
  // The connection of the slot's master (a seed if unknown). Connections live as long as this
  // client (nodes_ only grows), so the pointer stays valid after mu_ is released.
  RedisConnection* NodeFor(int slot) CQ_EXCLUDES(mu_);
  // The connection to host:port, made on first use.
  RedisConnection* Node(const std::string& host, int port) CQ_REQUIRES(mu_);
  void Send(int slot, std::vector<std::string> args, Done done, int redirects) CQ_EXCLUDES(mu_);

  EventLoop* const loop_;
  const ConnectionOptions base_;
  const std::vector<RedisEndpoint> seeds_;
  base::Mutex mu_;
  std::map<std::string, std::unique_ptr<RedisConnection>> nodes_ CQ_GUARDED_BY(mu_);  // host:port
  std::array<std::string, 16384> slots_ CQ_GUARDED_BY(mu_);
  bool refreshing_ CQ_GUARDED_BY(mu_) = false;
  bool closing_ CQ_GUARDED_BY(mu_) = false;
  std::chrono::steady_clock::time_point last_refresh_ CQ_GUARDED_BY(mu_){};
};

}  // namespace chronoq::redis
