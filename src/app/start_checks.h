// Checks and warnings of `chronoq serve` at start that stand apart from building the server:
// what the configuration exposes, and the exit code of each way a start can fail. Stateless
// functions, called once from RunServe on its thread.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "config/config.h"
#include "core/topic_config.h"

namespace chronoq::app {

// Exit codes of `chronoq serve` (README "Running in production"; deploy/systemd/chronoq.service
// does not restart after kExitConfigRefused or kExitDataDirInUse, since a restart cannot help).
inline constexpr int kExitOk = 0;             // stopped by SIGTERM or SIGINT
inline constexpr int kExitFailure = 1;        // could not listen, recovery or storage failed
inline constexpr int kExitConfigRefused = 2;  // invalid settings, not a store, other format
inline constexpr int kExitDataDirInUse = 3;   // another server holds the data directory's lock

// The exit code for a store that could not be opened (storage::RocksKv::Open's contract:
// kInvalidArgument for a directory it refuses, kUnavailable for one another server holds).
int ExitCodeForStoreOpen(const Status& s);

// True when `host` (as in `listen`, IPv6 in brackets) can only be reached from this machine:
// 127.0.0.0/8, [::1], an IPv4-mapped 127.x address, or "localhost".
bool IsLoopbackHost(std::string_view host);

// Logs one warning when the server can be reached from other machines without authentication:
// no auth-tokens-file, and `listen` or `grpc-listen` is not a loopback address (one line naming
// both when both are). Returns whether it warned.
bool WarnIfOpenToTheNetwork(const config::ServerConfig& cfg);

// The sentences of the start log for the fields of a file table [topics.<name>] that the topic's
// stored configuration (setTopicConfig) shadows, one per field: the API value wins
// (docs/topic-config.md) and the operator who edits the file should not miss that. `effective`
// and `sources` are getTopicConfig's answer for `topic`.
std::vector<std::string> ShadowedTopicSettings(
    std::string_view topic, const core::TopicConfig& file,
    const core::EffectiveTopicConfig& effective,
    const std::array<core::ConfigSource, core::kTopicFieldCount>& sources);

}  // namespace chronoq::app
