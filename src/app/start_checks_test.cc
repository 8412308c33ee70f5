#include "app/start_checks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace chronoq::app {
namespace {

TEST(StartChecksTest, LoopbackHostsAreThoseOnlyThisMachineReaches) {
  for (const char* host : {"127.0.0.1", "127.5.6.7", "localhost", "[::1]", "[::ffff:127.0.0.1]"}) {
    EXPECT_TRUE(IsLoopbackHost(host)) << host;
  }
  for (const char* host : {"0.0.0.0", "10.0.0.1", "128.0.0.1", "[::]", "[fe80::1]",
                           "[::ffff:10.0.0.1]", "example.com", "", "127.0.0.1.example.com"}) {
    EXPECT_FALSE(IsLoopbackHost(host)) << host;
  }
}

TEST(StartChecksTest, TheWarningIsForListenAddressesBeyondLoopback) {
  config::ServerConfig cfg;
  cfg.grpc_listen = "";
  cfg.listen = "127.0.0.1:8080";
  EXPECT_FALSE(WarnIfOpenToTheNetwork(cfg));
  cfg.listen = "[::1]:0";
  EXPECT_FALSE(WarnIfOpenToTheNetwork(cfg));
  cfg.listen = "0.0.0.0:8080";
  EXPECT_TRUE(WarnIfOpenToTheNetwork(cfg));
  cfg.listen = "[::]:8080";
  EXPECT_TRUE(WarnIfOpenToTheNetwork(cfg));
  // gRPC counts too (its default is 0.0.0.0:9090).
  cfg.listen = "127.0.0.1:8080";
  cfg.grpc_listen = "0.0.0.0:9090";
  EXPECT_TRUE(WarnIfOpenToTheNetwork(cfg));
  cfg.grpc_listen = "127.0.0.1:9090";
  EXPECT_FALSE(WarnIfOpenToTheNetwork(cfg));
}

TEST(StartChecksTest, NoWarningWithTokens) {
  config::ServerConfig cfg;
  cfg.listen = "0.0.0.0:8080";
  cfg.grpc_listen = "0.0.0.0:9090";
  cfg.auth_tokens_file = "/etc/chronoq/tokens";
  EXPECT_FALSE(WarnIfOpenToTheNetwork(cfg));
}

TEST(StartChecksTest, EachStoreRefusalHasItsExitCode) {
  EXPECT_EQ(ExitCodeForStoreOpen(InvalidArgument("not a chronoq store")), kExitConfigRefused);
  EXPECT_EQ(ExitCodeForStoreOpen(Unavailable("in use by another chronoq server")),
            kExitDataDirInUse);
  EXPECT_EQ(ExitCodeForStoreOpen(IOError("disk")), kExitFailure);
  EXPECT_EQ(kExitDataDirInUse, 3);  // documented in README and deploy/systemd/chronoq.service
}

TEST(StartChecksTest, AStoredValueThatShadowsAFileValueIsOneLine) {
  core::TopicConfig file;
  file.capacity = 50;
  file.ttl = Millis(9000);
  file.dead_letter_topic = "dlq";
  core::EffectiveTopicConfig effective;
  effective.capacity = 7;
  effective.ttl = Millis(9000);
  effective.dead_letter_topic = "other";
  using S = core::ConfigSource;
  // capacity and deadLetterTopic stored; ttl from the file; the rest the server's.
  std::array<S, core::kTopicFieldCount> sources = {S::kTopic,  S::kFile,  S::kServer, S::kServer,
                                                   S::kServer, S::kTopic, S::kTopic};
  EXPECT_THAT(ShadowedTopicSettings("orders", file, effective, sources),
              ::testing::ElementsAre(
                  "topic 'orders': capacity = 7 from setTopicConfig (stored) shadows capacity = "
                  "50 of the config file's [topics.orders] table; deleteTopicConfig or "
                  "setTopicConfig changes it",
                  "topic 'orders': deadLetterTopic = 'other' from setTopicConfig (stored) shadows "
                  "dead-letter-topic = 'dlq' of the config file's [topics.orders] table; "
                  "deleteTopicConfig or setTopicConfig changes it"));
  EXPECT_TRUE(ShadowedTopicSettings("orders", core::TopicConfig{}, effective, sources).empty());
}

}  // namespace
}  // namespace chronoq::app
