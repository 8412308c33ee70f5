// The [topics.<name>] tables of the --config file (config.h): their keys, their validation and
// their TOML rendering. Parsing is config_file.cc's (toml++ stays there).
#include <fmt/format.h>

#include <cctype>

#include "config/config.h"
#include "config/key_table.h"
#include "core/scope.h"
#include "core/validation.h"

namespace chronoq::config {
namespace {

// The table's header: the name bare when TOML allows it, else quoted.
std::string TableName(std::string_view topic) {
  bool bare = !topic.empty();
  for (char c : topic) {
    bare = bare && (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_');
  }
  return bare ? std::string(topic) : internal::TomlString(topic);
}

}  // namespace

std::string_view TopicFileKey(core::TopicField f) {
  switch (f) {
    case core::TopicField::kCapacity:
      return "capacity";
    case core::TopicField::kTtl:
      return "ttl-millis";
    case core::TopicField::kMaxRetry:
      return "max-retry";
    case core::TopicField::kAckTimeout:
      return "ack-timeout-millis";
    case core::TopicField::kRetryInterval:
      return "retry-interval-millis";
    case core::TopicField::kDeadLetterTopic:
      return "dead-letter-topic";
    case core::TopicField::kPaused:
      return "paused";
    case core::TopicField::kCallback:
      return "callback";
    case core::TopicField::kHistory:
      return "history";
  }
  return "?";
}

std::string TopicTableHeader(std::string_view topic) {
  std::string_view ns, name;
  if (!core::SplitScopedTopic(topic, &ns, &name) || ns.empty()) {
    return fmt::format("topics.{}", TableName(topic));
  }
  return fmt::format("namespaces.{}.topics.{}", TableName(ns), TableName(name));
}

std::map<std::string, core::TopicConfig, std::less<>> StoreTopicTables(const ServerConfig& cfg) {
  std::map<std::string, core::TopicConfig, std::less<>> out = cfg.topics;
  for (auto& [topic, c] : out) {
    std::string_view ns, name;
    if (c.dead_letter_topic && !c.dead_letter_topic->empty() &&
        core::SplitScopedTopic(topic, &ns, &name) && !ns.empty()) {
      c.dead_letter_topic = core::ScopedTopic(ns, *c.dead_letter_topic);
    }
  }
  return out;
}

std::vector<std::string> ValidateTopicTables(const ServerConfig& cfg) {
  std::vector<std::string> errors;
  const core::Limits limits = ToLimits(cfg);
  for (const auto& [internal, c] : cfg.topics) {
    const std::string table = fmt::format("[{}]", TopicTableHeader(internal));
    std::string_view ns, name;
    if (!core::SplitScopedTopic(internal, &ns, &name)) name = internal;
    const std::string topic(name);  // the client's name: what the rules are about
    if (Status s = core::ValidateTopic(topic, limits); !s.ok()) {
      errors.push_back(
          fmt::format("{}: the table's name is not a valid topic: {}", table, s.message()));
      continue;
    }
    Status s = core::ValidateTopicConfig(topic, c, limits);
    if (s.ok()) continue;
    // The sentence names the field as the API does (ttlMillis); the file spells it ttl-millis.
    std::string msg = s.message();
    for (int f = 0; f < core::kTopicFieldCount; ++f) {
      const std::string_view api = core::TopicFieldName(static_cast<core::TopicField>(f));
      if (msg.compare(0, api.size(), api) == 0) {
        msg = std::string(TopicFileKey(static_cast<core::TopicField>(f))) + msg.substr(api.size());
        break;
      }
    }
    errors.push_back(fmt::format("{} {}", table, msg));
  }
  return errors;
}

std::string TopicTablesToml(const ServerConfig& cfg) {
  std::string out;
  for (const auto& [topic, c] : cfg.topics) {
    out += fmt::format("\n[{}]\n", TopicTableHeader(topic));
    auto line = [&](core::TopicField f, const std::string& value) {
      out += fmt::format("{} = {}\n", TopicFileKey(f), value);
    };
    using F = core::TopicField;
    if (c.capacity) line(F::kCapacity, std::to_string(*c.capacity));
    if (c.ttl) line(F::kTtl, std::to_string(c.ttl->count()));
    if (c.max_retry) line(F::kMaxRetry, std::to_string(*c.max_retry));
    if (c.ack_timeout) line(F::kAckTimeout, std::to_string(c.ack_timeout->count()));
    if (c.retry_interval) line(F::kRetryInterval, std::to_string(c.retry_interval->count()));
    if (c.dead_letter_topic) line(F::kDeadLetterTopic, internal::TomlString(*c.dead_letter_topic));
    if (c.paused) line(F::kPaused, *c.paused ? "true" : "false");
    if (c.history) line(F::kHistory, *c.history ? "true" : "false");
  }
  return out;
}

}  // namespace chronoq::config
