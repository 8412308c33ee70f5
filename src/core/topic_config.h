// Topic configuration (API-EXTENSIONS.md section 4): per-topic limits and defaults, in layers.
//
// Three layers, the first that sets a field wins:
//   1. the topic's stored configuration (setTopicConfig; durable, and on Redis shared by every
//      node at once);
//   2. the node's config file, `[topics.<name>]` tables (node-local, like every setting of the
//      file; keep them equal on every node of a Redis deployment);
//   3. the server defaults (core::Defaults; capacity 0 = unlimited, no retry interval, no dead
//      letters, not paused).
// A request's own value (sendMsg's ttlMillis, pullMsg's ackTimeoutMillis...) beats all three.
// getTopicConfig tells for each field which layer it came from, so an API value that shadows a
// file value is never silent (docs/topic-config.md).
//
// Layers 2 and 3 are the node-local TopicDefaults; backends hold a pointer to it (given by the
// service, QueueBackend::SetTopicDefaults) and resolve layer 1 over it atomically with each
// operation that needs a value (a send needs the capacity and the ttl, a delivery the ack
// timeout and the retry interval, an end the dead-letter topic), so that a change made through
// one Redis node holds on every node from the next operation on.
//
// Plain value types and pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "base/time.h"
#include "core/callback.h"
#include "core/limits.h"

namespace chronoq::core {

// One layer: an unset field takes the next layer's value.
struct TopicConfig {
  std::optional<int64_t> capacity{};               // >= 0; 0: unlimited
  std::optional<Millis> ttl{};                     // > 0
  std::optional<int32_t> max_retry{};              // >= 0
  std::optional<Millis> ack_timeout{};             // > 0
  std::optional<Millis> retry_interval{};          // >= 0
  std::optional<std::string> dead_letter_topic{};  // "": none
  std::optional<bool> paused{};
  // Push delivery (docs/push.md): where the topic's push-lane messages without a callback of
  // their own go. Set to an empty inner value: none (shadows the layers below). Only the stored
  // layer sets it: the file and the server have none.
  std::optional<std::optional<Callback>> callback{};
  // Message history (core/history.h, getMsgHistory): record every transition of the topic's
  // messages. Off by default.
  std::optional<bool> history{};

  bool empty() const { return *this == TopicConfig{}; }
  bool operator==(const TopicConfig&) const = default;
};

// Field-wise: `top`'s value where it has one, else `below`'s.
TopicConfig Overlay(const TopicConfig& top, const TopicConfig& below);

// The fields, for tables, sources and error sentences. Names are the API's.
enum class TopicField {
  kCapacity,
  kTtl,
  kMaxRetry,
  kAckTimeout,
  kRetryInterval,
  kDeadLetterTopic,
  kPaused,
  kCallback,
  kHistory
};
inline constexpr int kTopicFieldCount = 9;
std::string_view TopicFieldName(TopicField f);  // "capacity", "ttlMillis", ..., "history"
bool IsSet(const TopicConfig& c, TopicField f);

// Where an effective value came from.
enum class ConfigSource { kTopic, kFile, kServer };
std::string_view ConfigSourceName(ConfigSource s);  // "topic", "file", "server"

// A fully resolved configuration: every field set.
struct EffectiveTopicConfig {
  int64_t capacity = 0;
  Millis ttl{0};
  int32_t max_retry = 0;
  Millis ack_timeout{0};
  Millis retry_interval{0};
  std::string dead_letter_topic;
  bool paused = false;
  std::optional<Callback> callback{};  // absent: none
  bool history = false;

  bool operator==(const EffectiveTopicConfig&) const = default;
};

// Layers 2 and 3 of one node: the server defaults and the file's [topics.<name>] tables.
class TopicDefaults {
 public:
  TopicDefaults() = default;
  TopicDefaults(Defaults server, std::map<std::string, TopicConfig, std::less<>> file)
      : server_(server), file_(std::move(file)) {}

  // The node-local layers of `topic`, every field set.
  TopicConfig For(std::string_view topic) const;
  // The file's table for `topic` (all unset when it has none).
  const TopicConfig& File(std::string_view topic) const;
  const Defaults& server() const { return server_; }
  const std::map<std::string, TopicConfig, std::less<>>& file() const { return file_; }

  // The server defaults alone, without file tables: what a backend resolves over until it is
  // given the node's layers (QueueBackend::SetTopicDefaults).
  static const TopicDefaults& ServerOnly();

  // `stored` (layer 1) over For(topic).
  EffectiveTopicConfig Resolve(std::string_view topic, const TopicConfig& stored) const;
  // Which layer each effective field came from.
  ConfigSource SourceOf(std::string_view topic, const TopicConfig& stored, TopicField f) const;

 private:
  Defaults server_;
  std::map<std::string, TopicConfig, std::less<>> file_;
};

// Every field of a fully set layer (REQUIRES: all set).
EffectiveTopicConfig Effective(const TopicConfig& full);

// Checks a layer's values (setTopicConfig, a file table) for `topic`: capacity >= 0, ttlMillis
// and ackTimeoutMillis > 0 and at most max_delay, maxRetry >= 0, retryIntervalMillis >= 0 and at
// most max_delay, deadLetterTopic a valid topic name (or empty) other than `topic`. Sentences name
// the field ("capacity must be >= 0, got -1").
Status ValidateTopicConfig(std::string_view topic, const TopicConfig& c, const Limits& limits);

// The code-429 sentence of a send refused by a full topic (the same on every backend):
// "topic 'orders' is full: 1000 messages in life, capacity 1000".
Status TopicFull(std::string_view topic, int64_t in_life, int64_t capacity);

}  // namespace chronoq::core
