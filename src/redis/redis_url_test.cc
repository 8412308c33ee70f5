#include "redis/redis_url.h"

#include <gtest/gtest.h>

namespace chronoq::redis {
namespace {

TEST(RedisUrlTest, Standalone) {
  Result<RedisUrl> u = ParseRedisUrl("redis://127.0.0.1:6379");
  ASSERT_TRUE(u.has_value()) << u.error().ToString();
  EXPECT_EQ(u->mode, RedisMode::kStandalone);
  ASSERT_EQ(u->endpoints.size(), 1u);
  EXPECT_EQ(u->endpoints[0], (RedisEndpoint{"127.0.0.1", 6379}));
  EXPECT_EQ(u->db, 0);
  EXPECT_TRUE(u->password.empty());
}

TEST(RedisUrlTest, StandaloneWithPasswordAndDb) {
  Result<RedisUrl> u = ParseRedisUrl("redis://:s3cr%40t@cache.local:6380/3");
  ASSERT_TRUE(u.has_value()) << u.error().ToString();
  EXPECT_EQ(u->password, "s3cr@t");
  EXPECT_TRUE(u->username.empty());
  EXPECT_EQ(u->endpoints[0], (RedisEndpoint{"cache.local", 6380}));
  EXPECT_EQ(u->db, 3);
  EXPECT_EQ(u->Redacted(), "redis://:***@cache.local:6380/3");
}

TEST(RedisUrlTest, UserAndPassword) {
  Result<RedisUrl> u = ParseRedisUrl("redis://app:pw@h:1");
  ASSERT_TRUE(u.has_value()) << u.error().ToString();
  EXPECT_EQ(u->username, "app");
  EXPECT_EQ(u->password, "pw");
}

TEST(RedisUrlTest, Ipv6InBrackets) {
  Result<RedisUrl> u = ParseRedisUrl("redis://[::1]:6379");
  ASSERT_TRUE(u.has_value()) << u.error().ToString();
  EXPECT_EQ(u->endpoints[0], (RedisEndpoint{"::1", 6379}));
  EXPECT_EQ(u->Redacted(), "redis://[::1]:6379");
}

TEST(RedisUrlTest, Sentinel) {
  Result<RedisUrl> u = ParseRedisUrl("redis-sentinel://:pw@10.0.0.1:26379,10.0.0.2:26379/mymaster");
  ASSERT_TRUE(u.has_value()) << u.error().ToString();
  EXPECT_EQ(u->mode, RedisMode::kSentinel);
  EXPECT_EQ(u->endpoints, (std::vector<RedisEndpoint>{{"10.0.0.1", 26379}, {"10.0.0.2", 26379}}));
  EXPECT_EQ(u->master_name, "mymaster");
  EXPECT_EQ(u->password, "pw");
  EXPECT_EQ(u->Redacted(), "redis-sentinel://:***@10.0.0.1:26379,10.0.0.2:26379/mymaster");
}

TEST(RedisUrlTest, Cluster) {
  Result<RedisUrl> u = ParseRedisUrl("redis-cluster://a:7000,b:7001,c:7002");
  ASSERT_TRUE(u.has_value()) << u.error().ToString();
  EXPECT_EQ(u->mode, RedisMode::kCluster);
  EXPECT_EQ(u->endpoints.size(), 3u);
  EXPECT_EQ(u->endpoints[2], (RedisEndpoint{"c", 7002}));
}

// Each invalid URL is refused with a message naming what is wrong.
TEST(RedisUrlTest, InvalidUrlsSayWhatIsWrong) {
  const std::pair<const char*, const char*> cases[] = {
      {"", "must start with redis://"},
      {"http://h:1", "must start with redis://"},
      {"redis://", "no host:port"},
      {"redis://h", "missing port"},
      {"redis://h:", "port '' is not a number"},
      {"redis://h:0", "from 1 to 65535"},
      {"redis://h:65536", "from 1 to 65535"},
      {"redis://h:12x", "port '12x'"},
      {"redis://:6379", "empty host"},
      {"redis://::1:6379", "IPv6 address must be in brackets"},
      {"redis://[::1:6379", "unclosed '['"},
      {"redis://h:1,g:2", "takes one host:port"},
      {"redis://h:1/x", "database 'x'"},
      {"redis://h:1/-1", "database '-1'"},
      {"redis://pw@h:1", "credentials must be"},
      {"redis://:p%4@h:1", "percent-encoding"},
      {"redis-sentinel://h:1", "needs the master name"},
      {"redis-sentinel://h:1/", "needs the master name"},
      {"redis-sentinel://h:1,/m", "empty host:port"},
      {"redis-sentinel://h:1/m/x", "must not contain '/'"},
      {"redis-cluster://h:1/0", "takes no path"},
  };
  for (const auto& [url, want] : cases) {
    Result<RedisUrl> u = ParseRedisUrl(url);
    ASSERT_FALSE(u.has_value()) << url;
    EXPECT_EQ(u.error().code(), Errc::kInvalidArgument) << url;
    EXPECT_NE(u.error().message().find(want), std::string::npos)
        << url << " -> " << u.error().message();
  }
}

TEST(RedisUrlTest, ErrorsNeverShowThePassword) {
  for (const char* url : {"redis://:hunter2@h", "redis://:hunter2@h:1/x",
                          "redis-sentinel://:hunter2@h:1", "redis://u:hunter2@:1"}) {
    Result<RedisUrl> u = ParseRedisUrl(url);
    ASSERT_FALSE(u.has_value()) << url;
    EXPECT_EQ(u.error().message().find("hunter2"), std::string::npos) << u.error().message();
  }
}

}  // namespace
}  // namespace chronoq::redis
