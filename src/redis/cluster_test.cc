#include "redis/cluster.h"

#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "redis/reply.h"
#include "tests/testutil/eventually.h"
#include "tests/testutil/redis_servers.h"

namespace chronoq::redis {
namespace {

// Values from `CLUSTER KEYSLOT` of redis-server 7.0.
TEST(HashSlotTest, MatchesRedis) {
  EXPECT_EQ(HashSlot("123456789"), 0x31C3 & 16383);  // the spec's CRC16 check value
  EXPECT_EQ(HashSlot("foo"), 12182);
  EXPECT_EQ(HashSlot("bar"), 5061);
}

TEST(HashSlotTest, TheHashTagDecides) {
  EXPECT_EQ(HashSlot("{user1000}.following"), HashSlot("{user1000}.followers"));
  EXPECT_EQ(HashSlot("cq:{ns:topic}:r:abc"), HashSlot("ns:topic"));
  // An empty tag "{}" does not count: the whole key is hashed.
  EXPECT_EQ(HashSlot("foo{}{bar}"), 8363);
  // Only the first tag counts: "{bar".
  EXPECT_EQ(HashSlot("foo{{bar}}zap"), 4015);
  EXPECT_EQ(HashSlot("{bar"), 4015);
}

// A real 3-master cluster (tests/testutil) with one slot migrated from its master to another
// while the client is in use: ASK during the migration, MOVED after it, then the background
// reload sends commands straight to the new owner.
class ClusterMigrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Status s = cluster_.Start();
    ASSERT_TRUE(s.ok()) << s.ToString();
    ConnectionOptions base;
    base.connect_timeout = std::chrono::milliseconds(500);
    base.command_timeout = std::chrono::milliseconds(1000);
    std::vector<RedisEndpoint> seeds;
    for (uint16_t p : cluster_.ports()) seeds.push_back(RedisEndpoint{"127.0.0.1", p});
    Result<std::unique_ptr<RedisClusterClient>> c =
        RedisClusterClient::Connect(&loop_, base, seeds);
    ASSERT_TRUE(c.has_value()) << c.error().ToString();
    client_ = std::move(c).value();
  }
  void TearDown() override { client_.reset(); }

  Result<RedisReply> Call(std::string_view key, std::vector<std::string> args) {
    std::promise<Result<RedisReply>> p;
    client_->Command(key, std::move(args),
                     [&p](Result<RedisReply> r) { p.set_value(std::move(r)); });
    return p.get_future().get();
  }
  // Runs a command on node i directly.
  testutil::RedisReply On(int i, const std::vector<std::string>& args) {
    Result<testutil::RedisReply> r = testutil::RedisCommandOnce(cluster_.port(i), args);
    EXPECT_TRUE(r.has_value()) << r.error().ToString();
    return r.has_value() ? *r : testutil::RedisReply{};
  }
  // The node owning `slot` (index), from node 0's view.
  int Owner(int slot) {
    testutil::RedisReply r = On(0, {"CLUSTER", "SLOTS"});
    for (const auto& range : r.elements) {
      if (range.elements[0].integer <= slot && slot <= range.elements[1].integer) {
        for (int i = 0; i < testutil::RedisCluster::kNodes; ++i) {
          if (range.elements[2].elements[1].integer == cluster_.port(i)) return i;
        }
      }
    }
    return -1;
  }
  // How often `command` reached node i (served or redirected).
  int64_t Calls(int node, std::string_view command) {
    testutil::RedisReply r = On(node, {"INFO", "commandstats"});
    // Commands answered MOVED or ASK count as rejected_calls.
    const std::string line = "cmdstat_" + std::string(command) + ":";
    size_t at = r.str.find(line);
    if (at == std::string::npos) return 0;
    int64_t n = 0;
    for (std::string_view field : {"calls=", "rejected_calls="}) {
      size_t f = r.str.find(field, at);
      if (f != std::string::npos) n += std::stoll(r.str.substr(f + field.size()));
    }
    return n;
  }

  testutil::RedisCluster cluster_;
  EventLoop loop_;
  std::unique_ptr<RedisClusterClient> client_;
};

TEST_F(ClusterMigrationTest, FollowsAskThenMovedThenReloadsTheMap) {
  const std::string kept = "{mig}kept", fresh = "{mig}fresh";
  const int slot = HashSlot(kept);
  const int from = Owner(slot);
  ASSERT_GE(from, 0);
  const int to = (from + 1) % testutil::RedisCluster::kNodes;
  ASSERT_EQ(Call(kept, {"SET", kept, "v1"})->str, "OK");
  const std::string from_id = On(from, {"CLUSTER", "MYID"}).str;
  const std::string to_id = On(to, {"CLUSTER", "MYID"}).str;
  const std::string s = std::to_string(slot);

  // Migrating: keys still on the old owner are served there; a new key is redirected by ASK.
  ASSERT_EQ(On(to, {"CLUSTER", "SETSLOT", s, "IMPORTING", from_id}).str, "OK");
  ASSERT_EQ(On(from, {"CLUSTER", "SETSLOT", s, "MIGRATING", to_id}).str, "OK");
  EXPECT_EQ(Call(kept, {"GET", kept})->str, "v1");
  Result<RedisReply> set = Call(fresh, {"SET", fresh, "v2"});
  ASSERT_TRUE(set.has_value()) << set.error().ToString();
  EXPECT_EQ(set->str, "OK");
  {  // the key went to the importing node
    Result<testutil::RedisConn> c = testutil::RedisConn::Connect(cluster_.port(to));
    ASSERT_TRUE(c.has_value());
    EXPECT_EQ(c->Command({"ASKING"})->str, "OK");
    EXPECT_EQ(c->Command({"EXISTS", fresh})->integer, 1);
  }

  // Migrated: the old owner answers MOVED; the client follows it and reloads the map.
  testutil::RedisReply m = On(from, {"MIGRATE", "127.0.0.1", std::to_string(cluster_.port(to)), "",
                                     "0", "5000", "KEYS", kept});
  ASSERT_EQ(m.str, "OK") << m.ToString();
  for (int i = 0; i < testutil::RedisCluster::kNodes; ++i) {
    ASSERT_EQ(On(i, {"CLUSTER", "SETSLOT", s, "NODE", to_id}).str, "OK");
  }
  // An empty slot of the same owner moves too: only a reload of the whole map can tell.
  std::string other;
  for (int n = 0; other.empty() && n < 1000; ++n) {
    std::string k = "{other" + std::to_string(n) + "}k";
    if (HashSlot(k) != slot && Owner(HashSlot(k)) == from) other = k;
  }
  ASSERT_FALSE(other.empty());
  for (int i = 0; i < testutil::RedisCluster::kNodes; ++i) {
    ASSERT_EQ(On(i, {"CLUSTER", "SETSLOT", std::to_string(HashSlot(other)), "NODE", to_id}).str,
              "OK");
  }
  int64_t reloads = 0;
  for (int i = 0; i < testutil::RedisCluster::kNodes; ++i) reloads += Calls(i, "cluster|slots");
  EXPECT_EQ(Call(kept, {"GET", kept})->str, "v1");  // MOVED: followed, and the map reloaded
  EXPECT_EQ(Call(fresh, {"GET", fresh})->str, "v2");
  EXPECT_TRUE(testutil::Eventually([&] {  // the reload is asynchronous I/O
    int64_t now = 0;
    for (int i = 0; i < testutil::RedisCluster::kNodes; ++i) now += Calls(i, "cluster|slots");
    return now > reloads;
  })) << "the slot map was not reloaded";
  {  // a PING behind the CLUSTER SLOTS on every connection: its reply has been applied
    std::promise<void> flushed;
    client_->Flush([&flushed] { flushed.set_value(); });
    flushed.get_future().wait();
  }
  const int64_t before = Calls(from, "get");
  Result<RedisReply> g = Call(other, {"GET", other});
  ASSERT_TRUE(g.has_value());
  EXPECT_TRUE(g->is_nil()) << g->str;
  EXPECT_EQ(Calls(from, "get"), before) << "the old owner was asked: the map was not reloaded";
  for (int i = 0; i < 20; ++i) EXPECT_EQ(Call(kept, {"GET", kept})->str, "v1");
  EXPECT_EQ(Calls(from, "get"), before);
}

}  // namespace
}  // namespace chronoq::redis
