// The Lua every script of the Redis backend starts with (docs/redis.md), as a string-literal
// macro that scripts*.cc paste in front of each script's own text. Private to src/redis/.
//
// What it defines: the record (a packed string since issue 20; a hash before, still read), its
// status at `now` (core::StatusAt), its natural end (core::NaturalEndTime), moves between the sets,
// the statistics every reply starts with. Times are epoch milliseconds; records keep them as the
// strings the node sent (exact beyond 2^53); numbers are only compared, and sums go through the
// decimal helpers of CQ_LUA_DECIMAL.
//
// Record fields: p payload, pt produce, tt trigger, et expire, mr maxRetry, r deliveries,
// ph phase (0 pending, 1 delivered, 2 ended), es end status, va visible at, ea ended at, sq seq,
// and since issue 14 pr priority, ct countTrigger, c count, le lastError (absent: 0, 0, 0, '',
// so records written before read right; they are written only when they differ from that), and
// since issue 15 ri retry interval of a delivery (visible at = ack deadline + ri), dt/ds/dr/de
// a dead letter's source topic, status, deliveries and end time there; since issue 16 cb the
// message's own callback (core::EncodeCallback's bytes, absent: none) and pu, '1' in the push
// lane (absent: the pull lane); rv a redriven message's origin. Since issue 20 a record is one
// string, a MessagePack array of these values in PF's order (trailing defaults left out); a
// hash written before is read (load). Which of the three formats a node writes is its
// redis-format (FMT: 1 hash, 2 strings, 3 integers); every format is read, and a record takes
// the writing node's format at its next change (write_record).
//
// Configuration: every call's first argument is the node-local layers of the topic's
// configuration (RedisBackend::Eval); cfg() resolves the stored hash 'cfg' over them. A message
// ending as EXPIRE or RETRY_EXHAUST with a dead-letter topic leaves an entry in the outbox
// ('ob', 'ob:<member>') in the same script (docs/redis.md "Dead letters").
//
// Sets, by priority level l (0..9): pending (by visible at) and delivered (by ack deadline) are
// 'p' and 'd' for level 0 (the names from before priorities, so an older keyspace keeps
// working) and 'p<l>' and 'd<l>' above; 'pl' holds the levels above 0 that may have members.
// The push lane (docs/push.md) is the same sets at levels 10..19 (priority + 10): a pull takes
// levels 0..9 only, a push take 10..19 only, and everything else (counts, lists, purge, the
// wake-up) reads every level in use, so it sees both lanes without knowing of them.
// 'e' holds in-life messages by natural end, 'x<status>' ended ones (4..7) by end time, trimmed
// by the retention. Members are the zero-padded seq followed by the msgId.
//
// Layout 4 (docs/redis.md "Format 4"): a topic whose 'lay' is '4' (created so by a node whose
// LOCAL format line is 4, new_topic4; a test-only switch until the config accepts it) has its
// records in hash buckets and its pending sets bucketed (CQ_LUA_LAYOUT4, lua_layout4.h); the
// helpers that name keys (load, write_record, pz_*, dk, mload, unpend, finish, store_new, ...)
// serve both layouts, so one script serves a topic in either. pk() is for layouts 1-3 only.

#pragma once

#include "redis/lua_decimal.h"
#include "redis/lua_history.h"
#include "redis/lua_layout4.h"

// Every script starts with this (it includes CQ_LUA_DECIMAL).
#define CQ_LUA_COMMON                                                                              \
  CQ_LUA_DECIMAL                                                                                   \
  "local P = KEYS[1]\n"                                                                            \
  "-- The node's own layers of the topic's configuration (core::TopicDefaults), which every "      \
  "call\n"                                                                                         \
  "-- puts first: "                                                                                \
  "'capacity\\nttl\\nmaxRetry\\nackTimeout\\nretryInterval\\npaused\\ndeadLetterTopic\\nhistory'"  \
  "\n"                                                                                             \
  "-- and the node's history settings ('_h': 'retention maxEntries node', CQ_LUA_HISTORY).\n"      \
  "local LOCAL = table.remove(ARGV, 1)\n"                                                          \
  "-- The record format this node writes (redis-format, its last line); all are read:\n"           \
  "-- 1 a hash, a field per name (nodes before issue 20); 2 a MessagePack array of\n"              \
  "-- strings; 3 the same with the numeric fields as MessagePack integers.\n"                      \
  "local FMT = tonumber(string.match(LOCAL, '\\n(%d+)$')) or 2\n"                                  \
  "-- 4 (a test-only switch until build step 6; the config refuses it): format 3's records, and "  \
  "a\n"                                                                                            \
  "-- topic this node creates is created in layout 4 (new_topic4).\n"                              \
  "local NEW4 = FMT == 4\n"                                                                        \
  "if NEW4 then FMT = 3 end\n"                                                                     \
  "-- The topic's layout (docs/redis.md \"Format 4\"): 'lay' = '4', else layouts 1-3 (absent). "   \
  "KE: the\n"                                                                                      \
  "-- in-life set, KX: the ended sets' prefix, KL: the set of the levels above 0 in use.\n"        \
  "-- 'm': `chronoq redis-migrate` is moving the topic to layout 4 (docs/redis.md \"Migration "    \
  "from\n"                                                                                         \
  "-- layouts 1-3\"): every script but the migration's (which names 'lay' as KEYS[2]) refuses.\n"  \
  "local LAY = redis.call('GET', P..'lay')\n"                                                      \
  "if LAY == 'm' and not KEYS[2] then\n"                                                           \
  "  return redis.error_reply('MIGRATING topic is being migrated to redis-format 4')\n"            \
  "end\n"                                                                                          \
  "LAY = LAY == '4'\n"                                                                             \
  "local KE, KX, KL = P..'e', P..'x', P..'pl'\n"                                                   \
  "local LV -- the levels in use (levels())\n"                                                     \
  "-- Layout 4's helpers (B4): made by layout4() (CQ_LUA_LAYOUT4, at the end of this prelude)\n"   \
  "-- only for a layout-4 topic, with no upvalues: every closure a script makes, and every\n"      \
  "-- upvalue it captures, costs every call (docs/redis.md \"As built\"). The helpers below "      \
  "test\n"                                                                                         \
  "-- B4 (set exactly when LAY) rather than LAY: one upvalue fewer each.\n"                        \
  "local B4\n"                                                                                     \
  "local CF\n"                                                                                     \
  "local function cfg()\n"                                                                         \
  "  if CF then return CF end\n"                                                                   \
  "  CF = {}\n"                                                                                    \
  "  local names, i = {'cap', 'ttl', 'mr', 'at', 'ri', 'pz', 'dlt', 'hs', '_h', '_f'}, 1\n"        \
  "  for v in string.gmatch(LOCAL..'\\n', '([^\\n]*)\\n') do CF[names[i]] = v; i = i + 1 end\n"    \
  "  local s = redis.call('HGETALL', P..'cfg')\n"                                                  \
  "  for j = 1, #s, 2 do CF[s[j]] = s[j+1] end\n"                                                  \
  "  return CF\n"                                                                                  \
  "end\n"                                                                                          \
  "-- Push delivery (docs/push.md). The topic's callback: the stored 'cb' "                        \
  "(core::EncodeCallback's\n"                                                                      \
  "-- bytes; '' stored: none; the node-local layers never have one), nil when none.\n"             \
  "local function topic_cb()\n"                                                                    \
  "  local x = cfg().cb\n"                                                                         \
  "  if x and x ~= '' then return x end\n"                                                         \
  "  return nil\n"                                                                                 \
  "end\n"                                                                                          \
  "-- The timeout and the retry interval (nil: none) of a callback's bytes: a format byte, a "     \
  "type\n"                                                                                         \
  "-- byte, then both as varints (LEB128; the interval plus one, 0 for none).\n"                   \
  "local function cb_times(b)\n"                                                                   \
  "  local i = 3\n"                                                                                \
  "  local function varint()\n"                                                                    \
  "    local v, mul = 0, 1\n"                                                                      \
  "    while true do\n"                                                                            \
  "      local x = string.byte(b, i) or 0\n"                                                       \
  "      i = i + 1\n"                                                                              \
  "      v = v + (x % 128) * mul\n"                                                                \
  "      if x < 128 then return v end\n"                                                           \
  "      mul = mul * 128\n"                                                                        \
  "    end\n"                                                                                      \
  "  end\n"                                                                                        \
  "  local t = varint()\n"                                                                         \
  "  local r = varint()\n"                                                                         \
  "  if r > 0 then return t, r - 1 end\n"                                                          \
  "  return t, nil\n"                                                                              \
  "end\n"                                                                                          \
  "-- core::RetryIntervalOf: the message's own callback's retry interval, else the topic's.\n"     \
  "local function retry_interval_of(m)\n"                                                          \
  "  if m.raw.cb ~= '' then\n"                                                                     \
  "    local _, r = cb_times(m.raw.cb)\n"                                                          \
  "    if r then return string.format('%d', r) end\n"                                              \
  "  end\n"                                                                                        \
  "  return cfg().ri\n"                                                                            \
  "end\n"                                                                                          \
  "local TRIG, GSUM, GMAX, TOUT, ENDED, EXH, DLO = 0, 0, 0, 0, 0, 0, 0\n"                          \
  "local function pk(l)\n"                                                                         \
  "  if B4 then error('layout 4 has no single pending set (not built for this script yet)') "      \
  "end\n"                                                                                          \
  "  if l == 0 then return P..'p' end return P..'p'..l\n"                                          \
  "end\n"                                                                                          \
  "local function dk(l)\n"                                                                         \
  "  if B4 then return P..'D'..l end\n"                                                            \
  "  if l == 0 then return P..'d' end return P..'d'..l\n"                                          \
  "end\n"                                                                                          \
  "-- The pending set of level l (layout 4: buckets, CQ_LUA_BUCKETS). Scores are raw strings or\n" \
  "-- numbers (B4.range: the pending entries in (score, seq) order; B4.rem: takes one off).\n"     \
  "local function pz_add(l, score, member)\n"                                                      \
  "  if l ~= 0 then redis.call('SADD', KL, tostring(l)); LV = nil end\n"                           \
  "  if B4 then B4.add(l, tonumber(score), member) else redis.call('ZADD', pk(l), score, "         \
  "member) end\n"                                                                                  \
  "end\n"                                                                                          \
  "local function pz_count(l, min, max) -- ZCOUNT's range strings\n"                               \
  "  if B4 then return B4.count(l, min, max) end\n"                                                \
  "  return redis.call('ZCOUNT', pk(l), min, max)\n"                                               \
  "end\n"                                                                                          \
  "local function pz_card(l)\n"                                                                    \
  "  if B4 then return B4.card(l) end\n"                                                           \
  "  return redis.call('ZCARD', pk(l))\n"                                                          \
  "end\n"                                                                                          \
  "-- A record's level: its priority, plus 10 in the push lane.\n"                                 \
  "local function lv(m) if m.pu == 1 then return m.pr + 10 end return m.pr end\n"                  \
  "local function levels() -- in use, highest first; 0 always, last\n"                             \
  "  if LV then return LV end\n"                                                                   \
  "  LV = {}\n"                                                                                    \
  "  for _, x in ipairs(redis.call('SMEMBERS', KL)) do\n"                                          \
  "    local l = tonumber(x)\n"                                                                    \
  "    if pz_card(l) + redis.call('ZCARD', dk(l)) > 0 then LV[#LV+1] = l\n"                        \
  "    else redis.call('SREM', KL, x) end\n"                                                       \
  "  end\n"                                                                                        \
  "  table.sort(LV, function(a, b) return a > b end)\n"                                            \
  "  LV[#LV+1] = 0\n"                                                                              \
  "  return LV\n"                                                                                  \
  "end\n"                                                                                          \
  "local function zadd_level(set, l, score, member)\n"                                             \
  "  if set == 'p' then pz_add(l, score, member); return end\n"                                    \
  "  if l ~= 0 then redis.call('SADD', KL, tostring(l)); LV = nil end\n"                           \
  "  redis.call('ZADD', dk(l), score, member)\n"                                                   \
  "end\n"                                                                                          \
  "local function account(now_arg, now)\n"                                                         \
  "  if B4 then B4.move_to_e(now) end\n"                                                           \
  "  local wm = redis.call('GET', P..'wm')\n"                                                      \
  "  if wm and tonumber(wm) >= now then return end\n"                                              \
  "  redis.call('SET', P..'wm', now_arg)\n"                                                        \
  "  if not wm then return end\n"                                                                  \
  "  local first\n"                                                                                \
  "  for _, l in ipairs(levels()) do\n"                                                            \
  "    TOUT = TOUT + redis.call('ZCOUNT', dk(l), '('..wm, now_arg)\n"                              \
  "    local n = pz_count(l, '('..wm, now_arg)\n"                                                  \
  "    if n > 0 and B4 then -- the entries after wm: each (up to 256), else the first and last\n"  \
  "      TRIG = TRIG + n\n"                                                                        \
  "      local all = B4.range(l, {tonumber(wm), 281474976710655}, now, n <= 256 and n or 1)\n"     \
  "      local fs, s = tonumber(all[2]), 0\n"                                                      \
  "      if not first or fs < first then first = fs end\n"                                         \
  "      if n <= 256 then\n"                                                                       \
  "        for i = 2, #all, 2 do s = s + now - tonumber(all[i]) end\n"                             \
  "        GSUM = GSUM + s * n / (#all / 2)\n"                                                     \
  "      else GSUM = GSUM + n * (now - (fs + (B4.last(l, now) or fs)) / 2) end\n"                  \
  "    elseif n > 0 then\n"                                                                        \
  "      TRIG = TRIG + n\n"                                                                        \
  "      local f = redis.call('ZRANGEBYSCORE', pk(l), '('..wm, now_arg, 'WITHSCORES', 'LIMIT', "   \
  "0, 1)\n"                                                                                        \
  "      local fs = tonumber(f[2])\n"                                                              \
  "      if not first or fs < first then first = fs end\n"                                         \
  "      if n <= 10000 then\n"                                                                     \
  "        local all = redis.call('ZRANGEBYSCORE', pk(l), '('..wm, now_arg, 'WITHSCORES')\n"       \
  "        for i = 2, #all, 2 do GSUM = GSUM + now - tonumber(all[i]) end\n"                       \
  "      else\n"                                                                                   \
  "        local last = redis.call('ZREVRANGEBYSCORE', pk(l), now_arg, '('..wm, 'WITHSCORES', "    \
  "'LIMIT', 0, 1)\n"                                                                               \
  "        GSUM = GSUM + n * (now - (fs + tonumber(last[2])) / 2)\n"                               \
  "      end\n"                                                                                    \
  "    end\n"                                                                                      \
  "  end\n"                                                                                        \
  "  if first then GMAX = now - first end\n"                                                       \
  "end\n"                                                                                          \
  "-- Statistics first: what this script observed, the dead letters it put in the outbox, and "    \
  "how\n"                                                                                          \
  "-- many entries the outbox holds (the node moves them on); layout 4: when the oldest ended\n"   \
  "-- record this script's trims left is due ('': none left or no trim), for the sweep set.\n"     \
  "local function reply(t)\n"                                                                      \
  "  local st = {TRIG, GSUM, GMAX, TOUT, ENDED, EXH, DLO, redis.call('ZCARD', P..'ob')}\n"         \
  "  if B4 then st[9] = B4.sw and string.format('%d', B4.sw) or '' end\n"                          \
  "  table.insert(t, 1, st)\n"                                                                     \
  "  return t\n"                                                                                   \
  "end\n"                                                                                          \
  "-- ri: the retry interval of a delivery; dt, ds, dr, de: a dead letter's source topic, "        \
  "status,\n"                                                                                      \
  "-- deliveries and end time there (absent on other messages).\n"                                 \
  "local F = "                                                                                     \
  "{'pt','tt','et','mr','r','ph','es','va','ea','sq','pr','ct','c','le','ri','dt','ds','dr','de'," \
  "'cb','pu'}\n"                                                                                   \
  "-- The stored fields, in the order of the packed record: the payload, F, and rv (a redriven\n"  \
  "-- message's origin, read by the redrive-in script only).\n"                                    \
  "local PF = "                                                                                    \
  "{'p','pt','tt','et','mr','r','ph','es','va','ea','sq','pr','ct','c','le','ri','dt','ds','dr','" \
  "de','cb','pu','rv'}\n"                                                                          \
  "local DEF = {pr='0', ct='0', c='0', le='', ri='0', dt='', ds='0', dr='0', de='0', cb='', "      \
  "pu='0', rv=''}\n"                                                                               \
  "-- A record is a string since issue 20 (formats 2 and 3, FMT): a MessagePack array of\n"        \
  "-- PF's values, the trailing ones that have their default left out. Format 1 (before\n"         \
  "-- issue 20) is a hash with a field per name. load reads all three; write_record writes\n"      \
  "-- FMT, so a record takes this node's format at its next change.\n"                             \
  "-- Fields that are decimal numbers (as the scripts and the node write them): format 3\n"        \
  "-- stores those of up to 15 digits, exact in Lua's doubles, as integers; longer ones\n"         \
  "-- (up to 2^63 - 1) stay strings.\n"                                                            \
  "local NUM = {pt=1, tt=1, et=1, mr=1, r=1, ph=1, es=1, va=1, ea=1, sq=1, pr=1, ct=1, c=1,\n"     \
  "             ri=1, ds=1, dr=1, de=1, pu=1}\n"                                                   \
  "local function pack(m)\n"                                                                       \
  "  local t, n = {m.pl}, 11\n"                                                                    \
  "  for i = 2, #PF do\n"                                                                          \
  "    local f = PF[i]\n"                                                                          \
  "    local x = m.raw[f]\n"                                                                       \
  "    if x ~= DEF[f] then n = i end\n"                                                            \
  "    if (FMT == 3 or B4) and NUM[f] and #x < 16 then x = tonumber(x) or x end\n"                 \
  "    t[i] = x\n"                                                                                 \
  "  end\n"                                                                                        \
  "  for i = n + 1, #PF do t[i] = nil end\n"                                                       \
  "  return cmsgpack.pack(t)\n"                                                                    \
  "end\n"                                                                                          \
  "-- Writes m's record in format FMT; `keep`: keeps its expiry (an ended record's).\n"            \
  "local function write_record(m, keep)\n"                                                         \
  "  if B4 then redis.call('HSET', P..'b:'..m.bk, m.kid, pack(m)); return end\n"                   \
  "  local k = P..'r:'..m.id\n"                                                                    \
  "  if FMT ~= 1 then\n"                                                                           \
  "    local v = pack(m)\n"                                                                        \
  "    if keep then redis.call('SET', k, v, 'KEEPTTL') else redis.call('SET', k, v) end\n"         \
  "    return\n"                                                                                   \
  "  end\n"                                                                                        \
  "  -- A hash as before issue 20: the fields that differ from their default (pt..sq always).\n"   \
  "  local t = {'p', m.pl}\n"                                                                      \
  "  for i = 2, #PF do\n"                                                                          \
  "    local f = PF[i]\n"                                                                          \
  "    local x = m.raw[f]\n"                                                                       \
  "    if i <= 11 or x ~= DEF[f] then t[#t+1] = f; t[#t+1] = x end\n"                              \
  "  end\n"                                                                                        \
  "  local ttl = keep and redis.call('PTTL', k) or -1\n"                                           \
  "  redis.call('DEL', k)\n"                                                                       \
  "  redis.call('HSET', k, unpack(t))\n"                                                           \
  "  if ttl > 0 then redis.call('PEXPIRE', k, ttl) end\n"                                          \
  "end\n"                                                                                          \
  "-- Layout 4: the key id and record bucket of id (computed when not given).\n"                   \
  "local function load(id, with_payload, kid, bk)\n"                                               \
  "  local k = P..'r:'..id\n"                                                                      \
  "  local s, v\n"                                                                                 \
  "  if B4 then\n"                                                                                 \
  "    kid = kid or B4.kid_of(id)\n"                                                               \
  "    bk = bk or B4.bucket_of(kid)\n"                                                             \
  "    s = redis.call('HGET', P..'b:'..bk, kid)\n"                                                 \
  "  else s = redis.pcall('GET', k) end\n"                                                         \
  "  if type(s) == 'string' then v = cmsgpack.unpack(s)\n"                                         \
  "  elseif not s then return nil\n"                                                               \
  "  else -- WRONGTYPE: a hash of before issue 20\n"                                               \
  "    v = redis.call('HMGET', k, unpack(PF))\n"                                                   \
  "    if not v[2] then return nil end\n"                                                          \
  "  end\n"                                                                                        \
  "  local m = {id=id, raw={}, pl=v[1] or ''}\n"                                                   \
  "  for i = 2, #PF do\n"                                                                          \
  "    local f = PF[i]\n"                                                                          \
  "    local x = v[i] or DEF[f]\n"                                                                 \
  "    if type(x) == 'number' then -- format 3 (tostring's %.14g is exact below 1e14)\n"           \
  "      m[f] = x; m.raw[f] = x < 1e14 and tostring(x) or string.format('%d', x)\n"                \
  "    else\n"                                                                                     \
  "      m.raw[f] = x; m[f] = tonumber(x)\n"                                                       \
  "    end\n"                                                                                      \
  "  end\n"                                                                                        \
  "  m.raw.p = with_payload and m.pl or ''\n"                                                      \
  "  if B4 then m.kid, m.bk, m.member = kid, bk, B4.member(m.sq, bk, kid)\n"                       \
  "  else m.member = string.format('%016d', m.sq)..id end\n"                                       \
  "  return m\n"                                                                                   \
  "end\n"                                                                                          \
  "-- The record a member names.\n"                                                                \
  "local function mload(member, with_payload)\n"                                                   \
  "  if B4 then\n"                                                                                 \
  "    local kid = B4.kid(member)\n"                                                               \
  "    return load(B4.mid_of(kid), with_payload, kid, B4.bucket(member))\n"                        \
  "  end\n"                                                                                        \
  "  return load(string.sub(member, 17), with_payload)\n"                                          \
  "end\n"                                                                                          \
  "-- The ack deadline of a delivery: visible-at less the retry interval.\n"                       \
  "local function deadline_of(m)\n"                                                                \
  "  if m.ri == 0 then return m.va, m.raw.va end\n"                                                \
  "  local d = dsub(m.raw.va, m.raw.ri)\n"                                                         \
  "  return tonumber(d), d\n"                                                                      \
  "end\n"                                                                                          \
  "local function natural_end(m)\n"                                                                \
  "  if m.ph == 2 then return m.ea, m.raw.ea end\n"                                                \
  "  if m.r >= m.mr + 1 then\n"                                                                    \
  "    local d, draw = deadline_of(m)\n"                                                           \
  "    if d < m.et then return d, draw end\n"                                                      \
  "  end\n"                                                                                        \
  "  return m.et, m.raw.et\n"                                                                      \
  "end\n"                                                                                          \
  "-- m leaves the pending or delivered set of its level (layout 4 finds the pending bucket by "   \
  "m's\n"                                                                                          \
  "-- visible-at, and whether it was out of E, so call it before changing m).\n"                   \
  "local function unpend(m)\n"                                                                     \
  "  if not B4 then\n"                                                                             \
  "    redis.call('ZREM', pk(lv(m)), m.member); redis.call('ZREM', dk(lv(m)), m.member)\n"         \
  "  elseif m.ph == 0 then\n"                                                                      \
  "    if B4.rem(lv(m), m.va, m.member) and B4.out_of_e(m.va, m.sq, (natural_end(m))) then\n"      \
  "      redis.call('HINCRBY', P..'qn', 'w', -1)\n"                                                \
  "    end\n"                                                                                      \
  "  else redis.call('ZREM', dk(lv(m)), m.member) end\n"                                           \
  "end\n"                                                                                          \
  "local function status(m, now)\n"                                                                \
  "  if m.ph == 2 then return m.es end\n"                                                          \
  "  if now >= natural_end(m) then if m.r == 0 then return 5 else return 6 end end\n"              \
  "  if m.ph == 1 and deadline_of(m) > now then return 3 end\n"                                    \
  "  if m.va > now then return 1 end\n"                                                            \
  "  return 2\n"                                                                                   \
  "end\n"                                                                                          \
  "local function purged(m, now, retention)\n"                                                     \
  "  return now >= natural_end(m) + retention\n"                                                   \
  "end\n"                                                                                          \
  "local function flat(m)\n"                                                                       \
  "  local out = {m.id, m.raw.p}\n"                                                                \
  "  for _, f in ipairs(F) do out[#out+1] = m.raw[f] end\n"                                        \
  "  return out\n"                                                                                 \
  "end\n"                                                                                          \
  "local function with_tag(tag, m)\n"                                                              \
  "  local out = flat(m)\n"                                                                        \
  "  table.insert(out, 1, tag)\n"                                                                  \
  "  return out\n"                                                                                 \
  "end\n"                                                                                          \
  "local function set_fields(m, ...)\n"                                                            \
  "  local a = {...}\n"                                                                            \
  "  for i = 1, #a, 2 do\n"                                                                        \
  "    m.raw[a[i]] = a[i+1]; m[a[i]] = tonumber(a[i+1])\n"                                         \
  "    if a[i] == 'p' then m.pl = a[i+1] end\n"                                                    \
  "  end\n"                                                                                        \
  "  write_record(m, true)\n"                                                                      \
  "end\n"                                                                                          \
  "local function trim_ended(st, now, retention)\n"                                                \
  "  local cut = string.format('%d', now - retention)\n"                                           \
  "  if B4 then B4.trim_at(st, cut, retention, cfg().hs == '1'); return end\n"                     \
  "  redis.call('ZREMRANGEBYSCORE', P..'x'..st, '-inf', cut)\n"                                    \
  "end\n" CQ_LUA_HISTORY                                                                           \
  "-- A message that ends as EXPIRE or RETRY_EXHAUST in a topic with a dead-letter topic: an "     \
  "outbox\n"                                                                                       \
  "-- entry with what the dead-letter topic's record needs, written with the end (atomic); the "   \
  "node\n"                                                                                         \
  "-- then stores it in the dead-letter topic (another slot) and removes the entry.\n"             \
  "local function to_outbox(m, st, at_raw, now)\n"                                                 \
  "  local dlt = cfg().dlt\n"                                                                      \
  "  if (st ~= 5 and st ~= 6) or not dlt or dlt == '' then return end\n"                           \
  "  local k = P..'ob:'..m.member\n"                                                               \
  "  redis.call('HSET', k, 'k', 'dl', 'id', m.id, 'to', dlt, 'p', m.pl,\n"                         \
  "             'pr', m.raw.pr, 'le', m.raw.le, 'ds', tostring(st), 'dr', m.raw.r, 'de', at_raw, " \
  "'cb', m.raw.cb)\n"                                                                              \
  "  redis.call('ZADD', P..'ob', string.format('%d', now), m.member)\n"                            \
  "  DLO = DLO + 1\n"                                                                              \
  "end\n"                                                                                          \
  "local function finish(m, st, at_raw, now, retention, by_time)\n"                                \
  "  if by_time then ENDED = ENDED + 1; if st == 6 then EXH = EXH + 1 end end\n"                   \
  "  local hb = hist_before(m)\n"                                                                  \
  "  to_outbox(m, st, at_raw, now)\n"                                                              \
  "  unpend(m)\n"                                                                                  \
  "  redis.call('ZREM', KE, m.member)\n"                                                           \
  "  set_fields(m, 'ph', '2', 'es', tostring(st), 'ea', at_raw)\n"                                 \
  "  local left = tonumber(at_raw) + retention - now\n"                                            \
  "  hist_change(hb, m, now, at_raw)\n"                                                            \
  "  if left <= 0 then -- the record and its history go\n"                                         \
  "    if B4 then B4.del(m) else redis.call('DEL', P..'r:'..m.id, P..'h:'..m.id) end\n"            \
  "    return\n"                                                                                   \
  "  end\n"                                                                                        \
  "  if not B4 then redis.call('PEXPIRE', P..'r:'..m.id, string.format('%d', left)) end\n"         \
  "  redis.call('ZADD', KX..st, at_raw, m.member)\n"                                               \
  "  trim_ended(st, now, retention)\n"                                                             \
  "end\n"                                                                                          \
  "local function unindex(m) -- a record about to be replaced or forgotten\n"                      \
  "  if not B4 or m.ph ~= 2 then unpend(m) end\n"                                                  \
  "  redis.call('ZREM', KE, m.member)\n"                                                           \
  "  if m.ph == 2 then redis.call('ZREM', KX..m.es, m.member) end\n"                               \
  "end\n"                                                                                          \
  "-- Stores a new pending record (`fields`: name/value pairs beyond the common ones, values\n"    \
  "-- already strings) consumable from `va`; replaces an ended one. Returns its seq. With `D` "    \
  "(a\n"                                                                                           \
  "-- batch, new_batch) its writes wait in D for flush_batch: one MSET and one ZADD per set for "  \
  "the\n"                                                                                          \
  "-- whole batch instead of five commands per message. The caller flushes before it loads a "     \
  "msgId\n"                                                                                        \
  "-- stored in D (D.mem) and at the end. `kid`, `bk`: layout 4's key id and record bucket of "    \
  "id\n"                                                                                           \
  "-- when the node sent them (else computed).\n"                                                  \
  "local function store_new(id, old, payload, pt, tt, et, mr, pr, va, fields, D, kid, bk)\n"       \
  "  if old then unindex(old) end\n"                                                               \
  "  local seq\n"                                                                                  \
  "  if D then\n"                                                                                  \
  "    if not D.seq then D.seq = redis.call('INCRBY', P..'seq', D.left) - D.left end\n"            \
  "    D.seq = D.seq + 1\n"                                                                        \
  "    seq = D.seq\n"                                                                              \
  "  else\n"                                                                                       \
  "    seq = redis.call('INCR', P..'seq')\n"                                                       \
  "  end\n"                                                                                        \
  "  local m = {id=id, pl=payload, raw={pt=pt, tt=tt, et=et, mr=mr, r='0', ph='0', es='1', "       \
  "va=va,\n"                                                                                       \
  "             ea='0', sq=tostring(seq), pr=pr, ct='0', c='0', le='', ri='0', dt='', ds='0',\n"   \
  "             dr='0', de='0', cb='', pu='0', rv=''}}\n"                                          \
  "  for i = 1, #fields, 2 do m.raw[fields[i]] = fields[i+1] end\n"                                \
  "  local member\n"                                                                               \
  "  if B4 then\n"                                                                                 \
  "    m.kid = old and old.kid or kid or B4.kid_of(id)\n"                                          \
  "    m.bk = old and old.bk or bk or B4.bucket_of(m.kid)\n"                                       \
  "    member = B4.member(seq, m.bk, m.kid)\n"                                                     \
  "  else member = string.format('%016d', seq)..id end\n"                                          \
  "  local l = tonumber(pr)\n"                                                                     \
  "  if m.raw.pu == '1' then l = l + 10 end\n"                                                     \
  "  if D and FMT == 1 and not B4 then write_record(m, false) end -- hashes: one at a time\n"      \
  "  local in_e, e_raw = true, et\n"                                                               \
  "  if B4 then -- E or not (out_of_e), from the numbers natural_end reads\n"                      \
  "    m.ph, m.r, m.mr, m.ri = 0, tonumber(m.raw.r), tonumber(mr), 0\n"                            \
  "    m.va, m.et = tonumber(va), tonumber(et)\n"                                                  \
  "    local ne\n"                                                                                 \
  "    ne, e_raw = natural_end(m)\n"                                                               \
  "    in_e = not B4.out_of_e(m.va, seq, ne)\n"                                                    \
  "    if not in_e and D then D.w = D.w + 1\n"                                                     \
  "    elseif not in_e then redis.call('HINCRBY', P..'qn', 'w', 1) end\n"                          \
  "  end\n"                                                                                        \
  "  if D and B4 then -- one HSET per bucket of the batch\n"                                       \
  "    local hs = D.h[m.bk] or {}\n"                                                               \
  "    D.h[m.bk] = hs\n"                                                                           \
  "    hs[#hs+1] = m.kid; hs[#hs+1] = pack(m)\n"                                                   \
  "  end\n"                                                                                        \
  "  if D then\n"                                                                                  \
  "    if FMT ~= 1 and not B4 then D.sets[#D.sets+1] = P..'r:'..id; D.sets[#D.sets+1] = pack(m) "  \
  "end\n"                                                                                          \
  "    D.mem[id] = true\n"                                                                         \
  "    local ps = D.p[l] or {}\n"                                                                  \
  "    D.p[l] = ps\n"                                                                              \
  "    ps[#ps+1] = B4 and tonumber(va) or va; ps[#ps+1] = member\n"                                \
  "    if in_e then D.e[#D.e+1] = e_raw; D.e[#D.e+1] = member end\n"                               \
  "    return seq\n"                                                                               \
  "  end\n"                                                                                        \
  "  -- SET replaces an old record (of either form) with its expiry.\n"                            \
  "  write_record(m, false)\n"                                                                     \
  "  pz_add(l, va, member)\n"                                                                      \
  "  if in_e then redis.call('ZADD', KE, e_raw, member) end\n"                                     \
  "  return seq\n"                                                                                 \
  "end\n"                                                                                          \
  "-- A batch of stores for `left` messages at most (store_new's D).\n"                            \
  "local function new_batch(left)\n"                                                               \
  "  return {left=left, sets={}, h={}, p={}, e={}, mem={}, w=0}\n"                                 \
  "end\n"                                                                                          \
  "local function flush_batch(D)\n"                                                                \
  "  if not next(D.mem) then return end\n"                                                         \
  "  if D.sets[1] then redis.call('MSET', unpack(D.sets)) end -- like SET, drops an expiry\n"      \
  "  for b, hs in pairs(D.h) do redis.call('HSET', P..'b:'..b, unpack(hs)) end\n"                  \
  "  for l, ps in pairs(D.p) do\n"                                                                 \
  "    if l ~= 0 then redis.call('SADD', KL, tostring(l)); LV = nil end\n"                         \
  "    if B4 then B4.add_all(l, ps) else redis.call('ZADD', pk(l), unpack(ps)) end\n"              \
  "  end\n"                                                                                        \
  "  if D.e[1] then redis.call('ZADD', KE, unpack(D.e)) end\n"                                     \
  "  if D.w > 0 then redis.call('HINCRBY', P..'qn', 'w', D.w) end\n"                               \
  "  D.sets, D.h, D.p, D.e, D.mem, D.w = {}, {}, {}, {}, {}, 0\n"                                  \
  "end\n"                                                                                          \
  "-- The in-life messages now: those whose natural end is after now.\n"                           \
  "local function in_life(now_arg)\n"                                                              \
  "  local n = redis.call('ZCOUNT', KE, '('..now_arg, '+inf')\n"                                   \
  "  if B4 then n = n + tonumber(redis.call('HGET', P..'qn', 'w') or '0') end\n"                   \
  "  return n\n"                                                                                   \
  "end\n"                                                                                          \
  "local function next_visible(now_arg)\n"                                                         \
  "  if B4 and B4.lag then return now_arg end -- the move is not done\n"                           \
  "  local n = ''\n"                                                                               \
  "  local keys = {KE}\n"                                                                          \
  "  for _, l in ipairs(levels()) do\n"                                                            \
  "    if B4 then\n"                                                                               \
  "      local x = B4.range(l, {tonumber(now_arg), 281474976710655}, math.huge, 1)\n"              \
  "      if x[2] and (n == '' or tonumber(x[2]) < tonumber(n)) then n = x[2] end\n"                \
  "    else keys[#keys+1] = pk(l) end\n"                                                           \
  "    keys[#keys+1] = dk(l)\n"                                                                    \
  "  end\n"                                                                                        \
  "  for _, k in ipairs(keys) do\n"                                                                \
  "    local x = redis.call('ZRANGEBYSCORE', k, '('..now_arg, '+inf', 'WITHSCORES', 'LIMIT', 0, "  \
  "1)\n"                                                                                           \
  "    if x[2] and (n == '' or tonumber(x[2]) < tonumber(n)) then n = x[2] end\n"                  \
  "  end\n"                                                                                        \
  "  return n\n"                                                                                   \
  "end\n"                                                                                          \
  "local function finish_due(now_arg, now, retention)\n"                                           \
  "  local due = redis.call('ZRANGEBYSCORE', KE, '-inf', now_arg, 'LIMIT', 0, 1000)\n"             \
  "  for _, member in ipairs(due) do\n"                                                            \
  "    local m = mload(member, false)\n"                                                           \
  "    if m and m.member == member and m.ph ~= 2 then\n"                                           \
  "      local st = status(m, now)\n"                                                              \
  "      if st >= 4 then local _, at = natural_end(m); finish(m, st, at, now, retention, true) "   \
  "end\n"                                                                                          \
  "    else redis.call('ZREM', KE, member) end\n"                                                  \
  "  end\n"                                                                                        \
  "end\n" CQ_LUA_LAYOUT4                                                                           \
  "if LAY then B4, KE, KX, KL = layout4(P, levels, mload, natural_end) end\n"
