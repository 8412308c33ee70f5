// The pending set of layout 4 (docs/redis.md "Format 4 (design, issue 20)", "The bucketed
// pending set"): one level's pending messages in sorted sets of at most 32 members (each stays
// in the listpack encoding of a default Redis: about 55 bytes a member instead of about 150 in
// one big sorted set), found through an index of the buckets by their first position. A Lua
// fragment pasted after the prelude that defines P (the topic's key prefix), as CQ_LUA_COMMON
// is; private to src/redis/. Pasted into layout4() (CQ_LUA_LAYOUT4, lua_layout4.h), so every
// script uses it for a layout-4 topic; lua_buckets_test.cc checks it against a plain sorted set on
// a real redis-server.
//
// Keys (P = "cq:{<ns>:<topic>}:"): 'q<l>:<id>' the buckets of level l, 'qi<l>' their index,
// 'qid' the bucket id counter, 'qn' the member count of each level (field 'n<l>').
// Functions: bz_add(l, score, member), bz_rem(l, score, member) -> removed, bz_range(l, after,
// max, limit) -> {member, score, ...}, bz_count(l, min, max), bz_card(l), bz_seq(member).
// Members start with their seq as 6 big-endian bytes (the layout 4 member).
#pragma once

#define CQ_LUA_BUCKETS                                                                          \
  "-- The pending set of one level in layout 4: buckets of at most BZ_MAX members, each\n"      \
  "-- a sorted set in the listpack encoding (up to zset-max-listpack-entries, 128 by\n"         \
  "-- default; a sorted set that once grew over it never converts back), and an index of\n"     \
  "-- the buckets ('qi<l>': all scores 0, members ordered by bytes: '<first score, 8-byte\n"    \
  "-- big-endian double><first seq, 6 bytes><id>'). 32, not 128: a listpack insert walks\n"     \
  "-- and decodes every member before its place twice (the member's look-up, then the\n"        \
  "-- score's), about 27,000 instructions in a bucket of 128 against 9,000 in one of 32;\n"     \
  "-- the smaller buckets cost about 6 bytes a member more (docs/redis.md \"Format 4\").\n"     \
  "-- Members start with their seq (6 bytes, big-endian), so a position (score, seq)\n"         \
  "-- orders them as one sorted set would. 'qn' keeps n<l>, the members of level l.\n"          \
  "-- Scores are >= 0.\n"                                                                       \
  "local BZ_MAX, BZ_HALF = 32, 16\n"                                                            \
  "local function bz_pos(score, member)\n"                                                      \
  "  return struct.pack('>d', score)..string.sub(member, 1, 6)\n"                               \
  "end\n"                                                                                       \
  "local function bz_seq(member) return (struct.unpack('>I6', member)) end\n"                   \
  "local function bz_key(l, im) return P..'q'..l..':'..string.sub(im, 15) end\n"                \
  "-- The index member of the bucket holding position pos (nil: pos is before every\n"          \
  "-- bucket).\n"                                                                               \
  "local function bz_find(l, pos)\n"                                                            \
  "  local k = P..'qi'..l\n"                                                                    \
  "  return redis.call('ZREVRANGEBYLEX', k, '['..pos..'\\255', '-', 'LIMIT', 0, 1)[1]\n"        \
  "end\n"                                                                                       \
  "local function bz_next(l, im)\n"                                                             \
  "  return redis.call('ZRANGEBYLEX', P..'qi'..l, '('..im, '+', 'LIMIT', 0, 1)[1]\n"            \
  "end\n"                                                                                       \
  "local function bz_new(l, pos)\n"                                                             \
  "  local im = pos..redis.call('INCR', P..'qid')\n"                                            \
  "  redis.call('ZADD', P..'qi'..l, 0, im)\n"                                                   \
  "  return im\n"                                                                               \
  "end\n"                                                                                       \
  "-- A full bucket (BZ_MAX members) makes room for (score, member) at pos before the\n"        \
  "-- ZADD (so no bucket ever holds more): a position after its last member starts a new\n"     \
  "-- bucket alone (sends in order: buckets stay full); otherwise its upper half moves to a\n"  \
  "-- new bucket. Answers the index member\n"                                                   \
  "-- of the bucket that takes the member.\n"                                                   \
  "local function bz_room(l, im, k, pos, score, member)\n"                                      \
  "  local last = redis.call('ZRANGE', k, -1, -1, 'WITHSCORES')\n"                              \
  "  local ls = tonumber(last[2])\n"                                                            \
  "  if score > ls or (score == ls and bz_seq(member) > bz_seq(last[1])) then\n"                \
  "    return bz_new(l, pos)\n"                                                                 \
  "  end\n"                                                                                     \
  "  local up = redis.call('ZRANGE', k, BZ_HALF, -1, 'WITHSCORES')\n"                           \
  "  redis.call('ZREMRANGEBYRANK', k, BZ_HALF, -1)\n"                                           \
  "  local args = {}\n"                                                                         \
  "  for i = 1, #up, 2 do args[#args+1] = up[i+1]; args[#args+1] = up[i] end\n"                 \
  "  local us = tonumber(up[2])\n"                                                              \
  "  local nim = bz_new(l, bz_pos(us, up[1]))\n"                                                \
  "  redis.call('ZADD', bz_key(l, nim), unpack(args))\n"                                        \
  "  if score > us or (score == us and bz_seq(member) > bz_seq(up[1])) then return nim end\n"   \
  "  return im\n"                                                                               \
  "end\n"                                                                                       \
  "-- Adds member (a new one) at score (a number) to level l, without counting it in 'qn';\n"   \
  "-- answers the index member of its bucket.\n"                                                \
  "local function bz_place(l, score, member)\n"                                                 \
  "  local pos = bz_pos(score, member)\n"                                                       \
  "  local im = bz_find(l, pos)\n"                                                              \
  "  if not im then\n"                                                                          \
  "    local first = redis.call('ZRANGE', P..'qi'..l, 0, 0)[1]\n"                               \
  "    if first then -- before every bucket: the first bucket starts here now\n"                \
  "      redis.call('ZREM', P..'qi'..l, first)\n"                                               \
  "      im = pos..string.sub(first, 15)\n"                                                     \
  "      redis.call('ZADD', P..'qi'..l, 0, im)\n"                                               \
  "    else im = bz_new(l, pos) end\n"                                                          \
  "  end\n"                                                                                     \
  "  local k = bz_key(l, im)\n"                                                                 \
  "  if redis.call('ZCARD', k) >= BZ_MAX then im = bz_room(l, im, k, pos, score, member) end\n" \
  "  redis.call('ZADD', bz_key(l, im), score, member)\n"                                        \
  "  return im\n"                                                                               \
  "end\n"                                                                                       \
  "local function bz_add(l, score, member)\n"                                                   \
  "  bz_place(l, score, member)\n"                                                              \
  "  redis.call('HINCRBY', P..'qn', 'n'..l, 1)\n"                                               \
  "end\n"                                                                                       \
  "-- Adds the new members of xs ({score, member, ...}, scores numbers) to level l: one ZADD\n" \
  "-- per run of members that go to one bucket (a send batch in trigger order: one ZADD per\n"  \
  "-- BZ_MAX members, against one ZADD per batch today) and one HINCRBY.\n"                     \
  "local function bz_add_all(l, xs)\n"                                                          \
  "  local im, lo, hi, n, args = nil, nil, nil, 0, {}\n"                                        \
  "  local function flush()\n"                                                                  \
  "    if args[1] then redis.call('ZADD', bz_key(l, im), unpack(args)); args = {} end\n"        \
  "  end\n"                                                                                     \
  "  for i = 1, #xs, 2 do\n"                                                                    \
  "    local s, m = xs[i], xs[i+1]\n"                                                           \
  "    if im and n < BZ_MAX and (s > lo[1] or (s == lo[1] and bz_seq(m) >= lo[2]))\n"           \
  "        and (not hi or s < hi[1] or (s == hi[1] and bz_seq(m) < hi[2])) then\n"              \
  "      args[#args+1] = s; args[#args+1] = m; n = n + 1\n"                                     \
  "    else\n"                                                                                  \
  "      flush()\n"                                                                             \
  "      im = bz_find(l, bz_pos(s, m))\n"                                                       \
  "      n = im and redis.call('ZCARD', bz_key(l, im)) or BZ_MAX\n"                             \
  "      if n < BZ_MAX then -- it goes with the run it starts\n"                                \
  "        args[1] = s; args[2] = m; n = n + 1\n"                                               \
  "      else -- before every bucket, or its bucket is full\n"                                  \
  "        im = bz_place(l, s, m)\n"                                                            \
  "        n = redis.call('ZCARD', bz_key(l, im))\n"                                            \
  "      end\n"                                                                                 \
  "      lo = {struct.unpack('>dI6', im)}\n"                                                    \
  "      local nx = bz_next(l, im)\n"                                                           \
  "      hi = nx and {struct.unpack('>dI6', nx)} or nil\n"                                      \
  "    end\n"                                                                                   \
  "  end\n"                                                                                     \
  "  flush()\n"                                                                                 \
  "  redis.call('HINCRBY', P..'qn', 'n'..l, #xs / 2)\n"                                         \
  "end\n"                                                                                       \
  "-- Removes member, whose score is `score`, from level l; true when it was there. A\n"        \
  "-- bucket left empty leaves the index; one left under a quarter full takes in its\n"         \
  "-- successor if both fit half a bucket.\n"                                                   \
  "local function bz_rem(l, score, member)\n"                                                   \
  "  local im = bz_find(l, bz_pos(score, member))\n"                                            \
  "  if not im then return false end\n"                                                         \
  "  local k = bz_key(l, im)\n"                                                                 \
  "  if redis.call('ZREM', k, member) == 0 then return false end\n"                             \
  "  redis.call('HINCRBY', P..'qn', 'n'..l, -1)\n"                                              \
  "  local n = redis.call('ZCARD', k)\n"                                                        \
  "  if n == 0 then\n"                                                                          \
  "    redis.call('ZREM', P..'qi'..l, im)\n"                                                    \
  "  elseif n < BZ_MAX / 4 then\n"                                                              \
  "    local nx = bz_next(l, im)\n"                                                             \
  "    if nx then\n"                                                                            \
  "      local nk = bz_key(l, nx)\n"                                                            \
  "      if n + redis.call('ZCARD', nk) <= BZ_HALF then\n"                                      \
  "        local xs = redis.call('ZRANGE', nk, 0, -1, 'WITHSCORES')\n"                          \
  "        local args = {}\n"                                                                   \
  "        for i = 1, #xs, 2 do args[#args+1] = xs[i+1]; args[#args+1] = xs[i] end\n"           \
  "        redis.call('ZADD', k, unpack(args))\n"                                               \
  "        redis.call('DEL', nk)\n"                                                             \
  "        redis.call('ZREM', P..'qi'..l, nx)\n"                                                \
  "      end\n"                                                                                 \
  "    end\n"                                                                                   \
  "  end\n"                                                                                     \
  "  return true\n"                                                                             \
  "end\n"                                                                                       \
  "-- Up to `limit` members of level l after position `after` ({score, seq}; nil: from\n"       \
  "-- the start) with a score <= max (a number), in (score, seq) order: {member, score,\n"      \
  "-- ...} as ZRANGEBYSCORE ... WITHSCORES answers. (Positions are compared as numbers:\n"      \
  "-- Lua compares strings with strcoll, which is not byte order under every locale.)\n"        \
  "local function bz_range(l, after, max, limit)\n"                                             \
  "  local out = {}\n"                                                                          \
  "  local im, min = nil, '-inf'\n"                                                             \
  "  if after then\n"                                                                           \
  "    im = bz_find(l, struct.pack('>dI6', after[1], after[2]))\n"                              \
  "    min = string.format('%.17g', after[1])\n"                                                \
  "  end\n"                                                                                     \
  "  if not im then im = redis.call('ZRANGE', P..'qi'..l, 0, 0)[1] end\n"                       \
  "  local maxs = string.format('%.17g', max)\n"                                                \
  "  while im and #out < 2 * limit do\n"                                                        \
  "    if struct.unpack('>d', im) > max then break end\n"                                       \
  "    local xs = redis.call('ZRANGEBYSCORE', bz_key(l, im), min, maxs, 'WITHSCORES')\n"        \
  "    for i = 1, #xs, 2 do\n"                                                                  \
  "      if #out >= 2 * limit then break end\n"                                                 \
  "      local s = tonumber(xs[i+1])\n"                                                         \
  "      if not after or s > after[1] or (s == after[1] and bz_seq(xs[i]) > after[2]) then\n"   \
  "        out[#out+1] = xs[i]; out[#out+1] = xs[i+1]\n"                                        \
  "      end\n"                                                                                 \
  "    end\n"                                                                                   \
  "    im = bz_next(l, im)\n"                                                                   \
  "  end\n"                                                                                     \
  "  return out\n"                                                                              \
  "end\n"                                                                                       \
  "-- How many members of level l have a score in [min, max] (numbers; as ZCOUNT).\n"           \
  "local function bz_count(l, min, max)\n"                                                      \
  "  local n = 0\n"                                                                             \
  "  local im = bz_find(l, struct.pack('>dI6', math.max(min, 0), 0))\n"                         \
  "  if not im then im = redis.call('ZRANGE', P..'qi'..l, 0, 0)[1] end\n"                       \
  "  local mins, maxs = string.format('%.17g', min), string.format('%.17g', max)\n"             \
  "  while im and struct.unpack('>d', im) <= max do\n"                                          \
  "    n = n + redis.call('ZCOUNT', bz_key(l, im), mins, maxs)\n"                               \
  "    im = bz_next(l, im)\n"                                                                   \
  "  end\n"                                                                                     \
  "  return n\n"                                                                                \
  "end\n"                                                                                       \
  "-- The members of level l (O(1)).\n"                                                         \
  "local function bz_card(l)\n"                                                                 \
  "  return tonumber(redis.call('HGET', P..'qn', 'n'..l) or '0')\n"                             \
  "end\n"
