// Layout 4's records and members (docs/redis.md "Format 4 (design, issue 20)": "Key id and
// member", "Ended records"), as a Lua fragment pasted after the prelude that defines P (the
// topic's key prefix), as CQ_LUA_COMMON is; private to src/redis/. Pasted into layout4()
// (CQ_LUA_LAYOUT4, below), so every script uses it for a layout-4 topic; lua_layout4_test.cc
// runs it on a real redis-server.
//
// Functions: m4_member(seq, bucket, key id), m4_bucket(member), m4_kid(member); x4_trim(status,
// cutoff, limit, history) -> how many ended records went, the oldest end left.
#pragma once

#include "redis/lua_buckets.h"

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

// Layout 4 in every script (build step 4 of the design): CQ_LUA_COMMON pastes this at its end
// and calls layout4() when the topic's 'lay' is '4'; it answers B4 (the helpers below, the mark's
// and the move into E among them) and KE, KX, KL (the in-life set, the ended sets' prefix, the
// set of levels in use). It captures no upvalue (what it needs comes as arguments): a closure's
// upvalues are resolved when it is made, called or not, and each costs every call of every
// layout (docs/redis.md "The prelude's cost cut").
#define CQ_LUA_LAYOUT4                                                                             \
  "-- Layout 4 (docs/redis.md \"Format 4 (design, issue 20)\"), set up by layout4() when the "     \
  "topic's\n"                                                                                      \
  "-- 'lay' is '4' (the helpers of CQ_LUA_COMMON then name layout 4's keys): B4 holds the "        \
  "bucketed\n"                                                                                     \
  "-- pending set (CQ_LUA_BUCKETS), the member and trim helpers (CQ_LUA_LAYOUT4_RECORDS) and the " \
  "key\n"                                                                                          \
  "-- ids. Made only for a layout-4 topic, so the closures cost nothing to layouts 1-3.\n"         \
  "local function layout4(P, levels, mload, natural_end)\n"                                        \
  "  local KE, B4 = P..'E'\n" CQ_LUA_BUCKETS CQ_LUA_LAYOUT4_RECORDS                                \
  "  -- Key ids as src/redis/key_id.cc makes them (Lua, for now: the node does not know a "        \
  "topic's\n"                                                                                      \
  "  -- layout yet): 32 lowercase hex digits -> byte 1 and their 16 bytes; any other msgId: "      \
  "itself.\n"                                                                                      \
  "  -- Four 8-digit numbers each way (struct), not a callback per byte; remembered per call.\n"   \
  "  local KC, BC = {}, {}\n"                                                                      \
  "  local function kid_of(id)\n"                                                                  \
  "    local k = KC[id]\n"                                                                         \
  "    if k then return k end\n"                                                                   \
  "    k = id\n"                                                                                   \
  "    if #id == 32 and not string.find(id, '[^0-9a-f]') then\n"                                   \
  "      k = '\\1'..struct.pack('>I4I4I4I4', tonumber(string.sub(id, 1, 8), 16),\n"                \
  "        tonumber(string.sub(id, 9, 16), 16), tonumber(string.sub(id, 17, 24), 16),\n"           \
  "        tonumber(string.sub(id, 25, 32), 16))\n"                                                \
  "    end\n"                                                                                      \
  "    KC[id] = k\n"                                                                               \
  "    return k\n"                                                                                 \
  "  end\n"                                                                                        \
  "  local function mid_of(kid)\n"                                                                 \
  "    if #kid ~= 17 or string.byte(kid, 1) ~= 1 then return kid end\n"                            \
  "    local a, b, c, d = struct.unpack('>I4I4I4I4', kid, 2)\n"                                    \
  "    return string.format('%08x%08x%08x%08x', a, b, c, d)\n"                                     \
  "  end\n"                                                                                        \
  "  -- FNV-1a (32 bits) mod 256: the low byte of the product depends on the low bytes only.\n"    \
  "  local function bucket_of(kid)\n"                                                              \
  "    local h = BC[kid]\n"                                                                        \
  "    if h then return h end\n"                                                                   \
  "    h = 197\n"                                                                                  \
  "    local bytes = {string.byte(kid, 1, -1)}\n"                                                  \
  "    for i = 1, #bytes do h = (bit.bxor(h, bytes[i]) * 147) % 256 end\n"                         \
  "    BC[kid] = h\n"                                                                              \
  "    return h\n"                                                                                 \
  "  end\n"                                                                                        \
  "-- Layout 4's mark ('em': '<score> <seq>'): every pending entry at or before it is in E; one\n" \
  "-- after it is in E only when its natural end is before its visible-at. 'qn' field 'w' counts " \
  "the\n"                                                                                          \
  "-- pending entries out of E (for capacity, in_life). MARK: {score, seq} ({-1, 0}: none yet).\n" \
  "local MAXSEQ = 281474976710655\n"                                                               \
  "local MARK\n"                                                                                   \
  "local function mark()\n"                                                                        \
  "  if MARK then return MARK end\n"                                                               \
  "  local x = redis.call('GET', P..'em')\n"                                                       \
  "  local s, q\n"                                                                                 \
  "  if x then s, q = string.match(x, '^(%S+) (%d+)$') end\n"                                      \
  "  MARK = s and {tonumber(s), tonumber(q)} or {-1, 0}\n"                                         \
  "  return MARK\n"                                                                                \
  "end\n"                                                                                          \
  "-- Whether a pending entry (visible-at va, seq, natural end ne; numbers) stays out of E.\n"     \
  "local function out_of_e(va, seq, ne)\n"                                                         \
  "  local M = mark()\n"                                                                           \
  "  return ne >= va and (va > M[1] or (va == M[1] and seq > M[2]))\n"                             \
  "end\n"                                                                                          \
  "-- m, just added to its level's pending set, enters E, or is counted out of it.\n"              \
  "local function e_pend(m)\n"                                                                     \
  "  local ne, ne_raw = natural_end(m)\n"                                                          \
  "  if out_of_e(m.va, m.sq, ne) then redis.call('HINCRBY', P..'qn', 'w', 1)\n"                    \
  "  else redis.call('ZADD', KE, ne_raw, m.member) end\n"                                          \
  "end\n"                                                                                          \
  "-- The move: the pending entries after the mark up to now (MOVE at most per call; B4.lag "      \
  "when\n"                                                                                         \
  "-- more are left, and next_visible answers now so that a wake-up moves the next) enter E by\n"  \
  "-- their natural end; the mark follows. 256, not 1,000: each costs a record read, and 1,000\n"  \
  "-- made every script 5-10 ms longer while a burst was moved (docs/benchmarks.md \"Format 4:\n"  \
  "-- slow scripts\").\n"                                                                          \
  "local MOVE = 256\n"                                                                             \
  "local function move_to_e(now)\n"                                                                \
  "  local M = mark()\n"                                                                           \
  "  if M[1] > now or (M[1] == now and M[2] == MAXSEQ) then return end\n"                          \
  "  local cand = {}\n"                                                                            \
  "  for _, l in ipairs(levels()) do\n"                                                            \
  "    local xs = B4.range(l, M[1] >= 0 and M or nil, now, MOVE + 1)\n"                            \
  "    for i = 1, #xs, 2 do cand[#cand+1] = {tonumber(xs[i+1]), B4.seq(xs[i]), xs[i]} end\n"       \
  "  end\n"                                                                                        \
  "  table.sort(cand, function(x, y)\n"                                                            \
  "    if x[1] ~= y[1] then return x[1] < y[1] end\n"                                              \
  "    return x[2] < y[2]\n"                                                                       \
  "  end)\n"                                                                                       \
  "  local n = math.min(#cand, MOVE)\n"                                                            \
  "  local args, out = {}, 0\n"                                                                    \
  "  for i = 1, n do\n"                                                                            \
  "    local m = mload(cand[i][3], false)\n"                                                       \
  "    if m and m.member == cand[i][3] and m.ph == 0 then\n"                                       \
  "      local ne, ne_raw = natural_end(m)\n"                                                      \
  "      if ne >= m.va then out = out + 1 end\n"                                                   \
  "      args[#args+1] = ne_raw; args[#args+1] = m.member\n"                                       \
  "    end\n"                                                                                      \
  "  end\n"                                                                                        \
  "  if args[1] then redis.call('ZADD', KE, unpack(args)) end\n"                                   \
  "  if out > 0 then redis.call('HINCRBY', P..'qn', 'w', -out) end\n"                              \
  "  if #cand > n then MARK = {cand[n][1], cand[n][2]}; B4.lag = true\n"                           \
  "  else MARK = {now, MAXSEQ} end\n"                                                              \
  "  redis.call('SET', P..'em', string.format('%.17g %d', MARK[1], MARK[2]))\n"                    \
  "end\n"                                                                                          \
  "  -- The trim of status st's ended records (x4_trim), noting in B4.sw when the oldest end\n"    \
  "  -- left runs out (the script's answer, for the namespace's sweep set).\n"                     \
  "  local function trim_at(st, cut, retention, history)\n"                                        \
  "    local _, old = x4_trim(st, cut, 1000, history)\n"                                           \
  "    if old then\n"                                                                              \
  "      local at = tonumber(old) + retention\n"                                                   \
  "      if not B4.sw or at < B4.sw then B4.sw = at end\n"                                         \
  "    end\n"                                                                                      \
  "  end\n"                                                                                        \
  "  -- The sweep (a node's, for a topic of the sweep set): every status trimmed, B4.sw the\n"     \
  "  -- oldest end left (nil: none).\n"                                                            \
  "  local function sweep(now, retention, history)\n"                                              \
  "    local cut = string.format('%d', now - retention)\n"                                         \
  "    for st = 4, 7 do trim_at(st, cut, retention, history) end\n"                                \
  "  end\n"                                                                                        \
  "  -- Deletes m's record and history.\n"                                                         \
  "  local function del(m)\n"                                                                      \
  "    redis.call('HDEL', P..'b:'..m.bk, m.kid)\n"                                                 \
  "    redis.call('DEL', P..'h:'..m.kid)\n"                                                        \
  "  end\n"                                                                                        \
  "  B4 = {add=bz_add, add_all=bz_add_all, rem=bz_rem, range=bz_range, last=bz_last, "             \
  "count=bz_count, card=bz_card,\n"                                                                \
  "        seq=bz_seq, member=m4_member, bucket=m4_bucket, kid=m4_kid, trim_at=trim_at, "          \
  "kid_of=kid_of,\n"                                                                               \
  "        mid_of=mid_of, bucket_of=bucket_of, mark=mark, out_of_e=out_of_e, e_pend=e_pend,\n"     \
  "        move_to_e=move_to_e, del=del, sweep=sweep}\n"                                           \
  "  return B4, KE, P..'X', P..'ql'\n"                                                             \
  "end\n"
// Pasted where a script may create its topic (send, import, dead letter in, redrive in): a
// node with NEW4 creates a topic that does not exist yet (no seq) in layout 4. Inline, not a
// function: a closure would cost every call of these scripts.
#define CQ_LUA_NEW_TOPIC4                                              \
  "if NEW4 and not LAY and redis.call('EXISTS', P..'seq') == 0 then\n" \
  "  redis.call('SET', P..'lay', '4')\n"                               \
  "  LAY = true\n"                                                     \
  "  B4, KE, KX, KL = layout4(P, levels, mload, natural_end)\n"        \
  "end\n"
