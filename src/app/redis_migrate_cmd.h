// `chronoq redis-migrate` (docs/redis.md "Migration from layouts 1-3", README "Upgrades"): moves
// a Redis namespace's topics from redis-format 1-3's keys to format 4's, offline, through
// redis::MigrateTopic. In app/ because it needs the Redis connection (redis/) and the CLI's
// argument parsing (cli/).
#pragma once

#include <string>
#include <vector>

namespace chronoq::app {

// Prints to stdout/stderr; returns the exit code of cli/call.h (0 done, 1 a --topic that does
// not exist, 2 usage, 3 Redis unreachable or refusing).
int RunRedisMigrate(const std::vector<std::string>& args);

}  // namespace chronoq::app
