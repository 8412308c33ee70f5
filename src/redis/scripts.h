// The Lua scripts of the Redis backend (docs/redis.md): one per operation, each atomic on the
// keys of one topic (one hash tag). KEYS[1] is the topic's key prefix "cq:{<ns>:<topic>}:"; the
// node's clock comes as an argument. scripts.cc has the contracts of each.
#pragma once

#include <string_view>

namespace chronoq::redis::scripts {

extern const std::string_view kSend;
extern const std::string_view kPull;
extern const std::string_view kAck;
extern const std::string_view kDelete;
extern const std::string_view kGet;
extern const std::string_view kInfo;
extern const std::string_view kWake;

}  // namespace chronoq::redis::scripts
