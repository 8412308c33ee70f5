// Layout 4's records and members (docs/redis.md "Format 4 (design, issue 20)": "Key id and
// member", "Ended records"), as a Lua fragment pasted after the prelude that defines P (the
// topic's key prefix), as CQ_LUA_COMMON is; private to src/redis/. Not used by the scripts yet
// (build steps 4 and 5 of the design); lua_layout4_test.cc runs it on a real redis-server.
//
// Functions: m4_member(seq, bucket, key id), m4_bucket(member), m4_kid(member); x4_trim(status,
// cutoff, limit, history) -> how many ended records went, the oldest end left.
#pragma once

#define CQ_LUA_LAYOUT4_RECORDS                                                                    \
  "-- Layout 4's records and members (docs/redis.md \"Format 4 (design, issue 20)\"): a record\n" \
  "-- is the field <key id> of the hash 'b:<bucket>' (bucket 0..255, chosen by the node,\n"       \
  "-- src/redis/key_id.h); a member of every layout-4 set is '<seq, 6 bytes big-endian>\n"        \
  "-- <bucket, 1 byte><key id>', so a script reaches the record from any set without\n"           \
  "-- hashing.\n"                                                                                 \
  "local function m4_member(seq, bucket, kid)\n"                                                  \
  "  return struct.pack('>I6', seq)..string.char(bucket)..kid\n"                                  \
  "end\n"                                                                                         \
  "local function m4_bucket(member) return string.byte(member, 7) end\n"                          \
  "local function m4_kid(member) return string.sub(member, 8) end\n"                              \
  "-- Ended records whose retention is over (no key per record, so no PEXPIRE): takes up to\n"    \
  "-- `limit` members of 'X<st>' scored at or before `cutoff` (now - retention), deletes\n"       \
  "-- their records (one HDEL per bucket) and, with `history`, their history lists (one\n"        \
  "-- DEL), then the members. Answers how many went and the score of the oldest end left in\n"    \
  "-- 'X<st>' (nil: none), for the namespace's sweep set. A member names the record it was\n"     \
  "-- added with: a script that replaces an ended record (its msgId sent again) removes the\n"    \
  "-- old member first, as unindex does today, so the trim never deletes a newer record.\n"       \
  "local function x4_trim(st, cutoff, limit, history)\n"                                          \
  "  local k = P..'X'..st\n"                                                                      \
  "  local xs = redis.call('ZRANGEBYSCORE', k, '-inf', cutoff, 'LIMIT', 0, limit)\n"              \
  "  if xs[1] then\n"                                                                             \
  "    local by, hs = {}, {}\n"                                                                   \
  "    for _, m in ipairs(xs) do\n"                                                               \
  "      local b = m4_bucket(m)\n"                                                                \
  "      local fs = by[b] or {}\n"                                                                \
  "      by[b] = fs\n"                                                                            \
  "      fs[#fs+1] = m4_kid(m)\n"                                                                 \
  "      if history then hs[#hs+1] = P..'h:'..m4_kid(m) end\n"                                    \
  "    end\n"                                                                                     \
  "    for b, fs in pairs(by) do redis.call('HDEL', P..'b:'..b, unpack(fs)) end\n"                \
  "    if hs[1] then redis.call('DEL', unpack(hs)) end\n"                                         \
  "    redis.call('ZREM', k, unpack(xs))\n"                                                       \
  "  end\n"                                                                                       \
  "  return #xs, redis.call('ZRANGE', k, 0, 0, 'WITHSCORES')[2]\n"                                \
  "end\n"
