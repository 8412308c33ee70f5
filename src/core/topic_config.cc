#include "core/topic_config.h"

#include <fmt/format.h>

#include "core/validation.h"

namespace chronoq::core {
namespace {

template <typename T>
std::optional<T> Pick(const std::optional<T>& top, const std::optional<T>& below) {
  return top.has_value() ? top : below;
}

const TopicConfig kUnset{};

}  // namespace

TopicConfig Overlay(const TopicConfig& top, const TopicConfig& below) {
  TopicConfig out;
  out.capacity = Pick(top.capacity, below.capacity);
  out.ttl = Pick(top.ttl, below.ttl);
  out.max_retry = Pick(top.max_retry, below.max_retry);
  out.ack_timeout = Pick(top.ack_timeout, below.ack_timeout);
  out.retry_interval = Pick(top.retry_interval, below.retry_interval);
  out.dead_letter_topic = Pick(top.dead_letter_topic, below.dead_letter_topic);
  out.paused = Pick(top.paused, below.paused);
  out.callback = Pick(top.callback, below.callback);
  out.history = Pick(top.history, below.history);
  return out;
}

std::string_view TopicFieldName(TopicField f) {
  switch (f) {
    case TopicField::kCapacity:
      return "capacity";
    case TopicField::kTtl:
      return "ttlMillis";
    case TopicField::kMaxRetry:
      return "maxRetry";
    case TopicField::kAckTimeout:
      return "ackTimeoutMillis";
    case TopicField::kRetryInterval:
      return "retryIntervalMillis";
    case TopicField::kDeadLetterTopic:
      return "deadLetterTopic";
    case TopicField::kPaused:
      return "paused";
    case TopicField::kCallback:
      return "callback";
    case TopicField::kHistory:
      return "history";
  }
  return "unknown";
}

bool IsSet(const TopicConfig& c, TopicField f) {
  switch (f) {
    case TopicField::kCapacity:
      return c.capacity.has_value();
    case TopicField::kTtl:
      return c.ttl.has_value();
    case TopicField::kMaxRetry:
      return c.max_retry.has_value();
    case TopicField::kAckTimeout:
      return c.ack_timeout.has_value();
    case TopicField::kRetryInterval:
      return c.retry_interval.has_value();
    case TopicField::kDeadLetterTopic:
      return c.dead_letter_topic.has_value();
    case TopicField::kPaused:
      return c.paused.has_value();
    case TopicField::kCallback:
      return c.callback.has_value();
    case TopicField::kHistory:
      return c.history.has_value();
  }
  return false;
}

std::string_view ConfigSourceName(ConfigSource s) {
  switch (s) {
    case ConfigSource::kTopic:
      return "topic";
    case ConfigSource::kFile:
      return "file";
    case ConfigSource::kServer:
      return "server";
  }
  return "unknown";
}

const TopicDefaults& TopicDefaults::ServerOnly() {
  static const TopicDefaults kServerOnly;
  return kServerOnly;
}

TopicConfig TopicDefaults::For(std::string_view topic) const {
  TopicConfig server;
  server.capacity = 0;
  server.ttl = server_.ttl;
  server.max_retry = server_.max_retry;
  server.ack_timeout = server_.ack_timeout;
  server.retry_interval = Millis(0);
  server.dead_letter_topic = std::string();
  server.paused = false;
  server.callback = std::optional<Callback>();
  server.history = false;
  return Overlay(File(topic), server);
}

const TopicConfig& TopicDefaults::File(std::string_view topic) const {
  auto it = file_.find(topic);
  return it == file_.end() ? kUnset : it->second;
}

EffectiveTopicConfig TopicDefaults::Resolve(std::string_view topic,
                                            const TopicConfig& stored) const {
  return Effective(Overlay(stored, For(topic)));
}

ConfigSource TopicDefaults::SourceOf(std::string_view topic, const TopicConfig& stored,
                                     TopicField f) const {
  if (IsSet(stored, f)) return ConfigSource::kTopic;
  if (IsSet(File(topic), f)) return ConfigSource::kFile;
  return ConfigSource::kServer;
}

EffectiveTopicConfig Effective(const TopicConfig& full) {
  EffectiveTopicConfig e;
  e.capacity = full.capacity.value();
  e.ttl = full.ttl.value();
  e.max_retry = full.max_retry.value();
  e.ack_timeout = full.ack_timeout.value();
  e.retry_interval = full.retry_interval.value();
  e.dead_letter_topic = full.dead_letter_topic.value();
  e.paused = full.paused.value();
  e.callback = full.callback.value();
  e.history = full.history.value();
  return e;
}

Status ValidateTopicConfig(std::string_view topic, const TopicConfig& c, const Limits& limits) {
  auto at_most = [&](std::string_view name, Millis v, int64_t min) -> Status {
    CQ_RETURN_IF_ERROR(ValidateAtLeast(name, v.count(), min));
    if (v > limits.max_delay) {
      return InvalidArgument(fmt::format("{} must be at most {} (10 years), got {}", name,
                                         limits.max_delay.count(), v.count()));
    }
    return Status::Ok();
  };
  if (c.capacity) CQ_RETURN_IF_ERROR(ValidateAtLeast("capacity", *c.capacity, 0));
  if (c.ttl) CQ_RETURN_IF_ERROR(at_most("ttlMillis", *c.ttl, 1));
  if (c.max_retry) CQ_RETURN_IF_ERROR(ValidateAtLeast("maxRetry", *c.max_retry, 0));
  if (c.ack_timeout) CQ_RETURN_IF_ERROR(at_most("ackTimeoutMillis", *c.ack_timeout, 1));
  if (c.retry_interval) CQ_RETURN_IF_ERROR(at_most("retryIntervalMillis", *c.retry_interval, 0));
  if (c.dead_letter_topic && !c.dead_letter_topic->empty()) {
    CQ_RETURN_IF_ERROR(ValidateScopedTopicParam("deadLetterTopic", *c.dead_letter_topic, limits));
    if (*c.dead_letter_topic == topic) {
      return InvalidArgument(fmt::format(
          "deadLetterTopic must name another topic: '{}' cannot be its own dead-letter topic",
          topic));
    }
  }
  return Status::Ok();
}

Status TopicFull(std::string_view topic, int64_t in_life, int64_t capacity) {
  return Status(Errc::kResourceExhausted,
                fmt::format("topic '{}' is full: {} messages in life, capacity {}", topic, in_life,
                            capacity));
}

}  // namespace chronoq::core
