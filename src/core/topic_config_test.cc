#include "core/topic_config.h"

#include <gtest/gtest.h>

namespace chronoq::core {
namespace {

TopicConfig Ttl(int64_t ms) {
  TopicConfig c;
  c.ttl = Millis(ms);
  return c;
}

TEST(TopicConfigTest, OverlayTakesTheTopValueWhereItHasOne) {
  TopicConfig top = Ttl(1'000);
  top.paused = false;
  TopicConfig below = Ttl(2'000);
  below.capacity = 5;
  below.paused = true;
  TopicConfig out = Overlay(top, below);
  EXPECT_EQ(out.ttl, Millis(1'000));
  EXPECT_EQ(out.capacity, 5);
  EXPECT_EQ(out.paused, false);  // set to false is set
  EXPECT_FALSE(out.max_retry.has_value());
}

TEST(TopicConfigTest, LayersResolveStoredThenFileThenServerAndSayWhereEachCameFrom) {
  Defaults server;
  server.ttl = Millis(3'600'000);
  server.max_retry = 10;
  server.ack_timeout = Millis(30'000);
  TopicConfig file = Ttl(60'000);
  file.capacity = 100;
  TopicDefaults d(server, {{"orders", file}});
  TopicConfig stored;
  stored.capacity = 5;
  stored.dead_letter_topic = "orders-dead";
  EffectiveTopicConfig e = d.Resolve("orders", stored);
  EXPECT_EQ(e.capacity, 5);
  EXPECT_EQ(e.ttl, Millis(60'000));
  EXPECT_EQ(e.max_retry, 10);
  EXPECT_EQ(e.ack_timeout, Millis(30'000));
  EXPECT_EQ(e.retry_interval, Millis(0));
  EXPECT_EQ(e.dead_letter_topic, "orders-dead");
  EXPECT_FALSE(e.paused);
  EXPECT_EQ(d.SourceOf("orders", stored, TopicField::kCapacity), ConfigSource::kTopic);
  EXPECT_EQ(d.SourceOf("orders", stored, TopicField::kTtl), ConfigSource::kFile);
  EXPECT_EQ(d.SourceOf("orders", stored, TopicField::kMaxRetry), ConfigSource::kServer);
  // Another topic sees only the server.
  EffectiveTopicConfig other = d.Resolve("other", TopicConfig{});
  EXPECT_EQ(other.capacity, 0);
  EXPECT_EQ(other.ttl, Millis(3'600'000));
  EXPECT_EQ(d.SourceOf("other", TopicConfig{}, TopicField::kTtl), ConfigSource::kServer);
}

TEST(TopicConfigTest, FieldAndSourceNamesAreTheApis) {
  EXPECT_EQ(TopicFieldName(TopicField::kCapacity), "capacity");
  EXPECT_EQ(TopicFieldName(TopicField::kTtl), "ttlMillis");
  EXPECT_EQ(TopicFieldName(TopicField::kMaxRetry), "maxRetry");
  EXPECT_EQ(TopicFieldName(TopicField::kAckTimeout), "ackTimeoutMillis");
  EXPECT_EQ(TopicFieldName(TopicField::kRetryInterval), "retryIntervalMillis");
  EXPECT_EQ(TopicFieldName(TopicField::kDeadLetterTopic), "deadLetterTopic");
  EXPECT_EQ(TopicFieldName(TopicField::kPaused), "paused");
  EXPECT_EQ(ConfigSourceName(ConfigSource::kTopic), "topic");
  EXPECT_EQ(ConfigSourceName(ConfigSource::kFile), "file");
  EXPECT_EQ(ConfigSourceName(ConfigSource::kServer), "server");
}

TEST(TopicConfigTest, ValidationNamesTheFieldAndWhatIsWrong) {
  const Limits limits;
  auto check = [&](TopicConfig c) { return ValidateTopicConfig("orders", c, limits).message(); };
  TopicConfig c;
  c.capacity = -1;
  EXPECT_EQ(check(c), "capacity must be at least 0, got -1");
  c = Ttl(0);
  EXPECT_EQ(check(c), "ttlMillis must be at least 1, got 0");
  c = Ttl(limits.max_delay.count() + 1);
  EXPECT_EQ(check(c), "ttlMillis must be at most 315360000000 (10 years), got 315360000001");
  c = TopicConfig{};
  c.max_retry = -1;
  EXPECT_EQ(check(c), "maxRetry must be at least 0, got -1");
  c = TopicConfig{};
  c.ack_timeout = Millis(0);
  EXPECT_EQ(check(c), "ackTimeoutMillis must be at least 1, got 0");
  c = TopicConfig{};
  c.retry_interval = Millis(-5);
  EXPECT_EQ(check(c), "retryIntervalMillis must be at least 0, got -5");
  c = TopicConfig{};
  c.dead_letter_topic = "orders";
  EXPECT_EQ(
      check(c),
      "deadLetterTopic must name another topic: 'orders' cannot be its own dead-letter topic");
  c.dead_letter_topic = std::string("bad\x01name");
  EXPECT_EQ(check(c),
            "deadLetterTopic contains a control character (byte 0x01 at offset 3); control "
            "characters are not allowed");
  c.dead_letter_topic = std::string(256, 'x');
  EXPECT_EQ(check(c),
            "deadLetterTopic is 256 bytes long; the limit is 255 bytes (max-topic-bytes)");
  // Empty means none; zero capacity means unlimited; a zero retry interval is the default.
  c = TopicConfig{};
  c.dead_letter_topic = "";
  c.capacity = 0;
  c.retry_interval = Millis(0);
  EXPECT_TRUE(ValidateTopicConfig("orders", c, limits).ok());
}

TEST(TopicConfigTest, TopicFullIsTheCode429Sentence) {
  Status s = TopicFull("orders", 1000, 1000);
  EXPECT_EQ(s.code(), Errc::kResourceExhausted);
  EXPECT_EQ(s.message(), "topic 'orders' is full: 1000 messages in life, capacity 1000");
}

}  // namespace
}  // namespace chronoq::core
