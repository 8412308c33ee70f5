// The Lua scripts of the Redis backend (docs/redis.md): one per operation, each atomic on the
// keys of one topic (one hash tag). KEYS[1] is the topic's key prefix "cq:{<ns>:<topic>}:"; the
// node's clock comes as an argument, and every call's first argument is the node-local layers
// of the topic's configuration (RedisBackend::Eval puts it there; lua_common.h takes it off).
// scripts*.cc have the contracts of each; lua_common.h the keys and record fields they share.
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
// Issue 15 (scripts_topics.cc).
extern const std::string_view kConfigSet;
extern const std::string_view kConfigGet;
extern const std::string_view kConfigDelete;
extern const std::string_view kPurge;
extern const std::string_view kOutboxRead;
extern const std::string_view kOutboxDone;
extern const std::string_view kDeadLetterIn;
extern const std::string_view kRedriveOut;
extern const std::string_view kRedriveIn;
extern const std::string_view kRedriveDone;
// Issue 21 (scripts_import.cc).
extern const std::string_view kImport;
// Issue 21 (scripts_history.cc).
extern const std::string_view kHistory;
// Format 4's build step 7 (scripts_migrate.cc): called by `chronoq redis-migrate` only, with the
// topic's 'lay' key as a second key.
extern const std::string_view kMigrate;

}  // namespace chronoq::redis::scripts
