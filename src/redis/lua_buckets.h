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
// 'qid' the bucket id counter, 'qn' the member count of each level (field 'n<l>'), 'qr<l>' and
// 'qc<l>' the runs of buckets and their counts (the second level, for counts over many buckets).
// Functions: bz_add(l, score, member), bz_rem(l, score, member) -> removed, bz_range(l, after,
// max, limit) -> {member, score, ...}, bz_last(l, max) -> the greatest score <= max,
// bz_count(l, min, max) (ZCOUNT's bounds), bz_card(l), bz_seq(member).
// Members start with their seq as 6 big-endian bytes (the layout 4 member).
#pragma once

#define CQ_LUA_BUCKETS                                                                             \
  "-- The pending set of one level in layout 4: buckets of at most BZ_MAX members, each\n"         \
  "-- a sorted set in the listpack encoding (up to zset-max-listpack-entries, 128 by\n"            \
  "-- default; a sorted set that once grew over it never converts back), and an index of\n"        \
  "-- the buckets ('qi<l>': all scores 0, members ordered by bytes: '<first score, 8-byte\n"       \
  "-- big-endian double><first seq, 6 bytes><id>'). 32, not 128: a listpack insert walks\n"        \
  "-- and decodes every member before its place twice (the member's look-up, then the\n"           \
  "-- score's), about 27,000 instructions in a bucket of 128 against 9,000 in one of 32;\n"        \
  "-- the smaller buckets cost about 6 bytes a member more (docs/redis.md \"Format 4\").\n"        \
  "-- Members start with their seq (6 bytes, big-endian), so a position (score, seq)\n"            \
  "-- orders them as one sorted set would. 'qn' keeps n<l>, the members of level l.\n"             \
  "-- Scores are >= 0.\n"                                                                          \
  "-- Counts over many buckets use a second level: runs of consecutive buckets ('qr<l>': the\n"    \
  "-- index member of each run's first bucket, all scores 0; a bucket belongs to the last run\n"   \
  "-- starting at or before it), with their members and buckets counted in the hash 'qc<l>'\n"     \
  "-- (fields 'n<id>', 'b<id>'; id: the run's first bucket's id, which stays when its index\n"     \
  "-- member is lowered). A run over RZ_MAX buckets gives its upper half to a new run (the only\n" \
  "-- recount: RZ_HALF ZCARDs, once per RZ_HALF new buckets); one left under RZ_LOW takes in "     \
  "its\n"                                                                                          \
  "-- successor when both fit RZ_HALF. A count sums the runs inside its range (one HMGET per "     \
  "32)\n"                                                                                          \
  "-- and ZCOUNTs the buckets of the two runs at its ends: at 10 million members 5,000-10,000\n"   \
  "-- runs and at most 2 * RZ_MAX ZCOUNTs, where one ZCOUNT per bucket was 312,000-450,000.\n"     \
  "local BZ_MAX, BZ_HALF = 32, 16\n"                                                               \
  "local RZ_MAX, RZ_HALF, RZ_LOW = 64, 32, 8\n"                                                    \
  "local function bz_pos(score, member)\n"                                                         \
  "  return struct.pack('>d', score)..string.sub(member, 1, 6)\n"                                  \
  "end\n"                                                                                          \
  "local function bz_seq(member) return (struct.unpack('>I6', member)) end\n"                      \
  "local function bz_key(l, im) return P..'q'..l..':'..string.sub(im, 15) end\n"                   \
  "-- The index member of the bucket holding position pos (nil: pos is before every\n"             \
  "-- bucket).\n"                                                                                  \
  "local function bz_find(l, pos)\n"                                                               \
  "  local k = P..'qi'..l\n"                                                                       \
  "  return redis.call('ZREVRANGEBYLEX', k, '['..pos..'\\255', '-', 'LIMIT', 0, 1)[1]\n"           \
  "end\n"                                                                                          \
  "local function bz_next(l, im)\n"                                                                \
  "  return redis.call('ZRANGEBYLEX', P..'qi'..l, '('..im, '+', 'LIMIT', 0, 1)[1]\n"               \
  "end\n"                                                                                          \
  "local function bz_new(l, pos)\n"                                                                \
  "  local im = pos..redis.call('INCR', P..'qid')\n"                                               \
  "  redis.call('ZADD', P..'qi'..l, 0, im)\n"                                                      \
  "  return im\n"                                                                                  \
  "end\n"                                                                                          \
  "-- The run of bucket im (its index member; remembered until the runs change).\n"                \
  "local RC = {}\n"                                                                                \
  "local function rz_id(rm) return string.sub(rm, 15) end\n"                                       \
  "local function rz_of(l, im)\n"                                                                  \
  "  local rm = RC[im]\n"                                                                          \
  "  if rm then return rm end\n"                                                                   \
  "  rm = redis.call('ZREVRANGEBYLEX', P..'qr'..l, '['..im, '-', 'LIMIT', 0, 1)[1]\n"              \
  "  RC[im] = rm\n"                                                                                \
  "  return rm\n"                                                                                  \
  "end\n"                                                                                          \
  "local function rz_count(l, im, n)\n"                                                            \
  "  redis.call('HINCRBY', P..'qc'..l, 'n'..rz_id(rz_of(l, im)), n)\n"                             \
  "end\n"                                                                                          \
  "-- Bucket im, new in the index and holding its members, joins its run (or starts the first).\n" \
  "local function rz_added(l, im)\n"                                                               \
  "  local rk, ck = P..'qr'..l, P..'qc'..l\n"                                                      \
  "  local rm = rz_of(l, im)\n"                                                                    \
  "  if not rm then\n"                                                                             \
  "    redis.call('ZADD', rk, 0, im)\n"                                                            \
  "    redis.call('HSET', ck, 'n'..rz_id(im), redis.call('ZCARD', bz_key(l, im)), "                \
  "'b'..rz_id(im), 1)\n"                                                                           \
  "    RC = {}\n"                                                                                  \
  "    return\n"                                                                                   \
  "  end\n"                                                                                        \
  "  local id = rz_id(rm)\n"                                                                       \
  "  local b = redis.call('HINCRBY', ck, 'b'..id, 1)\n"                                            \
  "  if b <= RZ_MAX then return end\n"                                                             \
  "  local up = redis.call('ZRANGEBYLEX', P..'qi'..l, '['..rm, '+', 'LIMIT', RZ_HALF, b - "        \
  "RZ_HALF)\n"                                                                                     \
  "  local n = 0\n"                                                                                \
  "  for _, x in ipairs(up) do n = n + redis.call('ZCARD', bz_key(l, x)) end\n"                    \
  "  redis.call('ZADD', rk, 0, up[1])\n"                                                           \
  "  redis.call('HSET', ck, 'n'..rz_id(up[1]), n, 'b'..rz_id(up[1]), #up, 'b'..id, RZ_HALF)\n"     \
  "  redis.call('HINCRBY', ck, 'n'..id, -n)\n"                                                     \
  "  RC = {}\n"                                                                                    \
  "end\n"                                                                                          \
  "-- Bucket im (empty, or merged into the bucket before it in its run) leaves its run.\n"         \
  "local function rz_gone(l, im)\n"                                                                \
  "  local rk, ck = P..'qr'..l, P..'qc'..l\n"                                                      \
  "  local rm = rz_of(l, im)\n"                                                                    \
  "  local id = rz_id(rm)\n"                                                                       \
  "  local b = redis.call('HINCRBY', ck, 'b'..id, -1)\n"                                           \
  "  RC = {}\n"                                                                                    \
  "  if rm == im then -- it started its run: the next bucket starts it now, or the run ends\n"     \
  "    redis.call('ZREM', rk, im)\n"                                                               \
  "    local n = redis.call('HGET', ck, 'n'..id)\n"                                                \
  "    redis.call('HDEL', ck, 'n'..id, 'b'..id)\n"                                                 \
  "    if b == 0 then return end\n"                                                                \
  "    rm = bz_next(l, im)\n"                                                                      \
  "    id = rz_id(rm)\n"                                                                           \
  "    redis.call('ZADD', rk, 0, rm)\n"                                                            \
  "    redis.call('HSET', ck, 'n'..id, n, 'b'..id, b)\n"                                           \
  "  end\n"                                                                                        \
  "  if b >= RZ_LOW then return end\n"                                                             \
  "  local nr = redis.call('ZRANGEBYLEX', rk, '('..rm, '+', 'LIMIT', 0, 1)[1]\n"                   \
  "  if not nr then return end\n"                                                                  \
  "  local nid = rz_id(nr)\n"                                                                      \
  "  local x = redis.call('HMGET', ck, 'n'..nid, 'b'..nid)\n"                                      \
  "  if b + tonumber(x[2]) > RZ_HALF then return end\n"                                            \
  "  redis.call('ZREM', rk, nr)\n"                                                                 \
  "  redis.call('HDEL', ck, 'n'..nid, 'b'..nid)\n"                                                 \
  "  redis.call('HINCRBY', ck, 'n'..id, x[1])\n"                                                   \
  "  redis.call('HINCRBY', ck, 'b'..id, x[2])\n"                                                   \
  "end\n"                                                                                          \
  "-- A full bucket (BZ_MAX members) makes room for (score, member) at pos before the\n"           \
  "-- ZADD (so no bucket ever holds more): a position after its last member starts a new\n"        \
  "-- bucket alone (sends in order: buckets stay full); otherwise its upper half moves to a\n"     \
  "-- new bucket. Answers the index member\n"                                                      \
  "-- of the bucket that takes the member.\n"                                                      \
  "local function bz_room(l, im, k, pos, score, member)\n"                                         \
  "  local last = redis.call('ZRANGE', k, -1, -1, 'WITHSCORES')\n"                                 \
  "  local ls = tonumber(last[2])\n"                                                               \
  "  if score > ls or (score == ls and bz_seq(member) > bz_seq(last[1])) then\n"                   \
  "    local nim = bz_new(l, pos)\n"                                                               \
  "    rz_added(l, nim)\n"                                                                         \
  "    return nim\n"                                                                               \
  "  end\n"                                                                                        \
  "  local up = redis.call('ZRANGE', k, BZ_HALF, -1, 'WITHSCORES')\n"                              \
  "  redis.call('ZREMRANGEBYRANK', k, BZ_HALF, -1)\n"                                              \
  "  local args = {}\n"                                                                            \
  "  for i = 1, #up, 2 do args[#args+1] = up[i+1]; args[#args+1] = up[i] end\n"                    \
  "  local us = tonumber(up[2])\n"                                                                 \
  "  local nim = bz_new(l, bz_pos(us, up[1]))\n"                                                   \
  "  redis.call('ZADD', bz_key(l, nim), unpack(args))\n"                                           \
  "  rz_added(l, nim)\n"                                                                           \
  "  if score > us or (score == us and bz_seq(member) > bz_seq(up[1])) then return nim end\n"      \
  "  return im\n"                                                                                  \
  "end\n"                                                                                          \
  "-- Adds member (a new one) at score (a number) to level l, without counting it in 'qn' or\n"    \
  "-- its run; answers the index member of its bucket.\n"                                          \
  "local function bz_place(l, score, member)\n"                                                    \
  "  local pos = bz_pos(score, member)\n"                                                          \
  "  local im = bz_find(l, pos)\n"                                                                 \
  "  if not im then\n"                                                                             \
  "    local first = redis.call('ZRANGE', P..'qi'..l, 0, 0)[1]\n"                                  \
  "    if first then -- before every bucket: the first bucket starts here now\n"                   \
  "      redis.call('ZREM', P..'qi'..l, first)\n"                                                  \
  "      im = pos..string.sub(first, 15)\n"                                                        \
  "      redis.call('ZADD', P..'qi'..l, 0, im)\n"                                                  \
  "      redis.call('ZREM', P..'qr'..l, first) -- it starts the first run too\n"                   \
  "      redis.call('ZADD', P..'qr'..l, 0, im)\n"                                                  \
  "      RC = {}\n"                                                                                \
  "    else\n"                                                                                     \
  "      im = bz_new(l, pos)\n"                                                                    \
  "      rz_added(l, im)\n"                                                                        \
  "    end\n"                                                                                      \
  "  end\n"                                                                                        \
  "  local k = bz_key(l, im)\n"                                                                    \
  "  if redis.call('ZCARD', k) >= BZ_MAX then im = bz_room(l, im, k, pos, score, member) end\n"    \
  "  redis.call('ZADD', bz_key(l, im), score, member)\n"                                           \
  "  return im\n"                                                                                  \
  "end\n"                                                                                          \
  "local function bz_add(l, score, member)\n"                                                      \
  "  rz_count(l, bz_place(l, score, member), 1)\n"                                                 \
  "  redis.call('HINCRBY', P..'qn', 'n'..l, 1)\n"                                                  \
  "end\n"                                                                                          \
  "-- Adds the new members of xs ({score, member, ...}, scores numbers) to level l: one ZADD\n"    \
  "-- per run of members that go to one bucket (a send batch in trigger order: one ZADD per\n"     \
  "-- BZ_MAX members, against one ZADD per batch today), one HINCRBY of its run's count each,\n"   \
  "-- and one HINCRBY.\n"                                                                          \
  "local function bz_add_all(l, xs)\n"                                                             \
  "  local im, lo, hi, n, args = nil, nil, nil, 0, {}\n"                                           \
  "  local function flush()\n"                                                                     \
  "    if args[1] then\n"                                                                          \
  "      redis.call('ZADD', bz_key(l, im), unpack(args))\n"                                        \
  "      rz_count(l, im, #args / 2)\n"                                                             \
  "      args = {}\n"                                                                              \
  "    end\n"                                                                                      \
  "  end\n"                                                                                        \
  "  for i = 1, #xs, 2 do\n"                                                                       \
  "    local s, m = xs[i], xs[i+1]\n"                                                              \
  "    if im and n < BZ_MAX and (s > lo[1] or (s == lo[1] and bz_seq(m) >= lo[2]))\n"              \
  "        and (not hi or s < hi[1] or (s == hi[1] and bz_seq(m) < hi[2])) then\n"                 \
  "      args[#args+1] = s; args[#args+1] = m; n = n + 1\n"                                        \
  "    else\n"                                                                                     \
  "      flush()\n"                                                                                \
  "      im = bz_find(l, bz_pos(s, m))\n"                                                          \
  "      n = im and redis.call('ZCARD', bz_key(l, im)) or BZ_MAX\n"                                \
  "      if n < BZ_MAX then -- it goes with the run it starts\n"                                   \
  "        args[1] = s; args[2] = m; n = n + 1\n"                                                  \
  "      else -- before every bucket, or its bucket is full\n"                                     \
  "        im = bz_place(l, s, m)\n"                                                               \
  "        rz_count(l, im, 1)\n"                                                                   \
  "        n = redis.call('ZCARD', bz_key(l, im))\n"                                               \
  "      end\n"                                                                                    \
  "      lo = {struct.unpack('>dI6', im)}\n"                                                       \
  "      local nx = bz_next(l, im)\n"                                                              \
  "      hi = nx and {struct.unpack('>dI6', nx)} or nil\n"                                         \
  "    end\n"                                                                                      \
  "  end\n"                                                                                        \
  "  flush()\n"                                                                                    \
  "  redis.call('HINCRBY', P..'qn', 'n'..l, #xs / 2)\n"                                            \
  "end\n"                                                                                          \
  "-- Removes member, whose score is `score`, from level l; true when it was there. A\n"           \
  "-- bucket left empty leaves the index; one left under a quarter full takes in its\n"            \
  "-- successor if both fit half a bucket and it does not start a run.\n"                          \
  "local function bz_rem(l, score, member)\n"                                                      \
  "  local im = bz_find(l, bz_pos(score, member))\n"                                               \
  "  if not im then return false end\n"                                                            \
  "  local k = bz_key(l, im)\n"                                                                    \
  "  if redis.call('ZREM', k, member) == 0 then return false end\n"                                \
  "  redis.call('HINCRBY', P..'qn', 'n'..l, -1)\n"                                                 \
  "  rz_count(l, im, -1)\n"                                                                        \
  "  local n = redis.call('ZCARD', k)\n"                                                           \
  "  if n == 0 then\n"                                                                             \
  "    rz_gone(l, im)\n"                                                                           \
  "    redis.call('ZREM', P..'qi'..l, im)\n"                                                       \
  "  elseif n < BZ_MAX / 4 then\n"                                                                 \
  "    local nx = bz_next(l, im)\n"                                                                \
  "    if nx and rz_of(l, nx) ~= nx then\n"                                                        \
  "      local nk = bz_key(l, nx)\n"                                                               \
  "      if n + redis.call('ZCARD', nk) <= BZ_HALF then\n"                                         \
  "        local xs = redis.call('ZRANGE', nk, 0, -1, 'WITHSCORES')\n"                             \
  "        local args = {}\n"                                                                      \
  "        for i = 1, #xs, 2 do args[#args+1] = xs[i+1]; args[#args+1] = xs[i] end\n"              \
  "        redis.call('ZADD', k, unpack(args))\n"                                                  \
  "        redis.call('DEL', nk)\n"                                                                \
  "        rz_gone(l, nx)\n"                                                                       \
  "        redis.call('ZREM', P..'qi'..l, nx)\n"                                                   \
  "      end\n"                                                                                    \
  "    end\n"                                                                                      \
  "  end\n"                                                                                        \
  "  return true\n"                                                                                \
  "end\n"                                                                                          \
  "-- Up to `limit` members of level l after position `after` ({score, seq}; nil: from\n"          \
  "-- the start) with a score <= max (a number), in (score, seq) order: {member, score,\n"         \
  "-- ...} as ZRANGEBYSCORE ... WITHSCORES answers. (Positions are compared as numbers:\n"         \
  "-- Lua compares strings with strcoll, which is not byte order under every locale.)\n"           \
  "local function bz_range(l, after, max, limit)\n"                                                \
  "  local out = {}\n"                                                                             \
  "  local im, min = nil, '-inf'\n"                                                                \
  "  if after then\n"                                                                              \
  "    im = bz_find(l, struct.pack('>dI6', after[1], after[2]))\n"                                 \
  "    min = string.format('%.17g', after[1])\n"                                                   \
  "  end\n"                                                                                        \
  "  if not im then im = redis.call('ZRANGE', P..'qi'..l, 0, 0)[1] end\n"                          \
  "  local maxs = string.format('%.17g', max)\n"                                                   \
  "  while im and #out < 2 * limit do\n"                                                           \
  "    if struct.unpack('>d', im) > max then break end\n"                                          \
  "    local xs = redis.call('ZRANGEBYSCORE', bz_key(l, im), min, maxs, 'WITHSCORES')\n"           \
  "    for i = 1, #xs, 2 do\n"                                                                     \
  "      if #out >= 2 * limit then break end\n"                                                    \
  "      local s = tonumber(xs[i+1])\n"                                                            \
  "      if not after or s > after[1] or (s == after[1] and bz_seq(xs[i]) > after[2]) then\n"      \
  "        out[#out+1] = xs[i]; out[#out+1] = xs[i+1]\n"                                           \
  "      end\n"                                                                                    \
  "    end\n"                                                                                      \
  "    im = bz_next(l, im)\n"                                                                      \
  "  end\n"                                                                                        \
  "  return out\n"                                                                                 \
  "end\n"                                                                                          \
  "-- The greatest score <= max (a number) in level l (nil: none): the bucket of (max, the last\n" \
  "-- seq), or the one before it when every member of that one is later.\n"                        \
  "local function bz_last(l, max)\n"                                                               \
  "  local im = bz_find(l, struct.pack('>dI6', max, 281474976710655))\n"                           \
  "  local maxs = string.format('%.17g', max)\n"                                                   \
  "  while im do\n"                                                                                \
  "    local x = redis.call('ZREVRANGEBYSCORE', bz_key(l, im), maxs, '-inf', 'WITHSCORES', "       \
  "'LIMIT', 0, 1)\n"                                                                               \
  "    if x[2] then return tonumber(x[2]) end\n"                                                   \
  "    im = redis.call('ZREVRANGEBYLEX', P..'qi'..l, '('..im, '-', 'LIMIT', 0, 1)[1]\n"            \
  "  end\n"                                                                                        \
  "end\n"                                                                                          \
  "-- A bound of ZCOUNT (a number, or a string such as '(12', '-inf', '+inf') as the string\n"     \
  "-- ZCOUNT takes, its number and whether it is exclusive.\n"                                     \
  "local function bz_bound(x)\n"                                                                   \
  "  if type(x) == 'number' then return string.format('%.17g', x), x, false end\n"                 \
  "  local ex = string.sub(x, 1, 1) == '('\n"                                                      \
  "  local s = ex and string.sub(x, 2) or x\n"                                                     \
  "  if s == '+inf' or s == 'inf' then return x, math.huge, ex end\n"                              \
  "  if s == '-inf' then return x, -math.huge, ex end\n"                                           \
  "  return x, tonumber(s), ex\n"                                                                  \
  "end\n"                                                                                          \
  "-- a <= b, or a < b when the bound is exclusive (ex).\n"                                        \
  "local function bz_le(a, b, ex) return a < b or (a == b and not ex) end\n"                       \
  "-- ZCOUNT mins maxs over the buckets of level l from b (an index member) to stop (excluded;\n"  \
  "-- nil: the last), until one starts past max (hi, exclusive when hx).\n"                        \
  "local function bz_zcount(l, b, stop, mins, maxs, hi, hx)\n"                                     \
  "  local n, from, lim = 0, '['..b, 2\n"                                                          \
  "  while true do\n"                                                                              \
  "    local bs = redis.call('ZRANGEBYLEX', P..'qi'..l, from, stop and '('..stop or '+', "         \
  "'LIMIT', 0, lim)\n"                                                                             \
  "    for _, im in ipairs(bs) do\n"                                                               \
  "      if not bz_le(struct.unpack('>d', im), hi, hx) then return n, true end\n"                  \
  "      n = n + redis.call('ZCOUNT', bz_key(l, im), mins, maxs)\n"                                \
  "    end\n"                                                                                      \
  "    if #bs < lim then return n end\n"                                                           \
  "    from, lim = '('..bs[lim], 8\n"                                                              \
  "  end\n"                                                                                        \
  "end\n"                                                                                          \
  "-- How many members of level l have a score between min and max (ZCOUNT's bounds, numbers\n"    \
  "-- or strings): the first buckets of the range by ZCOUNT (most counts, as a script's account\n" \
  "-- since the last one, end there: no run is read), then the rest of the run holding the next\n" \
  "-- bucket, then the runs wholly inside by their counts and the others' buckets by ZCOUNT (a\n"  \
  "-- run's members lie between its first position and the next run's).\n"                         \
  "local function bz_count(l, min, max)\n"                                                         \
  "  local mins, lo, lx = bz_bound(min)\n"                                                         \
  "  local maxs, hi, hx = bz_bound(max)\n"                                                         \
  "  local n, b = 0, nil\n"                                                                        \
  "  if lo > -math.huge then b = bz_find(l, struct.pack('>dI6', math.max(lo, 0), 0)) end\n"        \
  "  if not b then b = redis.call('ZRANGE', P..'qi'..l, 0, 0)[1] end\n"                            \
  "  for i = 1, 4 do\n"                                                                            \
  "    if not b or not bz_le(struct.unpack('>d', b), hi, hx) then return n end\n"                  \
  "    if i == 4 then break end\n"                                                                 \
  "    n = n + redis.call('ZCOUNT', bz_key(l, b), mins, maxs)\n"                                   \
  "    b = bz_next(l, b)\n"                                                                        \
  "  end\n"                                                                                        \
  "  local rk = P..'qr'..l\n"                                                                      \
  "  local nx = redis.call('ZRANGEBYLEX', rk, '('..rz_of(l, b), '+', 'LIMIT', 0, 1)[1]\n"          \
  "  local c, past = bz_zcount(l, b, nx, mins, maxs, hi, hx)\n"                                    \
  "  n = n + c\n"                                                                                  \
  "  if past or not nx then return n end\n"                                                        \
  "  local from, lim = '['..nx, 3\n"                                                               \
  "  while true do\n"                                                                              \
  "    local rs = redis.call('ZRANGEBYLEX', rk, from, '+', 'LIMIT', 0, lim)\n"                     \
  "    local whole, done = {}, false\n"                                                            \
  "    for i = 1, math.min(#rs, lim - 1) do\n"                                                     \
  "      local s, rn = struct.unpack('>d', rs[i]), rs[i+1]\n"                                      \
  "      if not bz_le(s, hi, hx) then done = true; break end\n"                                    \
  "      if bz_le(lo, s, lx) and (rn and bz_le(struct.unpack('>d', rn), hi, hx)\n"                 \
  "                               or not rn and hi == math.huge) then\n"                           \
  "        whole[#whole+1] = 'n'..rz_id(rs[i])\n"                                                  \
  "      else\n"                                                                                   \
  "        c, past = bz_zcount(l, rs[i], rn, mins, maxs, hi, hx)\n"                                \
  "        n = n + c\n"                                                                            \
  "        if past then done = true; break end\n"                                                  \
  "      end\n"                                                                                    \
  "    end\n"                                                                                      \
  "    if whole[1] then\n"                                                                         \
  "      for _, x in ipairs(redis.call('HMGET', P..'qc'..l, unpack(whole))) do n = n + x end\n"    \
  "    end\n"                                                                                      \
  "    if done or #rs < lim then return n end\n"                                                   \
  "    from, lim = '['..rs[lim], 33\n"                                                             \
  "  end\n"                                                                                        \
  "end\n"                                                                                          \
  "-- The members of level l (O(1)).\n"                                                            \
  "local function bz_card(l)\n"                                                                    \
  "  return tonumber(redis.call('HGET', P..'qn', 'n'..l) or '0')\n"                                \
  "end\n"
