// ServerConfig: every setting of `chronoq serve`, with its meaning, unit and default, in one
// table (ConfigKeys) that the parsers, validation, `serve --help`, docs/configuration.md and the
// sample deploy/chronoq.toml share. Keys of API.md sections 7 and 8 keep camellia's names. Every
// setting is read once at start: changing one needs a restart (the content of auth-tokens-file is
// re-read on SIGHUP).
//
// Sources, later ones winning (Load): the defaults below, the TOML file of `--config=FILE` (keys
// as the flags, e.g. `ttl-millis = 60000`), environment variables `CHRONOQ_<KEY>` (the key
// upper-cased with '-' as '_', e.g. CHRONOQ_TTL_MILLIS), then command-line flags
// `--<key>=<value>` (or `--<key> <value>`; a bare `--<flag>` sets a boolean). Every value is
// checked; all problems of all sources are reported, not only the first.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/log.h"
#include "base/status.h"
#include "core/limits.h"
#include "core/topic_config.h"

namespace chronoq::config {

struct ServerConfig {
  // Network.
  std::string listen = "0.0.0.0:8080";  // HOST:PORT; port 0 picks a free port
  int64_t http_threads = 2;             // HTTP worker threads
  // More are answered 503 and closed; fitted to the fd limit at start. The default holds every
  // parked long poll (max_parked_long_polls) plus 6,384 other clients.
  int64_t max_connections = 16'384;
  int64_t idle_timeout_millis = 120'000;    // keep-alive connection without a request: closed
  int64_t request_timeout_millis = 60'000;  // whole request from its first byte (slow-loris)
  // The gRPC API (API-EXTENSIONS.md section 6): HOST:PORT; empty: no gRPC server.
  std::string grpc_listen = "0.0.0.0:9090";
  // The gRPC server (docs/grpc.md): "h2" (our own HTTP/2 server framing HTTP/2 itself,
  // grpc_api/h2_own_session.h), "nghttp2" (the same server over libnghttp2's sessions) or
  // "grpc++" (gRPC's C++ server). Load turns the alias "h2-experimental" into "h2".
  std::string grpc_engine = "h2";
  // TLS (docs/security.md): HTTPS on `listen` and TLS on `grpc-listen` when both files are set.
  std::string tls_cert_file;       // PEM certificate chain; re-read on SIGHUP
  std::string tls_key_file;        // PEM private key (a secret: only the path is ever shown)
  std::string tls_client_ca_file;  // PEM CAs; set: clients must present a certificate of them
  int64_t tls_handshake_timeout_millis = 10'000;  // a client silent during the handshake: closed
  // Storage.
  std::string storage = "embedded";  // embedded (RocksDB in data_dir), memory or redis
  std::string redis_url;             // redis storage: where (docs/redis.md)
  int64_t redis_wait_replicas = 0;   // redis storage: WAIT for this many replicas
  int64_t redis_format = 2;          // redis storage: record format written (1..3; all are read)
  std::string data_dir = "./data";   // embedded storage: the store's directory
  bool sync_writes = false;          // embedded storage: fsync the WAL before answering
  int64_t memory_horizon_millis = 60'000;  // pending messages due later stay on disk only
  std::string ns = "default";              // key "namespace": isolates servers sharing a backend
  // Message history (topic configuration `history`, getMsgHistory): the entries kept per message
  // (oldest dropped first), and the node name written in each entry ("": the host name).
  int64_t history_max_entries = 32;
  std::string node_id;
  // Queue semantics (camellia keys).
  int64_t ttl_millis = 3'600'000;
  int64_t max_retry = 10;
  int64_t ack_timeout_millis = 30'000;
  int64_t end_life_msg_expire_millis = 300'000;
  int64_t long_polling_timeout_millis = 10'000;
  int64_t monitor_interval_seconds = 60;
  int64_t topic_inactive_millis = 1'800'000;
  // Limits (API.md section 8).
  int64_t max_topic_bytes = 255;
  int64_t max_msg_id_bytes = 255;
  int64_t max_msg_bytes = int64_t{4} << 20;
  int64_t max_body_bytes = int64_t{8} << 20;
  int64_t max_header_bytes = 16 * 1024;
  int64_t max_pull_batch = 1000;
  int64_t max_send_batch = 1000;
  int64_t max_long_polling_timeout_millis = 120'000;
  int64_t max_parked_long_polls = 10'000;  // in total; more are answered at once
  // As many as in total by default: all consumers of one topic may park (10,000 on one topic).
  int64_t max_parked_long_polls_per_topic = 10'000;
  int64_t max_delay_millis = core::kTenYears.count();
  // Operations.
  std::string log_level = "info";     // trace|debug|info|warn|error|off
  std::string log_format = "text";    // text|json
  int64_t metrics_max_topics = 1000;  // GET /metrics: topics with their own label; more: "_other"
  // Push delivery (docs/push.md): the targets callbacks may reach; empty: none (push is off).
  std::string push_allowed_targets;
  // Security (docs/security.md): the tokens file; empty: no authentication. Re-read on SIGHUP.
  std::string auth_tokens_file;
  bool test_clock = false;  // tests only: manual clock advanced over HTTP
  // The file's [topics.<name>] tables (docs/topic-config.md): per-topic defaults, under a topic's
  // stored configuration (setTopicConfig) and over the settings above. File only: no environment
  // variable or flag sets them. Keyed by internal topic name (core/scope.h): a table
  // [namespaces.<ns>.topics.<name>] is the topic <name> of namespace <ns>. A table's
  // dead-letter topic is its client name (StoreTopicTables gives the internal one).
  std::map<std::string, core::TopicConfig, std::less<>> topics{};

  bool operator==(const ServerConfig&) const = default;
};

struct KeyDoc {
  std::string_view name;
  std::string_view help;
  std::string_view unit;  // "ms", "bytes", ...; empty when none
  std::string default_text;
  bool hidden = false;  // not shown in --help (test-only keys)
};

// Every key, in documentation order.
std::vector<KeyDoc> ConfigKeys();

// Sets one key from its text form. kInvalidArgument naming the key when unknown or malformed.
Status SetKey(ServerConfig& cfg, std::string_view key, std::string_view value);

// Every semantic problem of a configuration ("ttl-millis must be > 0, got 0"); empty when valid.
std::vector<std::string> Validate(const ServerConfig& cfg);

struct FlagResult {
  std::vector<std::string> errors;  // one sentence per bad flag (unknown, or without its value)
  std::vector<std::pair<std::string, std::string>> settings;  // key, value: in order
  std::string config_file;                                    // --config=FILE
  bool help = false;
  bool print_config = false;
};
// Parses the arguments after "serve" (values are checked when applied, by Load).
FlagResult ParseFlags(const std::vector<std::string>& args);

// The effective configuration of `chronoq serve <args>` and every problem found on the way:
// defaults < the --config file < the CHRONOQ_<KEY> variables of `env` < flags, then Validate.
struct LoadResult {
  ServerConfig config;
  std::vector<std::string> errors;  // file, environment, flags, then semantic problems
  bool help = false;                // --help: print HelpText() instead of running
  bool print_config = false;        // --print-config: print PrintToml(config) instead of running
};
LoadResult Load(const std::vector<std::string>& args, const char* const* env);

// Applies the settings of a TOML document; `source` names it in the problems ("config file
// /etc/chronoq/chronoq.toml line 3: unknown setting 'tll-millis'"). A syntax error is one problem
// (with its line); otherwise each unknown key, wrong type or malformed value is one.
std::vector<std::string> ApplyToml(std::string_view text, std::string_view source,
                                   ServerConfig* cfg);
// Reads `path` and applies it (ApplyToml); an unreadable file is one problem.
std::vector<std::string> ApplyConfigFile(const std::string& path, ServerConfig* cfg);

// Applies the CHRONOQ_<KEY> variables found in `env` ("NAME=value" strings, nullptr-terminated,
// like `environ`) for every documented key (test-only keys are never read from the environment).
// Other variables are ignored. Returns one sentence per malformed value, naming the variable.
std::vector<std::string> ApplyEnvironment(const char* const* env, ServerConfig* cfg);

// "CHRONOQ_TTL_MILLIS" for "ttl-millis".
std::string EnvName(std::string_view key);

// `chronoq serve --help`.
std::string HelpText();
// `chronoq serve --print-config`: every documented key as TOML that --config reads back; the
// password of redis-url redacted.
std::string PrintToml(const ServerConfig& cfg);
// deploy/chronoq.toml: every documented key commented out with its meaning, unit and default.
std::string SampleToml();
// The table of docs/configuration.md (between its generated-section markers).
std::string MarkdownReference();
// The configuration for the start log line, key by key; no secrets (redis-url redacted).
base::LogFields Summary(const ServerConfig& cfg);
// A redis URL with the password replaced by "***" (it stays recognisable).
std::string RedactUrl(std::string_view url);

// "HOST:PORT" or "[v6]:PORT" -> host (brackets kept) and port. Errors name `key`.
Status ParseListen(std::string_view text, std::string* host, uint16_t* port,
                   std::string_view key = "listen");

// The key of a [topics.<name>] field in the file: "capacity", "ttl-millis", "max-retry",
// "ack-timeout-millis", "retry-interval-millis", "dead-letter-topic", "paused" (kebab-case like
// every key of the file; the API spells them capacity, ttlMillis, ...).
std::string_view TopicFileKey(core::TopicField f);
// The problems of the [topics.<name>] tables (core::ValidateTopicConfig with the configured
// limits), each naming the table and the field: "[topics.orders] capacity must be at least 0,
// got -1".
std::vector<std::string> ValidateTopicTables(const ServerConfig& cfg);
// The tables as TOML (--print-config); empty when there are none.
std::string TopicTablesToml(const ServerConfig& cfg);
// The header of the table of the internal topic name `topic` (core/scope.h), without brackets:
// "topics.orders", or "namespaces.shop.topics.orders" for the topic `orders` of namespace `shop`.
std::string TopicTableHeader(std::string_view topic);
// The tables as the store reads them (QueueService's topic_files): a namespaced table's
// dead-letter topic is in its namespace too, so it gets its internal name.
std::map<std::string, core::TopicConfig, std::less<>> StoreTopicTables(const ServerConfig& cfg);

core::Limits ToLimits(const ServerConfig& cfg);
core::Defaults ToDefaults(const ServerConfig& cfg);

}  // namespace chronoq::config
