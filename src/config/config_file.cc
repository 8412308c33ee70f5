// The --config file: TOML through toml++ (whose types stay in this file).
#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "config/config.h"
#include "config/key_table.h"
#include "core/scope.h"

namespace chronoq::config {
namespace {

using internal::FindKey;
using internal::Key;

struct Problem {
  int64_t line;
  std::string text;
};

std::string_view TomlTypeName(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a floating-point number";
    case toml::node_type::boolean:
      return "a boolean";
    case toml::node_type::date:
    case toml::node_type::time:
    case toml::node_type::date_time:
      return "a date or time";
    case toml::node_type::none:
      break;
  }
  return "nothing";
}

// "ttl-millis" for "ttl_millis" or "TTL_MILLIS", when that is a key: a likely slip.
std::string Suggestion(std::string_view name) {
  std::string guess;
  for (char c : name) {
    guess.push_back(c == '_' ? '-'
                             : static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  const Key* k = FindKey(guess);
  return k != nullptr && !k->hidden ? fmt::format(" (did you mean '{}'?)", k->name) : "";
}

// Sets `k` from `node`; a problem when the TOML type is not the key's.
std::string Apply(const Key& k, const toml::node& node, ServerConfig* cfg) {
  std::string wrong = fmt::format("{} must be {} {}, got {}", k.name,
                                  internal::TypeName(k.field) == "integer" ? "an" : "a",
                                  internal::TypeName(k.field), TomlTypeName(node));
  return std::visit(
      [&](auto member) -> std::string {
        using T = std::decay_t<decltype(cfg->*member)>;
        if constexpr (std::is_same_v<T, bool>) {
          if (!node.is_boolean()) return wrong;
          cfg->*member = node.as_boolean()->get();
        } else if constexpr (std::is_same_v<T, int64_t>) {
          if (!node.is_integer()) return wrong;
          cfg->*member = node.as_integer()->get();
        } else {
          if (!node.is_string()) return wrong;
          cfg->*member = node.as_string()->get();
        }
        return "";
      },
      k.field);
}

// One field of a [topics.<name>] table; a problem when its TOML type is not the field's.
std::string ApplyTopicField(core::TopicField f, const toml::node& node, core::TopicConfig* c) {
  using F = core::TopicField;
  const std::string_view key = TopicFileKey(f);
  if (f == F::kCallback) {
    return "callback cannot be set in the config file: a topic's callback is set with "
           "setTopicConfig (docs/push.md)";
  }
  const bool boolean = f == F::kPaused || f == F::kHistory;
  const std::string_view want = f == F::kDeadLetterTopic ? "a string"
                                : boolean                ? "a boolean"
                                                         : "an integer";
  const bool fits = f == F::kDeadLetterTopic ? node.is_string()
                    : boolean                ? node.is_boolean()
                                             : node.is_integer();
  if (!fits) return fmt::format("{} must be {}, got {}", key, want, TomlTypeName(node));
  const int64_t n = node.is_integer() ? node.as_integer()->get() : 0;
  switch (f) {
    case F::kCapacity:
      c->capacity = n;
      break;
    case F::kTtl:
      c->ttl = Millis(n);
      break;
    case F::kMaxRetry:
      if (n > INT32_MAX || n < INT32_MIN) {
        return fmt::format("{} must be at most {}, got {}", key, INT32_MAX, n);
      }
      c->max_retry = static_cast<int32_t>(n);
      break;
    case F::kAckTimeout:
      c->ack_timeout = Millis(n);
      break;
    case F::kRetryInterval:
      c->retry_interval = Millis(n);
      break;
    case F::kDeadLetterTopic:
      c->dead_letter_topic = node.as_string()->get();
      break;
    case F::kPaused:
      c->paused = node.as_boolean()->get();
      break;
    case F::kHistory:
      c->history = node.as_boolean()->get();
      break;
    case F::kCallback:
      break;
  }
  return "";
}

// The [topics.<name>] tables (of namespace `ns`: [namespaces.<ns>.topics.<name>]), each a table
// of known fields (values are checked by ValidateTopicTables, once every source is read).
void ApplyTopics(const toml::node& topics, std::string_view ns, std::vector<Problem>* problems,
                 ServerConfig* cfg) {
  const std::string prefix = ns.empty() ? "" : fmt::format("namespaces.{}.", ns);
  if (!topics.is_table()) {
    problems->push_back({topics.source().begin.line,
                         fmt::format("{0}topics must be tables [{0}topics.<name>], got {1}", prefix,
                                     TomlTypeName(topics))});
    return;
  }
  for (const auto& [name, table] : *topics.as_table()) {
    const int64_t line = name.source().begin.line;
    if (!table.is_table()) {
      problems->push_back(
          {line, fmt::format("{0}topics.{1} must be a table [{0}topics.{1}] of topic settings, "
                             "got {2}",
                             prefix, name.str(), TomlTypeName(table))});
      continue;
    }
    const std::string topic = core::ScopedTopic(ns, name.str());
    const std::string header = TopicTableHeader(topic);
    core::TopicConfig& c = cfg->topics[topic];
    for (const auto& [key, node] : *table.as_table()) {
      const int64_t at = key.source().begin.line;
      int f = 0;
      while (f < core::kTopicFieldCount &&
             TopicFileKey(static_cast<core::TopicField>(f)) != key.str()) {
        ++f;
      }
      std::string p = f == core::kTopicFieldCount
                          ? fmt::format(
                                "[{}]: unknown setting '{}' (topic settings: capacity, "
                                "ttl-millis, max-retry, ack-timeout-millis, retry-interval-millis, "
                                "dead-letter-topic, paused, history)",
                                header, key.str())
                          : ApplyTopicField(static_cast<core::TopicField>(f), node, &c);
      if (!p.empty() && f < core::kTopicFieldCount) p = fmt::format("[{}] {}", header, p);
      if (!p.empty()) problems->push_back({at, std::move(p)});
    }
  }
}

// The [namespaces.<ns>.topics.<name>] tables: per namespace, only a topics table.
void ApplyNamespaces(const toml::node& namespaces, std::vector<Problem>* problems,
                     ServerConfig* cfg) {
  const char* const shape = "[namespaces.<namespace>.topics.<name>]";
  if (!namespaces.is_table()) {
    problems->push_back(
        {namespaces.source().begin.line,
         fmt::format("namespaces must be tables {}, got {}", shape, TomlTypeName(namespaces))});
    return;
  }
  for (const auto& [ns, table] : *namespaces.as_table()) {
    const int64_t line = ns.source().begin.line;
    if (!core::IsValidNamespace(ns.str())) {
      problems->push_back(
          {line, fmt::format("namespaces.{}: not a valid namespace (1 to {} of A-Z a-z 0-9 '_' "
                             "'.' '-')",
                             ns.str(), core::kMaxNamespaceBytes)});
      continue;
    }
    if (!table.is_table()) {
      problems->push_back({line, fmt::format("namespaces.{} must be a table {}, got {}", ns.str(),
                                             shape, TomlTypeName(table))});
      continue;
    }
    for (const auto& [key, node] : *table.as_table()) {
      if (key.str() != "topics") {
        problems->push_back(
            {key.source().begin.line,
             fmt::format("namespaces.{}: unknown setting '{}' (a namespace has only topic "
                         "tables, {})",
                         ns.str(), key.str(), shape)});
        continue;
      }
      ApplyTopics(node, ns.str(), problems, cfg);
    }
  }
}

}  // namespace

std::vector<std::string> ApplyToml(std::string_view text, std::string_view source,
                                   ServerConfig* cfg) {
  toml::table doc;
  try {
    doc = toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    const toml::source_position& at = e.source().begin;
    return {fmt::format("{} line {}, column {}: TOML syntax error: {}", source, at.line, at.column,
                        e.description())};
  }
  std::vector<Problem> problems;
  for (const auto& [key, node] : doc) {
    int64_t line = key.source().begin.line;
    std::string_view name = key.str();
    if (name == "topics") {
      ApplyTopics(node, "", &problems, cfg);
      continue;
    }
    if (name == "namespaces") {
      ApplyNamespaces(node, &problems, cfg);
      continue;
    }
    const Key* k = FindKey(name);
    if (k == nullptr || k->hidden) {
      std::string what = node.is_table()
                             ? fmt::format(
                                   "unknown section [{}]: settings are "
                                   "top-level keys, as ttl-millis = 60000",
                                   name)
                             : fmt::format("unknown setting '{}'{}", name, Suggestion(name));
      problems.push_back({line, std::move(what)});
      continue;
    }
    if (std::string p = Apply(*k, node, cfg); !p.empty()) problems.push_back({line, std::move(p)});
  }
  std::stable_sort(problems.begin(), problems.end(),
                   [](const Problem& a, const Problem& b) { return a.line < b.line; });
  std::vector<std::string> out;
  for (const Problem& p : problems)
    out.push_back(fmt::format("{} line {}: {}", source, p.line, p.text));
  return out;
}

std::vector<std::string> ApplyConfigFile(const std::string& path, ServerConfig* cfg) {
  std::string source = "config file " + path;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return {fmt::format("{}: cannot open it: {}", source, std::strerror(errno))};
  std::string text;
  char buf[8192];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
  int err = std::ferror(f) ? errno : 0;
  std::fclose(f);
  if (err != 0) return {fmt::format("{}: cannot read it: {}", source, std::strerror(err))};
  return ApplyToml(text, source, cfg);
}

}  // namespace chronoq::config
