// Key ids of redis-format 4 (docs/redis.md "Format 4 (design, issue 20)", "Key id and
// member"): how a msgId is named in the layout-4 keyspace. A msgId of 32 lowercase hex digits
// (what base::NewMsgId generates) is byte 0x01 followed by its 16 bytes; any other msgId is
// itself (a msgId never holds a control character, core::ValidateMsgId, so the two forms cannot
// collide). The node converts both ways, so Redis does no hex work; the record bucket of a key
// id is computed here too and carried in every member. Pure functions, no state. A node of
// redis-format 4 sends both with each message it sends (RedisBackend::SendBatch); the scripts
// compute the same in Lua when they are absent (CQ_LUA_LAYOUT4's kid_of, bucket_of: the other
// scripts, and nodes of other formats; docs/redis.md "Key ids from the node").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace chronoq::redis {

// The number of record buckets of a topic ('b:<n>', n = 0..255).
inline constexpr int kRecordBuckets = 256;

std::string KeyIdOf(std::string_view msg_id);
// The msgId a key id names (KeyIdOf's inverse).
std::string MsgIdOf(std::string_view key_id);
// The record bucket of a key id: FNV-1a (32 bits) of its bytes, modulo kRecordBuckets.
int RecordBucketOf(std::string_view key_id);

}  // namespace chronoq::redis
