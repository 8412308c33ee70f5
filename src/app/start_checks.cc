#include "app/start_checks.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>

#include <string>

#include "base/log.h"
#include "core/scope.h"

namespace chronoq::app {
namespace {

constexpr const char* kLog = "cq.app";

}  // namespace

int ExitCodeForStoreOpen(const Status& s) {
  switch (s.code()) {
    case Errc::kInvalidArgument:
      return kExitConfigRefused;
    case Errc::kUnavailable:
      return kExitDataDirInUse;
    default:
      return kExitFailure;
  }
}

bool IsLoopbackHost(std::string_view host) {
  if (host == "localhost") return true;
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    std::string v6(host.substr(1, host.size() - 2));
    in6_addr a6{};
    if (::inet_pton(AF_INET6, v6.c_str(), &a6) != 1) return false;
    if (IN6_IS_ADDR_LOOPBACK(&a6)) return true;
    return IN6_IS_ADDR_V4MAPPED(&a6) && a6.s6_addr[12] == 127;
  }
  in_addr a4{};
  if (::inet_pton(AF_INET, std::string(host).c_str(), &a4) != 1) return false;
  return (ntohl(a4.s_addr) >> 24) == 127;
}

bool WarnIfOpenToTheNetwork(const config::ServerConfig& cfg) {
  if (!cfg.auth_tokens_file.empty()) return false;  // every request needs a token
  std::vector<std::string> open;
  auto check = [&](std::string_view key, const std::string& listen) {
    std::string host;
    uint16_t port = 0;
    if (listen.empty() || !config::ParseListen(listen, &host, &port, key).ok()) return;
    if (!IsLoopbackHost(host)) open.push_back(fmt::format("{} {}", key, listen));
  };
  check("listen", cfg.listen);
  check("grpc-listen", cfg.grpc_listen);
  if (open.empty()) return false;
  CQ_LOG_WARN(kLog,
              "listening beyond loopback ({}) without authentication: anyone who can reach "
              "the port can send, read and delete messages; set auth-tokens-file "
              "(docs/security.md), listen on 127.0.0.1, or let only trusted clients reach it "
              "(firewall, authenticating proxy)",
              fmt::join(open, ", "));
  return true;
}

namespace {

// A set field's value as TOML text.
std::string FieldText(const core::TopicConfig& c, core::TopicField f) {
  using F = core::TopicField;
  switch (f) {
    case F::kCapacity:
      return std::to_string(c.capacity.value_or(0));
    case F::kTtl:
      return std::to_string(c.ttl.value_or(Millis(0)).count());
    case F::kMaxRetry:
      return std::to_string(c.max_retry.value_or(0));
    case F::kAckTimeout:
      return std::to_string(c.ack_timeout.value_or(Millis(0)).count());
    case F::kRetryInterval:
      return std::to_string(c.retry_interval.value_or(Millis(0)).count());
    case F::kDeadLetterTopic:
      return fmt::format("'{}'", core::DisplayTopic(c.dead_letter_topic.value_or("")));
    case F::kPaused:
      return c.paused.value_or(false) ? "true" : "false";
    case F::kHistory:
      return c.history.value_or(false) ? "true" : "false";
    case F::kCallback:  // never in the file
      return "";
  }
  return "";
}

}  // namespace

std::vector<std::string> ShadowedTopicSettings(
    std::string_view topic, const core::TopicConfig& file,
    const core::EffectiveTopicConfig& effective,
    const std::array<core::ConfigSource, core::kTopicFieldCount>& sources) {
  const core::TopicConfig stored{effective.capacity,       effective.ttl,
                                 effective.max_retry,      effective.ack_timeout,
                                 effective.retry_interval, effective.dead_letter_topic,
                                 effective.paused,         effective.callback,
                                 effective.history};
  std::vector<std::string> out;
  for (int i = 0; i < core::kTopicFieldCount; ++i) {
    const auto f = static_cast<core::TopicField>(i);
    if (!core::IsSet(file, f) || sources[i] != core::ConfigSource::kTopic) continue;
    out.push_back(fmt::format(
        "topic '{}': {} = {} from setTopicConfig (stored) shadows {} = {} of the config file's "
        "[{}] table; deleteTopicConfig or setTopicConfig changes it",
        core::DisplayTopic(topic), core::TopicFieldName(f), FieldText(stored, f),
        config::TopicFileKey(f), FieldText(file, f), config::TopicTableHeader(topic)));
  }
  return out;
}

}  // namespace chronoq::app
