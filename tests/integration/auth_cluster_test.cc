// Namespace isolation on a Redis Cluster (three masters, the harness's RedisCluster): the checks
// of auth_test.cc's NamespacesIsolate... case, with the server's storage on the cluster.
#include "tests/integration/auth_util.h"
#include "tests/testutil/redis_servers.h"

namespace chronoq::it {
namespace {

class AuthClusterTest : public AuthTest {
 protected:
  std::vector<std::string> Flags() const override {
    testutil::RedisCluster* cluster = testutil::SharedDeployment<testutil::RedisCluster>();
    return {"--auth-tokens-file=" + TokensPath(), "--storage=redis",
            "--redis-url=" + cluster->url(), "--namespace=it-auth-" + std::to_string(::getpid())};
  }
};

TEST_F(AuthClusterTest, NamespacesIsolateTopicsMessagesListingsAndCursors) { NamespaceIsolation(); }

}  // namespace
}  // namespace chronoq::it
