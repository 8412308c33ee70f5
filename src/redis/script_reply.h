// Reading the replies of the Redis backend's scripts (scripts.h): records, numbers, the errors
// every operation words the same way. Private to src/redis/; plain functions, no state.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "base/status.h"
#include "base/time.h"
#include "core/history.h"
#include "core/message.h"
#include "core/state_machine.h"
#include "redis/reply.h"

namespace chronoq::redis {

// A record in a reply: id, payload, pt, tt, et, mr, r, ph, es, va, ea, sq, pr, ct, c, le, ri,
// dt, ds, dr, de, cb, pu (lua_common.h).
inline constexpr size_t kRecordFields = 23;

// Epoch milliseconds as a decimal string, as the scripts take times.
std::string Ms(TimePoint t);
int64_t ToInt(const std::string& s);
// The string of a reply element (bulk string, status, or integer).
std::string Str(const RedisReply& r);

// The record of the kRecordFields elements of `e` from `at` on. REQUIRES: they are there.
core::MessageRecord ParseRecord(const std::string& topic, const std::vector<RedisReply>& e,
                                size_t at);
// The node-local layers of a topic's configuration as the scripts take them (lua_common.h):
// "capacity\nttl\nmaxRetry\nackTimeout\nretryInterval\npaused\ndeadLetterTopic\nhistory".
std::string EncodeLocalConfig(const core::EffectiveTopicConfig& c);
// What follows them on every call: "\n<retention ms> <history-max-entries> <node>" (a newline
// in the node's name becomes a space).
std::string HistoryArgs(Millis retention, int64_t max_entries, std::string_view node);
// The entries of the list 'h:<msgId>' (lua_common.h, CQ_LUA_HISTORY) of the message `seq`,
// oldest first; entries of another seq, or unreadable, are skipped.
std::vector<core::HistoryEntry> ParseHistory(const RedisReply& list, uint64_t seq);
// A stored configuration hash (name/value pairs: cap, ttl, mr, at, ri, dlt, pz, and cb: the
// topic's callback, core::EncodeCallback's bytes, or '' for none).
core::TopicConfig ParseStoredConfig(const RedisReply& pairs);
// A callback as the scripts keep it ('' for none) and back; bytes Decode refuses read as none.
std::string CallbackBytes(const core::CallbackRef& cb);
std::optional<core::Callback> CallbackOfBytes(std::string_view bytes);
// The stored fields `c` sets, as name/value pairs.
std::vector<std::string> StoredConfigArgs(const core::TopicConfig& c);

// A reply that is not what a script returns: Redis refused it, or it was cut short.
Status Unexpected(const RedisReply& r, std::string_view what);
Status NotFoundError(const std::string& topic, const std::string& msg_id);
// Why the reply of a script answering {next change, item...} for `items` items cannot be used:
// the command failed, or the reply is not that (`what` names the operation). OK when it can.
Status BatchReplyError(const Result<RedisReply>& r, size_t items, std::string_view what);

// One item's answer {'NF'}, {'IS', record...}, {'OK', ...} of a script that applies `event`
// (ack, nack, delete, touch, count): kNotFound, kInvalidState worded by the state machine (which
// refuses the event on the record as the script found it), or OK.
Status MoveOutcome(const RedisReply& item, const std::string& topic, const std::string& msg_id,
                   const core::Event& event, TimePoint now, std::string_view what);

}  // namespace chronoq::redis
