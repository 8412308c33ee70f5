// The Lua scripts of the Redis backend (docs/redis.md): one per operation, each atomic on the
// keys of one topic (one hash tag). KEYS[1] is the topic's key prefix "cq:{<ns>:<topic>}:"; the
// node's clock comes as an argument. scripts*.cc have the contracts of each; lua_common.h the
// keys and record fields they share.
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
// Issue 14 (scripts_manage.cc, scripts_list.cc).
extern const std::string_view kUpdate;
extern const std::string_view kTouch;
extern const std::string_view kCount;
extern const std::string_view kList;

}  // namespace chronoq::redis::scripts
