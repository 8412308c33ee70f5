#include "config/config.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <variant>

#include "base/log.h"
#include "config/key_table.h"
#include "core/callback.h"

namespace chronoq::config {
namespace internal {

const std::vector<Key>& Keys() {
  static const std::vector<Key> keys = {
      {"listen", &ServerConfig::listen,
       "Address to listen on, HOST:PORT ([::1]:8080 for IPv6; port 0 picks a free one)", "",
       "Network"},
      {"http-threads", &ServerConfig::http_threads, "HTTP worker threads (1 to 64)", "threads"},
      {"max-connections", &ServerConfig::max_connections,
       "Most open HTTP connections; a connection beyond is answered HTTP 503 with Retry-After: 1 "
       "and closed at once. Every parked long poll holds one: the default holds "
       "max-parked-long-polls (10,000) and 6,384 other clients. Lowered at start, with a "
       "warning, to fit the file-descriptor limit (ulimit -n) minus 256 kept for the store and "
       "the server itself; the soft limit is raised toward the hard one first "
       "(docs/configuration.md, Connections)",
       "connections"},
      {"idle-timeout-millis", &ServerConfig::idle_timeout_millis,
       "A keep-alive connection waiting this long for its next request is closed", "ms"},
      {"request-timeout-millis", &ServerConfig::request_timeout_millis,
       "Time a client has to send a whole request, header and body, counted from its first byte; "
       "a slower client (slow-loris) is disconnected without an answer. Also bounds writing an "
       "answer",
       "ms"},
      {"grpc-listen", &ServerConfig::grpc_listen,
       "Address of the gRPC API (proto/chronoq/v1/delay_queue.proto), HOST:PORT like listen; "
       "empty: no gRPC server. It refuses a request larger than max-msg-bytes plus 64 KiB"},
      {"grpc-engine", &ServerConfig::grpc_engine,
       "The gRPC server on grpc-listen: h2 (our own HTTP/2 server, framing HTTP/2 itself; the "
       "fewest instructions and cache misses per call, docs/benchmarks.md), nghttp2 (the same "
       "server with HTTP/2 framed by libnghttp2) or grpc++ (gRPC's C++ server). All three serve "
       "the same methods, health, reflection, TLS and limits (docs/grpc.md). h2-experimental is "
       "an alias of h2 (its name while it was under review)"},
      {"tls-cert-file", &ServerConfig::tls_cert_file,
       "PEM certificate (then its intermediates) of the server: with tls-key-file, listen serves "
       "HTTPS and grpc-listen TLS; empty: plain. Re-read with the key on SIGHUP (new connections "
       "get the new certificate; a file that fails the checks keeps the one in use)",
       "", "TLS"},
      {"tls-key-file", &ServerConfig::tls_key_file,
       "PEM private key of tls-cert-file, unencrypted (only its path is ever shown or logged)"},
      {"tls-client-ca-file", &ServerConfig::tls_client_ca_file,
       "PEM CA certificates: when set, every HTTPS and gRPC client must present a certificate "
       "signed by one of them (mutual TLS); empty: none asked for"},
      {"tls-handshake-timeout-millis", &ServerConfig::tls_handshake_timeout_millis,
       "A client that has not completed its TLS handshake this long after connecting is "
       "disconnected",
       "ms"},
      {"storage", &ServerConfig::storage,
       "Storage engine: embedded (durable, RocksDB in data-dir), memory (lost on restart) or "
       "redis (several nodes on one Redis, see redis-url)",
       "", "Storage"},
      {"redis-url", &ServerConfig::redis_url,
       "Redis storage: redis://[:password@]host:port[/db], "
       "redis-sentinel://[:password@]h1:p1,h2:p2/<master-name> or "
       "redis-cluster://[:password@]h1:p1,h2:p2 (docs/redis.md)"},
      {"redis-wait-replicas", &ServerConfig::redis_wait_replicas,
       "Redis storage: a write answers only once this many replicas have it (WAIT); 0: do not "
       "wait",
       "replicas"},
      {"redis-format", &ServerConfig::redis_format,
       "Redis storage: the record format this node writes (every format is read): 1 hashes "
       "(nodes before issue 20), 2 MessagePack strings (issue 20), 3 the same with integers "
       "(about 31 bytes less per message, a little more Redis CPU), 4 the same records in the "
       "bucketed keyspace for the topics this node creates (about 290 bytes per waiting message "
       "instead of 620-650, more Redis CPU per send; docs/redis.md \"Format 4\"). In a rolling "
       "upgrade keep the format the oldest node reads until every node is upgraded (README, "
       "Upgrades)",
       "version"},
      {"data-dir", &ServerConfig::data_dir,
       "Directory of the embedded store (created when missing; one server per directory)"},
      {"sync-writes", &ServerConfig::sync_writes,
       "Embedded store: fsync the write-ahead log before answering (one fsync per group "
       "commit). Without it a crash of the process loses nothing answered, but a power loss or "
       "kernel crash loses the answered writes the OS had not yet written back (about the last "
       "35 s with Linux's defaults; README, Storage and durability)"},
      {"memory-horizon-millis", &ServerConfig::memory_horizon_millis,
       "Pending messages due later than this from now stay on disk, counted but not held in "
       "memory (at least 1000)",
       "ms"},
      {"namespace", &ServerConfig::ns,
       "Namespace isolating servers that share one storage backend"},
      {"history-max-entries", &ServerConfig::history_max_entries,
       "Message history (a topic's history=true): entries kept per message, the oldest dropped "
       "first (1..10000)",
       "entries"},
      {"node-id", &ServerConfig::node_id,
       "This node's name in message histories; empty: the host name"},
      {"ttl-millis", &ServerConfig::ttl_millis,
       "Default ttl of a message after its trigger time (sendMsg ttlMillis <= 0 or absent)", "ms",
       "Queue defaults (camellia's keys)"},
      {"max-retry", &ServerConfig::max_retry,
       "Default maxRetry (at most maxRetry + 1 deliveries) when sendMsg gives none", "retries"},
      {"ack-timeout-millis", &ServerConfig::ack_timeout_millis,
       "Default time to ack a pulled message before it is delivered again", "ms"},
      {"end-life-msg-expire-millis", &ServerConfig::end_life_msg_expire_millis,
       "How long ended messages stay readable with getMsg", "ms"},
      {"long-polling-timeout-millis", &ServerConfig::long_polling_timeout_millis,
       "Default time a longPollingMsg request waits for a message", "ms"},
      {"monitor-interval-seconds", &ServerConfig::monitor_interval_seconds,
       "Length of a getMonitorData statistics interval", "s"},
      {"topic-inactive-millis", &ServerConfig::topic_inactive_millis,
       "A topic idle and empty this long is forgotten (leaves getTopicInfoList)", "ms"},
      {"max-topic-bytes", &ServerConfig::max_topic_bytes, "Longest topic (UTF-8)", "bytes",
       "Limits"},
      {"max-msg-id-bytes", &ServerConfig::max_msg_id_bytes, "Longest msgId (UTF-8)", "bytes"},
      {"max-msg-bytes", &ServerConfig::max_msg_bytes, "Largest payload (msg)", "bytes"},
      {"max-body-bytes", &ServerConfig::max_body_bytes, "Largest request body (larger: HTTP 413)",
       "bytes"},
      {"max-header-bytes", &ServerConfig::max_header_bytes,
       "Largest request header block (larger: HTTP 431; at least 1024)", "bytes"},
      {"max-pull-batch", &ServerConfig::max_pull_batch,
       "Largest pull batch; larger requests are clamped", "messages"},
      {"max-send-batch", &ServerConfig::max_send_batch,
       "Most messages in one sendMsgBatch; more is refused (HTTP 400)", "messages"},
      {"max-long-polling-timeout-millis", &ServerConfig::max_long_polling_timeout_millis,
       "Longest long-poll wait; longer requests are clamped", "ms"},
      {"max-parked-long-polls", &ServerConfig::max_parked_long_polls,
       "Most long polls parked at once; more are answered at once with what one pull finds "
       "(usually an empty list)",
       "requests"},
      {"max-parked-long-polls-per-topic", &ServerConfig::max_parked_long_polls_per_topic,
       "Most long polls parked at once on one topic; more are answered like the above. The "
       "default, as many as in total, lets every consumer of one busy topic park",
       "requests"},
      {"max-delay-millis", &ServerConfig::max_delay_millis,
       "Largest delayMillis accepted (default 10 years)", "ms"},
      {"log-level", &ServerConfig::log_level,
       "Least severe level logged: trace, debug, info, warn, error or off", "", "Logging"},
      {"log-format", &ServerConfig::log_format,
       "text (one line per event) or json (one JSON object per line)"},
      {"metrics-max-topics", &ServerConfig::metrics_max_topics,
       "GET /metrics: topics with their own topic label (the first seen since the start); "
       "further topics are counted under topic=\"_other\"",
       "topics", "Metrics"},
      {"push-allowed-targets", &ServerConfig::push_allowed_targets,
       "Hosts a message's callback may reach, comma-separated: host, host:port, *.domain, "
       "*.domain:port or * (every host). Empty: push delivery is off and a send with a callback "
       "is refused (docs/push.md)",
       "", "Push delivery"},
      {"auth-tokens-file", &ServerConfig::auth_tokens_file,
       "File of access tokens, one per line '<token> <namespace> <role> [rate=<n>]' (role "
       "producer, consumer or admin; namespace '*' or a name that scopes the token's topics; "
       "rate: requests per second allowed to the token). Set: every "
       "request but /camellia/health/check and status needs a token; re-read on SIGHUP (a file "
       "with an error keeps the old tokens). Empty: no authentication (docs/security.md)",
       "", "Security"},
      {"test-clock", &ServerConfig::test_clock,
       "Tests only: a manual clock moved by POST /chronoq/test/advanceClock", "", "", true},
  };
  return keys;
}

const Key* FindKey(std::string_view name) {
  for (const Key& k : Keys()) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

std::string Text(const ServerConfig& cfg, const Field& f) {
  return std::visit(
      [&](auto member) -> std::string {
        using T = std::decay_t<decltype(cfg.*member)>;
        if constexpr (std::is_same_v<T, bool>) {
          return cfg.*member ? "true" : "false";
        } else {
          return fmt::format("{}", cfg.*member);
        }
      },
      f);
}

std::string_view TypeName(const Field& f) {
  if (std::holds_alternative<std::string ServerConfig::*>(f)) return "string";
  if (std::holds_alternative<int64_t ServerConfig::*>(f)) return "integer";
  return "boolean";
}

}  // namespace internal

namespace {

using internal::Field;
using internal::FindKey;
using internal::Key;
using internal::Keys;
using internal::Text;

bool IsBool(const Field& f) { return std::holds_alternative<bool ServerConfig::*>(f); }

}  // namespace

std::vector<KeyDoc> ConfigKeys() {
  ServerConfig defaults;
  std::vector<KeyDoc> out;
  for (const Key& k : Keys()) {
    out.push_back({k.name, k.help, k.unit, Text(defaults, k.field), k.hidden});
  }
  return out;
}

Status SetKey(ServerConfig& cfg, std::string_view key, std::string_view value) {
  const Key* k = FindKey(key);
  if (k == nullptr) return InvalidArgument(fmt::format("unknown setting '{}'", key));
  if (auto* s = std::get_if<std::string ServerConfig::*>(&k->field)) {
    cfg.** s = std::string(value);
    return Status::Ok();
  }
  if (auto* i = std::get_if<int64_t ServerConfig::*>(&k->field)) {
    int64_t v = 0;
    auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (value.empty() || ec != std::errc() || ptr != value.data() + value.size()) {
      return InvalidArgument(fmt::format("{}: '{}' is not an integer", key, value));
    }
    cfg.** i = v;
    return Status::Ok();
  }
  auto* b = std::get_if<bool ServerConfig::*>(&k->field);
  if (value == "true" || value == "1" || value == "yes" || value == "on") {
    cfg.** b = true;
  } else if (value == "false" || value == "0" || value == "no" || value == "off") {
    cfg.** b = false;
  } else {
    return InvalidArgument(fmt::format("{}: '{}' is not a boolean (true or false)", key, value));
  }
  return Status::Ok();
}

Status ParseListen(std::string_view text, std::string* host, uint16_t* port, std::string_view key) {
  size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0) {
    return InvalidArgument(fmt::format("{}: '{}' is not HOST:PORT", key, text));
  }
  std::string_view h = text.substr(0, colon);
  std::string_view p = text.substr(colon + 1);
  if (h.find(':') != std::string_view::npos && !(h.front() == '[' && h.back() == ']')) {
    return InvalidArgument(
        fmt::format("{}: IPv6 hosts go in brackets, as [::1]:8080; got '{}'", key, text));
  }
  unsigned v = 0;
  auto [ptr, ec] = std::from_chars(p.data(), p.data() + p.size(), v);
  if (p.empty() || ec != std::errc() || ptr != p.data() + p.size() || v > 65535) {
    return InvalidArgument(fmt::format("{}: '{}' is not a port number (0-65535)", key, p));
  }
  *host = std::string(h);
  *port = static_cast<uint16_t>(v);
  return Status::Ok();
}

std::vector<std::string> Validate(const ServerConfig& c) {
  std::vector<std::string> errors;
  auto positive = [&](std::string_view key, int64_t v) {
    if (v <= 0) errors.push_back(fmt::format("{} must be > 0, got {}", key, v));
  };
  std::string host;
  uint16_t port;
  if (Status s = ParseListen(c.listen, &host, &port); !s.ok()) errors.push_back(s.message());
  if (!c.grpc_listen.empty()) {
    if (Status s = ParseListen(c.grpc_listen, &host, &port, "grpc-listen"); !s.ok()) {
      errors.push_back(s.message());
    }
  }
  // h2-experimental, h2's alias, is h2 by now (Load).
  if (c.grpc_engine != "h2" && c.grpc_engine != "nghttp2" && c.grpc_engine != "grpc++") {
    errors.push_back(fmt::format(
        "grpc-engine must be h2, nghttp2 or grpc++ (h2-experimental: an alias of h2), got '{}'",
        c.grpc_engine));
  }
  if (c.http_threads < 1 || c.http_threads > 64) {
    errors.push_back(fmt::format("http-threads must be between 1 and 64, got {}", c.http_threads));
  }
  if (c.max_connections < 1 || c.max_connections > 10'000'000) {
    errors.push_back(
        fmt::format("max-connections must be between 1 and 10000000, got {}", c.max_connections));
  }
  positive("idle-timeout-millis", c.idle_timeout_millis);
  if (c.tls_cert_file.empty() != c.tls_key_file.empty()) {
    errors.push_back(c.tls_cert_file.empty()
                         ? "tls-key-file is set but tls-cert-file is not: TLS needs both"
                         : "tls-cert-file is set but tls-key-file is not: TLS needs both");
  }
  if (!c.tls_client_ca_file.empty() && c.tls_cert_file.empty()) {
    errors.push_back(
        "tls-client-ca-file needs tls-cert-file and tls-key-file (client certificates are "
        "asked for over TLS only)");
  }
  positive("tls-handshake-timeout-millis", c.tls_handshake_timeout_millis);
  positive("request-timeout-millis", c.request_timeout_millis);
  if (c.storage != "memory" && c.storage != "embedded" && c.storage != "redis") {
    errors.push_back(fmt::format(
        "storage: unknown engine '{}' (available: embedded, memory, redis)", c.storage));
  }
  if (c.redis_wait_replicas < 0 || c.redis_wait_replicas > 100) {
    errors.push_back(fmt::format("redis-wait-replicas must be between 0 and 100, got {}",
                                 c.redis_wait_replicas));
  }
  if (c.redis_format < 1 || c.redis_format > 4) {
    errors.push_back(
        fmt::format("redis-format must be 1 (hashes), 2 (MessagePack strings), 3 (MessagePack with "
                    "integers) or 4 (the same in the bucketed keyspace), got {}",
                    c.redis_format));
  }
  if (c.storage == "redis" && c.redis_url.empty()) {
    errors.push_back("redis-url is required with storage=redis (redis://host:port)");
  }
  if (c.storage == "embedded" && c.data_dir.empty()) errors.push_back("data-dir must not be empty");
  if (c.memory_horizon_millis < 1000) {
    errors.push_back(
        fmt::format("memory-horizon-millis must be >= 1000, got {}", c.memory_horizon_millis));
  }
  if (c.ns.empty()) errors.push_back("namespace must not be empty");
  positive("ttl-millis", c.ttl_millis);
  if (c.max_retry < 0 || c.max_retry > INT32_MAX) {
    errors.push_back(
        fmt::format("max-retry must be between 0 and {}, got {}", INT32_MAX, c.max_retry));
  }
  positive("ack-timeout-millis", c.ack_timeout_millis);
  if (c.end_life_msg_expire_millis < 0) {
    errors.push_back(fmt::format("end-life-msg-expire-millis must be >= 0, got {}",
                                 c.end_life_msg_expire_millis));
  }
  positive("long-polling-timeout-millis", c.long_polling_timeout_millis);
  positive("monitor-interval-seconds", c.monitor_interval_seconds);
  if (c.history_max_entries < 1 || c.history_max_entries > 10'000) {
    errors.push_back(fmt::format("history-max-entries must be between 1 and 10000, got {}",
                                 c.history_max_entries));
  }
  if (c.metrics_max_topics < 0) {
    errors.push_back(fmt::format("metrics-max-topics must be >= 0, got {}", c.metrics_max_topics));
  }
  positive("topic-inactive-millis", c.topic_inactive_millis);
  positive("max-topic-bytes", c.max_topic_bytes);
  positive("max-msg-id-bytes", c.max_msg_id_bytes);
  positive("max-msg-bytes", c.max_msg_bytes);
  positive("max-body-bytes", c.max_body_bytes);
  if (c.max_header_bytes < 1024) {
    errors.push_back(fmt::format("max-header-bytes must be >= 1024, got {}", c.max_header_bytes));
  }
  if (c.max_pull_batch < 1 || c.max_pull_batch > INT32_MAX) {
    errors.push_back(fmt::format("max-pull-batch must be between 1 and {}, got {}", INT32_MAX,
                                 c.max_pull_batch));
  }
  if (c.max_send_batch < 1 || c.max_send_batch > INT32_MAX) {
    errors.push_back(fmt::format("max-send-batch must be between 1 and {}, got {}", INT32_MAX,
                                 c.max_send_batch));
  }
  positive("max-long-polling-timeout-millis", c.max_long_polling_timeout_millis);
  positive("max-parked-long-polls", c.max_parked_long_polls);
  positive("max-parked-long-polls-per-topic", c.max_parked_long_polls_per_topic);
  positive("max-delay-millis", c.max_delay_millis);
  if (auto allowed = core::TargetAllowlist::Parse(c.push_allowed_targets); !allowed.has_value()) {
    errors.push_back(allowed.error().message());
  }
  base::LogLevel level;
  if (!base::ParseLogLevel(c.log_level, &level)) {
    errors.push_back(fmt::format(
        "log-level must be one of trace, debug, info, warn, error, off; got '{}'", c.log_level));
  }
  if (c.log_format != "text" && c.log_format != "json") {
    errors.push_back(fmt::format("log-format must be text or json, got '{}'", c.log_format));
  }
  return errors;
}

FlagResult ParseFlags(const std::vector<std::string>& args) {
  FlagResult out;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      out.help = true;
      continue;
    }
    if (a == "--print-config") {
      out.print_config = true;
      continue;
    }
    if (a.rfind("--", 0) != 0 || a.size() == 2) {
      out.errors.push_back(
          fmt::format("unexpected argument '{}' (flags look like --key=value)", a));
      continue;
    }
    std::string_view body = std::string_view(a).substr(2);
    size_t eq = body.find('=');
    std::string_view name = body.substr(0, eq);
    const Key* k = FindKey(name);
    if (k == nullptr && name != "config") {
      out.errors.push_back(fmt::format("unknown flag '--{}'", name));
      continue;
    }
    std::string value;
    if (eq != std::string_view::npos) {
      value = std::string(body.substr(eq + 1));
    } else if (k != nullptr && IsBool(k->field)) {
      value = "true";
    } else if (i + 1 < args.size() && args[i + 1].rfind("--", 0) != 0) {
      value = args[++i];
    } else {
      out.errors.push_back(fmt::format("flag '--{}' needs a value (--{}=VALUE)", name, name));
      continue;
    }
    if (k != nullptr) {
      out.settings.emplace_back(std::string(name), std::move(value));
    } else if (value.empty()) {
      out.errors.push_back("flag --config needs a file (--config=/etc/chronoq/chronoq.toml)");
    } else {
      out.config_file = std::move(value);
    }
  }
  return out;
}

LoadResult Load(const std::vector<std::string>& args, const char* const* env) {
  LoadResult out;
  FlagResult flags = ParseFlags(args);
  out.help = flags.help;
  out.print_config = flags.print_config;
  auto append = [&out](std::vector<std::string> more) {
    for (std::string& e : more) out.errors.push_back(std::move(e));
  };
  if (!flags.config_file.empty()) append(ApplyConfigFile(flags.config_file, &out.config));
  append(ApplyEnvironment(env, &out.config));
  append(std::move(flags.errors));
  for (const auto& [key, value] : flags.settings) {
    Status s = SetKey(out.config, key, value);
    if (!s.ok()) out.errors.push_back(fmt::format("flag --{}", s.message()));
  }
  // The engine's name while it was under review (docs/grpc.md): the same engine, named as the
  // rest of the server knows it.
  if (out.config.grpc_engine == "h2-experimental") out.config.grpc_engine = "h2";
  append(Validate(out.config));
  append(ValidateTopicTables(out.config));
  return out;
}

std::string EnvName(std::string_view key) {
  std::string out = "CHRONOQ_";
  for (char c : key) {
    out.push_back(c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  }
  return out;
}

std::vector<std::string> ApplyEnvironment(const char* const* env, ServerConfig* cfg) {
  std::vector<std::string> errors;
  if (env == nullptr) return errors;
  for (const char* const* e = env; *e != nullptr; ++e) {
    std::string_view entry(*e);
    if (entry.rfind("CHRONOQ_", 0) != 0) continue;
    size_t eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view name = entry.substr(0, eq);
    for (const Key& k : Keys()) {
      if (k.hidden || EnvName(k.name) != name) continue;
      Status s = SetKey(*cfg, k.name, entry.substr(eq + 1));
      if (!s.ok()) errors.push_back(fmt::format("environment variable {}: {}", name, s.message()));
      break;
    }
  }
  return errors;
}

core::Limits ToLimits(const ServerConfig& c) {
  core::Limits l;
  l.max_topic_bytes = static_cast<size_t>(c.max_topic_bytes);
  l.max_msg_id_bytes = static_cast<size_t>(c.max_msg_id_bytes);
  l.max_msg_bytes = static_cast<size_t>(c.max_msg_bytes);
  l.max_pull_batch = static_cast<int32_t>(c.max_pull_batch);
  l.max_send_batch = static_cast<int32_t>(c.max_send_batch);
  l.max_long_polling_timeout = Millis(c.max_long_polling_timeout_millis);
  l.max_parked_long_polls = static_cast<size_t>(c.max_parked_long_polls);
  l.max_parked_long_polls_per_topic = static_cast<size_t>(c.max_parked_long_polls_per_topic);
  l.max_delay = Millis(c.max_delay_millis);
  return l;
}

core::Defaults ToDefaults(const ServerConfig& c) {
  core::Defaults d;
  d.ttl = Millis(c.ttl_millis);
  d.max_retry = static_cast<int32_t>(c.max_retry);
  d.ack_timeout = Millis(c.ack_timeout_millis);
  d.long_polling_timeout = Millis(c.long_polling_timeout_millis);
  return d;
}

}  // namespace chronoq::config
