// Master discovery through Redis Sentinel: asks the sentinels, one after the other, for the
// address of the master they monitor under a name. Blocking (each sentinel is bounded by
// `timeout`); used by connections when they (re)connect.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "base/result.h"
#include "redis/redis_url.h"

namespace chronoq::redis {

// The master's address as the first sentinel that answers knows it. Fails (kUnavailable) when
// no sentinel answers or none knows the name, saying so for each sentinel.
Result<RedisEndpoint> AskSentinels(const std::vector<RedisEndpoint>& sentinels,
                                   const std::string& master_name,
                                   std::chrono::milliseconds timeout);

}  // namespace chronoq::redis
