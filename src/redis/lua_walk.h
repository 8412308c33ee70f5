// Lua fragments pasted after CQ_LUA_COMMON (lua_common.h) by some scripts only: the bounded walks
// of listMsg and purge, and the inbox of the scripts that take in another topic's outbox entries
// (docs/redis.md). Private to src/redis/.
#pragma once

#include "redis/lua_common.h"

// Walks over sorted sets in (score, seq) order from a position, bounded per call (listMsg, purge;
// pasted after CQ_LUA_COMMON by those scripts only). `pos` is the position: the (score, seq) of
// the last entry examined (score nil: the start). W holds the walk's bounds: how many entries
// to accept (want), how many were (done), how many may still be examined (budget).
#define CQ_LUA_WALK                                                                                \
  "-- A member's seq (send order among equal scores).\n"                                           \
  "local function mseq(member)\n"                                                                  \
  "  if B4 then return B4.seq(member) end\n"                                                       \
  "  return tonumber(string.sub(member, 1, 16))\n"                                                 \
  "end\n"                                                                                          \
  "local pos = {}\n"                                                                               \
  "local W = {want = 0, done = 0, budget = 0}\n"                                                   \
  "-- The rank in sorted set k of the first entry after (s, seq) in (score, seq) order (after "    \
  "every\n"                                                                                        \
  "-- entry scored s when seq is nil): O(log n), a binary search over the entries scored s.\n"     \
  "local function rank_after(k, s, seq)\n"                                                         \
  "  if not s then return 0 end\n"                                                                 \
  "  local lo = redis.call('ZCOUNT', k, '-inf', '('..s)\n"                                         \
  "  local eq = redis.call('ZCOUNT', k, s, s)\n"                                                   \
  "  if not seq then return lo + eq end\n"                                                         \
  "  local a, b = lo, lo + eq\n"                                                                   \
  "  while a < b do\n"                                                                             \
  "    local mid = math.floor((a + b) / 2)\n"                                                      \
  "    local x = redis.call('ZRANGE', k, mid, mid)[1]\n"                                           \
  "    if mseq(x) <= seq then a = mid + 1 else b = mid end\n"                                      \
  "  end\n"                                                                                        \
  "  return a\n"                                                                                   \
  "end\n"                                                                                          \
  "-- The pending set of level l up to score max (inclusive; nil: all) as scan() takes it: a "     \
  "sorted\n"                                                                                       \
  "-- set in layouts 1-3, the level's buckets in layout 4 ({false, max, l = l}).\n"                \
  "local function pset(l, max)\n"                                                                  \
  "  if B4 then return {false, max, l = l} end\n"                                                  \
  "  return {pk(l), max}\n"                                                                        \
  "end\n"                                                                                          \
  "-- Takes a stale entry (member at score) off the set kh of scan() it was found in.\n"           \
  "local function walk_drop(kh, member, score)\n"                                                  \
  "  if kh.l then B4.rem(kh.l, tonumber(score), member) else redis.call('ZREM', kh[1], member) "   \
  "end\n"                                                                                          \
  "end\n"                                                                                          \
  "-- Examines the entries of `keys` ({key, highest score (inclusive) or nil}..., or pset()'s) "   \
  "after\n"                                                                                        \
  "-- pos, merged in (score, seq) order, calling visit(member, kh, score) on each (kh: the entry " \
  "of\n"                                                                                           \
  "-- keys it came from; true: it counts as done), until W.want are done or the budget is spent; " \
  "pos\n"                                                                                          \
  "-- follows. Returns true when the keys have nothing more.\n"                                    \
  "local function scan(keys, visit)\n"                                                             \
  "  while W.done < W.want and W.budget > 0 do\n"                                                  \
  "    local n = math.min(W.want - W.done, W.budget)\n"                                            \
  "    local cand = {}\n"                                                                          \
  "    for _, kh in ipairs(keys) do\n"                                                             \
  "      local xs\n"                                                                               \
  "      if kh.l then -- layout 4's buckets: a position is found without ranks\n"                  \
  "        local after\n"                                                                          \
  "        if pos.s then after = {tonumber(pos.s), pos.seq or 281474976710655} end\n"              \
  "        xs = B4.range(kh.l, after, kh[2] and tonumber(kh[2]) or math.huge, n)\n"                \
  "      else\n"                                                                                   \
  "        local k = kh[1]\n"                                                                      \
  "        local r = rank_after(k, pos.s, pos.seq)\n"                                              \
  "        local e = kh[2] and redis.call('ZCOUNT', k, '-inf', kh[2]) or redis.call('ZCARD', k)\n" \
  "        xs = r < e and redis.call('ZRANGE', k, r, math.min(r + n, e) - 1, 'WITHSCORES') or "    \
  "{}\n"                                                                                           \
  "      end\n"                                                                                    \
  "      for i = 1, #xs, 2 do\n"                                                                   \
  "        cand[#cand+1] = {xs[i], tonumber(xs[i+1]), xs[i+1], mseq(xs[i]), kh}\n"                 \
  "      end\n"                                                                                    \
  "    end\n"                                                                                      \
  "    if #cand == 0 then return true end\n"                                                       \
  "    table.sort(cand, function(x, y)\n"                                                          \
  "      if x[2] ~= y[2] then return x[2] < y[2] end\n"                                            \
  "      return x[4] < y[4]\n"                                                                     \
  "    end)\n"                                                                                     \
  "    for i = 1, math.min(n, #cand) do\n"                                                         \
  "      local c = cand[i]\n"                                                                      \
  "      pos.s, pos.seq = c[3], c[4]\n"                                                            \
  "      W.budget = W.budget - 1\n"                                                                \
  "      if visit(c[1], c[5], c[2]) then W.done = W.done + 1 end\n"                                \
  "    end\n"                                                                                      \
  "  end\n"                                                                                        \
  "  return false\n"                                                                               \
  "end\n"                                                                                          \
  "-- The lowest and highest retry interval of the deliveries that may still be WAITING or "       \
  "CONSUMING\n"                                                                                    \
  "-- ('iv': interval -> the latest visible-at of a delivery with it).\n"                          \
  "local function intervals(now_arg)\n"                                                            \
  "  redis.call('ZREMRANGEBYSCORE', P..'iv', '-inf', now_arg)\n"                                   \
  "  local lo, hi = nil, 0\n"                                                                      \
  "  for _, x in ipairs(redis.call('ZRANGE', P..'iv', 0, -1)) do\n"                                \
  "    local r = tonumber(x)\n"                                                                    \
  "    if not lo or r < lo then lo = r end\n"                                                      \
  "    if r > hi then hi = r end\n"                                                                \
  "  end\n"                                                                                        \
  "  return lo or 0, hi\n"                                                                         \
  "end\n"                                                                                          \
  "-- The sets holding the messages in status st (1 WAITING, 2 READY, 3 CONSUMING) of every "      \
  "level, as\n"                                                                                    \
  "-- scan() takes them, and the score their walk starts after (nil: the beginning). WAITING: "    \
  "pending\n"                                                                                      \
  "-- after now, and deliveries up to now + the highest interval (past their deadline, in their "  \
  "interval);\n"                                                                                   \
  "-- CONSUMING: deliveries after now + the lowest interval. Exact when one interval is in use.\n" \
  "local function status_sets(st, now_arg, now)\n"                                                 \
  "  local lo, hi = intervals(now_arg)\n"                                                          \
  "  local keys = {}\n"                                                                            \
  "  for _, l in ipairs(levels()) do\n"                                                            \
  "    if st == 1 then\n"                                                                          \
  "      keys[#keys+1] = pset(l)\n"                                                                \
  "      if hi > 0 then keys[#keys+1] = {dk(l), string.format('%d', now + hi)} end\n"              \
  "    elseif st == 3 then keys[#keys+1] = {dk(l)}\n"                                              \
  "    else keys[#keys+1] = pset(l, now_arg); keys[#keys+1] = {dk(l), now_arg} end\n"              \
  "  end\n"                                                                                        \
  "  if st == 1 then return keys, now_arg end\n"                                                   \
  "  if st == 3 then return keys, string.format('%d', now + lo) end\n"                             \
  "  return keys, nil\n"                                                                           \
  "end\n"

// The inbox ('in', pasted after CQ_LUA_COMMON by the scripts that take in outbox entries of
// another topic: dead letters, redrives): a marker per entry taken in, '<from topic>\n<outbox
// member>', scored by the time after which it may go. A marker stays while its entry may be
// moved again (30 days: a backstop for an entry whose node died before removing it; any node
// finishes such an entry long before), and for a minute once the entry is gone (the node sets
// that after removing the entry), so that a move repeated by a node that read the entry before
// is answered as done, never stored twice, even when the message was released here since.
#define CQ_LUA_INBOX                                                              \
  "local INBOX_TRIMMED\n"                                                         \
  "local function inbox_has(token)\n"                                             \
  "  if not INBOX_TRIMMED then\n"                                                 \
  "    redis.call('ZREMRANGEBYSCORE', P..'in', '-inf', '('..ARGV[1])\n"           \
  "    INBOX_TRIMMED = true\n"                                                    \
  "  end\n"                                                                       \
  "  return redis.call('ZSCORE', P..'in', token) ~= false\n"                      \
  "end\n"                                                                         \
  "local function inbox_keep(token, now)\n"                                       \
  "  redis.call('ZADD', P..'in', string.format('%d', now + 2592000000), token)\n" \
  "end\n"
