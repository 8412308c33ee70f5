// Real Redis deployments on loopback for the Redis backend's tests: redis-server processes (and
// sentinels) started as children of the test, each deployment in its own TempDir with its config
// files and logs, on ports chosen free at start.
//
//   RedisStandalone redis;
//   RedisOptions options;
//   options.password = "pw";
//   options.appendonly = true;
//   options.appendfsync = "always";
//   Status s = redis.Start(options);
//   ASSERT_TRUE(s.ok()) << s.message();          // names the failure, quotes the redis log
//   std::string url = redis.url();               // redis://:pw@127.0.0.1:PORT
//   Result<RedisConn> c = RedisConn::Connect(redis.port(), "pw");
//   Result<RedisReply> r = c->Command({"SET", "k", "v"});
//
//   RedisCluster cluster;          // three masters, slots spread by `redis-cli --cluster create`
//   RedisSentinelSet sentinels;    // master, replica and three sentinels ("mymaster", quorum 2)
//   sentinels.KillMaster();
//   Result<uint16_t> promoted = sentinels.WaitForFailover(std::chrono::seconds(15));
//
// The binaries are $CQ_REDIS_SERVER and $CQ_REDIS_CLI when set, else redis-server and redis-cli
// found on PATH. Sentinels run as `redis-server <conf> --sentinel`. Every wait is bounded; the
// destructors SIGKILL and reap what still runs, and children die with the test (PDEATHSIG).
//
// Thread-safety: a deployment or a RedisConn is used by one thread.
#pragma once

#include <gtest/gtest.h>
#include <sys/types.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "base/status.h"
#include "tests/testutil/temp_dir.h"

namespace chronoq::testutil {

// One deployment of each kind per test process, started when first needed and deleted when the
// process exits (a static's destructor: the processes are killed, then their TempDir removed).
// A forked child that exits through exit() leaves it alone: only the process that started it
// deletes it. A start that fails fails the test that asked first.
template <typename Deployment>
Deployment* SharedDeployment() {
  struct Owned {
    pid_t owner = ::getpid();
    std::unique_ptr<Deployment> d = std::make_unique<Deployment>();
    Owned() {
      Status s = d->Start();
      if (!s.ok()) ADD_FAILURE() << "cannot start the redis deployment: " << s.ToString();
    }
    ~Owned() {
      if (::getpid() != owner) (void)d.release();  // a forked child's exit()
    }
  };
  static Owned owned;
  return owned.d.get();
}

// Paths of the Redis binaries (see above); empty when not found.
std::string RedisServerPath();
std::string RedisCliPath();

// A port free on 127.0.0.1, below 55000, whose cluster bus port (+10000) is free too, found by
// binding to port 0. Never the same port twice in one process. 0 when none was found.
uint16_t PickFreeRedisPort();

// One reply of a Redis server.
struct RedisReply {
  enum class Type { kNil, kString, kStatus, kError, kInteger, kArray };
  Type type = Type::kNil;
  std::string str;  // kString, kStatus, kError
  int64_t integer = 0;
  std::vector<RedisReply> elements;  // kArray

  bool is_error() const { return type == Type::kError; }
  bool is_nil() const { return type == Type::kNil; }
  // "OK", "\"v\"", "(error) NOAUTH ...", "[...]": for failure messages.
  std::string ToString() const;
};

// A blocking connection to 127.0.0.1:port (hiredis inside). Move-only.
class RedisConn {
 public:
  RedisConn();
  ~RedisConn();
  RedisConn(RedisConn&&) noexcept;
  RedisConn& operator=(RedisConn&&) noexcept;

  // Connects (and sends AUTH when `password` is not empty; a refused AUTH is an error).
  // `timeout` bounds the connect and every command: by default 10 s, the reply limit of the
  // in-process nodes too (redis_test_options.h), not what a test is about.
  static Result<RedisConn> Connect(uint16_t port, std::string_view password = {},
                                   std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // Runs one command. An error reply of Redis is a reply of type kError; the Result fails only
  // when the connection does (it is then unusable).
  Result<RedisReply> Command(const std::vector<std::string>& args);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Connect, AUTH when `password` is set, run one command.
Result<RedisReply> RedisCommandOnce(uint16_t port, const std::vector<std::string>& args,
                                    std::string_view password = {});

// Runs `redis-cli <args...>` to completion (killed after `timeout`). The value is its stdout when
// it exits 0; the error quotes its stdout and stderr otherwise.
Result<std::string> RunRedisCli(const std::vector<std::string>& args,
                                std::chrono::milliseconds timeout = std::chrono::seconds(15));

// How the data nodes of a deployment are configured.
struct RedisOptions {
  std::string password;                   // requirepass and masterauth when not empty
  bool appendonly = false;                // AOF on
  std::string appendfsync;                // with appendonly: "always", "everysec" or "no"
  std::vector<std::string> extra_config;  // more redis.conf lines, written last
  std::chrono::milliseconds timeout = std::chrono::seconds(15);  // bound on each Start's waits
};

// One redis-server process (a data node or a sentinel): <dir>/redis.conf, <dir>/redis.log.
class RedisNode {
 public:
  RedisNode() = default;
  ~RedisNode();  // SIGKILLs and reaps a running process
  RedisNode(const RedisNode&) = delete;
  RedisNode& operator=(const RedisNode&) = delete;

  // Writes the config (`config_lines` after the common ones: bind 127.0.0.1, port, dir, logfile)
  // in `dir` (created) and starts the process on a free port, retrying with other ports when
  // the bind fails. Waits (up to `timeout`) until it answers PING (after AUTH `password`).
  Status Start(const std::string& dir, const std::vector<std::string>& config_lines,
               const std::string& password, bool sentinel, std::chrono::milliseconds timeout);
  // Starts it again on the same port with the same directory and config file.
  Status Restart(std::chrono::milliseconds timeout = std::chrono::seconds(15));
  // SIGTERM, then waits up to `timeout` (SIGKILL after it). OK when it exited with status 0.
  Status Stop(std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // SIGKILL and reap.
  void Kill();

  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  uint16_t port() const { return port_; }
  const std::string& dir() const { return dir_; }
  // The last `lines` lines of the redis log, and what the process wrote to stdout/stderr.
  std::string LogTail(size_t lines = 30) const;

 private:
  // Starts the process on port_ and waits for it. *bind_failed tells the port was taken.
  Status Launch(std::chrono::milliseconds timeout, bool* bind_failed);
  Status WriteConfig() const;

  pid_t pid_ = -1;
  uint16_t port_ = 0;
  bool sentinel_ = false;
  std::string dir_;
  std::string password_;
  std::vector<std::string> config_lines_;
};

// One redis-server.
class RedisStandalone {
 public:
  Status Start(const RedisOptions& options = {});
  uint16_t port() const { return node_.port(); }
  // redis://[:password@]127.0.0.1:PORT
  std::string url() const;
  const std::string& password() const { return options_.password; }
  Status Stop() { return node_.Stop(); }
  void Kill() { node_.Kill(); }
  Status Restart() { return node_.Restart(options_.timeout); }
  RedisNode& node() { return node_; }

 private:
  RedisOptions options_;
  TempDir dir_;  // before node_: removed after the process is gone
  RedisNode node_;
};

// A Redis Cluster of three masters without replicas (cluster-node-timeout 3000).
class RedisCluster {
 public:
  static constexpr int kNodes = 3;
  // Starts the nodes, runs `redis-cli --cluster create` and waits until every node reports
  // cluster_state:ok.
  Status Start(const RedisOptions& options = {});
  // redis-cluster://[:password@]127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3
  std::string url() const;
  std::vector<uint16_t> ports() const;
  uint16_t port(int i) const { return nodes_[i].port(); }
  RedisNode& node(int i) { return nodes_[i]; }
  void KillNode(int i) { nodes_[i].Kill(); }
  // Runs a command on node `first` (a running one by default), following MOVED and ASK.
  Result<RedisReply> Command(const std::vector<std::string>& args, int first = -1);

 private:
  RedisOptions options_;
  TempDir dir_;
  RedisNode nodes_[kNodes];
};

// One master, one replica and three sentinels monitoring the master as "mymaster" with quorum 2
// (down-after-milliseconds 1000, failover-timeout 3000).
class RedisSentinelSet {
 public:
  static constexpr int kSentinels = 3;
  static constexpr std::string_view kMasterName = "mymaster";
  // Starts master and replica, waits for the replication link, starts the sentinels and waits
  // until each reports the master, knows the replica and the two other sentinels.
  Status Start(const RedisOptions& options = {});
  // redis-sentinel://[:password@]127.0.0.1:s1,127.0.0.1:s2,127.0.0.1:s3/mymaster
  std::string url() const;
  // The master as last known (the promoted replica after WaitForFailover).
  uint16_t master_port() const { return master_port_; }
  uint16_t replica_port() const { return replica_.port(); }
  std::vector<uint16_t> sentinel_ports() const;
  RedisNode& master() { return master_; }
  RedisNode& replica() { return replica_; }
  RedisNode& sentinel(int i) { return sentinels_[i]; }
  // SIGKILLs the current master process.
  void KillMaster();
  // Waits until every running sentinel reports the same master other than master_port() and
  // that node answers ROLE as a master; returns its port (and remembers it as master_port()).
  Result<uint16_t> WaitForFailover(std::chrono::milliseconds timeout = std::chrono::seconds(15));
  // What sentinel `i` reports as the master's port.
  Result<uint16_t> SentinelMasterPort(int i);

 private:
  RedisNode& NodeOnPort(uint16_t port) { return port == replica_.port() ? replica_ : master_; }

  RedisOptions options_;
  TempDir dir_;
  RedisNode master_;
  RedisNode replica_;
  RedisNode sentinels_[kSentinels];
  uint16_t master_port_ = 0;
};

}  // namespace chronoq::testutil
