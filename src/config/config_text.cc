// Every rendering of the settings table: `serve --help`, `--print-config`, the sample file
// deploy/chronoq.toml, the table of docs/configuration.md and the start log's summary.
#include <fmt/format.h>

#include "config/config.h"
#include "config/key_table.h"

namespace chronoq::config {
namespace {

using internal::Key;
using internal::Keys;

// `text` as "# " comment lines of at most about 96 columns.
std::string Comment(std::string_view text) {
  std::string out;
  std::string line = "#";
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(' ', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view word = text.substr(pos, end - pos);
    if (line.size() > 1 && line.size() + 1 + word.size() > 96) {
      out += line + "\n";
      line = "#";
    }
    line += " ";
    line += word;
    pos = end + 1;
  }
  return out + line + "\n";
}

// The keys shown to users, each with the heading of its group ("" when it continues the last).
template <typename F>
void ForEachDocumented(F&& f) {
  for (const Key& k : Keys()) {
    if (!k.hidden) f(k);
  }
}

std::string MarkdownCell(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '<') {
      out += "&lt;";
    } else {
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace

namespace internal {

std::string TomlString(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\u{:04X}", c);
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  out.push_back('"');
  return out;
}

std::string TomlValue(const ServerConfig& cfg, const Key& k) {
  if (!std::holds_alternative<std::string ServerConfig::*>(k.field)) return Text(cfg, k.field);
  std::string value = Text(cfg, k.field);
  return TomlString(k.name == "redis-url" ? RedactUrl(value) : value);
}

}  // namespace internal

std::string RedactUrl(std::string_view url) {
  size_t scheme = url.find("://");
  if (scheme == std::string_view::npos) return std::string(url);
  size_t start = scheme + 3;
  size_t slash = url.find('/', start);
  std::string_view authority =
      url.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
  size_t at = authority.rfind('@');
  if (at == std::string_view::npos) return std::string(url);
  std::string_view userinfo = authority.substr(0, at);
  size_t colon = userinfo.find(':');
  std::string user(colon == std::string_view::npos ? "" : userinfo.substr(0, colon));
  return fmt::format("{}{}:***{}", url.substr(0, start), user, url.substr(start + at));
}

std::string HelpText() {
  std::string out =
      "Usage: chronoq serve [--config=FILE] [--key=value ...]\n\n"
      "Runs the chronoq delay-queue server (camellia-delay-queue HTTP API).\n\n"
      "Each setting comes, later ones winning, from its default, the TOML file of\n"
      "--config=FILE (`ttl-millis = 60000`), the environment as CHRONOQ_<KEY> (for example\n"
      "CHRONOQ_TTL_MILLIS=60000), then the flag --<key>=<value>. Settings are read at start.\n"
      "Reference: docs/configuration.md.\n\n"
      "  --config=FILE                      read settings from this TOML file\n"
      "  --print-config                     print the effective settings as TOML and exit\n"
      "  --help                             this text\n";
  ForEachDocumented([&](const Key& k) {
    if (!k.group.empty()) out += fmt::format("\n{}:\n", k.group);
    std::string unit = k.unit.empty() ? "" : fmt::format("unit: {}; ", k.unit);
    out += fmt::format("  --{:<32} {}\n  {:<34} ({}default: {})\n", k.name, k.help, "", unit,
                       internal::Text(ServerConfig{}, k.field));
  });
  return out;
}

std::string PrintToml(const ServerConfig& cfg) {
  std::string out =
      "# chronoq serve: effective configuration (defaults < --config file < CHRONOQ_* environment "
      "< flags).\n";
  ForEachDocumented(
      [&](const Key& k) { out += fmt::format("{} = {}\n", k.name, internal::TomlValue(cfg, k)); });
  return out + TopicTablesToml(cfg);
}

std::string SampleToml() {
  std::string out =
      "# chronoq configuration file (TOML), read by chronoq serve --config=FILE\n"
      "#\n"
      "# Every setting is listed, commented out, with its default value: uncomment a line to\n"
      "# change it. Later sources win: defaults < this file < environment CHRONOQ_<KEY> <\n"
      "# flags --<key>=<value>. Settings are read at start: restart the server after a change.\n"
      "# `chronoq serve --config=FILE --print-config` checks a file and prints the result.\n"
      "# Reference: docs/configuration.md.\n"
      "#\n"
      "# Generated from the table in src/config/config.cc (a test keeps the two equal).\n";
  ServerConfig defaults;
  ForEachDocumented([&](const Key& k) {
    if (!k.group.empty()) out += fmt::format("\n# ---- {} ----\n", k.group);
    std::string unit = k.unit.empty() ? "" : fmt::format(" Unit: {}.", k.unit);
    out += "\n" + Comment(fmt::format("{}.{}", k.help, unit));
    out += fmt::format("# {} = {}\n", k.name, internal::TomlValue(defaults, k));
  });
  // The example's keys are indented so that uncommenting the key lines above (as the docs test
  // does) leaves them out.
  out += "\n# ---- Topic defaults ----\n\n";
  out += Comment(
      "Per-topic settings, one [topics.<name>] table per topic: under the topic's stored "
      "configuration (setTopicConfig wins over the file; getTopicConfig tells which layer each "
      "value came from, and the server logs at start every file value a stored one shadows) and "
      "over the settings above. Keys: capacity (messages in life, 0 = unlimited), ttl-millis, "
      "max-retry, ack-timeout-millis, retry-interval-millis, dead-letter-topic (\"\" = none), "
      "paused (true/false). Quote a topic name that is not a bare TOML key: "
      "[topics.\"orders.eu\"]. Reference: docs/topic-config.md.");
  out +=
      "#\n"
      "# [topics.orders]\n"
      "#   capacity = 1000\n"
      "#   retry-interval-millis = 5000\n"
      "#   dead-letter-topic = \"orders-dlq\"\n";
  return out;
}

std::string MarkdownReference() {
  std::string out;
  ServerConfig defaults;
  ForEachDocumented([&](const Key& k) {
    if (!k.group.empty()) {
      out += fmt::format(
          "\n### {}\n\n| key | type | unit | default | environment | meaning |\n"
          "|---|---|---|---|---|---|\n",
          k.group);
    }
    std::string def = internal::Text(defaults, k.field);
    out += fmt::format("| `{}` | {} | {} | {} | `{}` | {} |\n", k.name, internal::TypeName(k.field),
                       k.unit.empty() ? "" : k.unit,
                       def.empty() ? "(empty)" : fmt::format("`{}`", def), EnvName(k.name),
                       MarkdownCell(k.help));
  });
  return out;
}

base::LogFields Summary(const ServerConfig& cfg) {
  base::LogFields out;
  ForEachDocumented([&](const Key& k) {
    std::string value = internal::Text(cfg, k.field);
    out.emplace_back(std::string(k.name), k.name == "redis-url" ? RedactUrl(value) : value);
  });
  return out;
}

}  // namespace chronoq::config
