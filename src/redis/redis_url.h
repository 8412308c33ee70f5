// RedisUrl: where the Redis backend's data lives (--redis-url), parsed and checked at start-up.
//
//   redis://[[user]:password@]host:port[/db]                       one server
//   redis-sentinel://[[user]:password@]h1:p1,h2:p2/<master-name>   masters found through sentinels
//   redis-cluster://[[user]:password@]h1:p1,h2:p2                  Redis Cluster seed nodes
//
// Hosts are names, IPv4 addresses or bracketed IPv6 addresses ([::1]:6379); the port is
// required. User and password may be percent-encoded (%40 for '@'). The password is the one of
// the data nodes; sentinels are reached without one.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace chronoq::redis {

enum class RedisMode { kStandalone, kSentinel, kCluster };

struct RedisEndpoint {
  std::string host;
  int port = 0;
  bool operator==(const RedisEndpoint&) const = default;
};

struct RedisUrl {
  RedisMode mode = RedisMode::kStandalone;
  std::vector<RedisEndpoint> endpoints;  // standalone: exactly one
  std::string username;                  // empty: AUTH with the password alone
  std::string password;                  // empty: no AUTH
  int db = 0;                            // standalone only
  std::string master_name;               // sentinel only

  // The URL with the password replaced by "***", for logs and messages.
  std::string Redacted() const;
};

// Parses `url`; the error says which part is wrong and how (kInvalidArgument).
Result<RedisUrl> ParseRedisUrl(std::string_view url);

}  // namespace chronoq::redis
