// The fixture of the crash tests with two real chronoq nodes on one Redis deployment
// (redis_dead_letter_crash_test.cc, redis_format4_crash_test.cc): a redis-server, or a 3-master
// Redis Cluster when the parameter is true, and two nodes started with the test's flags whose test
// clocks are kept together across restarts.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "tests/testutil/redis_servers.h"
#include "tests/testutil/server_harness.h"

namespace chronoq::testutil {

class TwoRedisNodesTest : public ::testing::TestWithParam<bool> {  // param: on a cluster
 protected:
  // Starts the deployment, then both nodes.
  void SetUp() override {
    Status s = GetParam() ? cluster_.Start() : redis_.Start();
    ASSERT_TRUE(s.ok()) << s.ToString();
    for (int i = 0; i < 2; ++i) {
      StartNode(i);
      if (HasFatalFailure()) return;
    }
  }

  // The nodes' flags (RedisUrl() for --redis-url).
  virtual std::vector<std::string> Flags() const = 0;
  // Node i is up at `ep`, or down (nullopt): where the test's load finds it.
  virtual void NodeMoved(int i, std::optional<client::Endpoint> ep) = 0;

  std::string RedisUrl() const { return GetParam() ? cluster_.url() : redis_.url(); }
  // A command on the deployment (following MOVED on the cluster).
  Result<RedisReply> Redis(const std::vector<std::string>& cmd) {
    return GetParam() ? cluster_.Command(cmd) : RedisCommandOnce(redis_.port(), cmd);
  }

  // Starts node i (again) with its clock set to the other node's, then tells NodeMoved.
  void StartNode(int i) {
    Status s = nodes_[i].Start(Flags(), std::chrono::seconds(20));
    ASSERT_TRUE(s.ok()) << s.ToString();
    const ServerProcess& other = nodes_[1 - i];
    if (other.running()) {
      ApiClient me(nodes_[i].endpoint());
      ApiClient them(other.endpoint());
      const int64_t mine = me.Now();
      const int64_t theirs = them.Now();
      if (mine < theirs) me.AdvanceClock(theirs - mine);
    }
    NodeMoved(i, nodes_[i].endpoint());
  }
  // Tells NodeMoved, then kills node i (SIGKILL).
  void KillNode(int i) {
    NodeMoved(i, std::nullopt);
    nodes_[i].Kill();
  }

  RedisStandalone redis_;
  RedisCluster cluster_;
  ServerProcess nodes_[2];
};

}  // namespace chronoq::testutil
