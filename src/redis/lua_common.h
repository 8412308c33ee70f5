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
#pragma once

// Exact arithmetic on non-negative decimal strings up to 2^63 - 1 (Lua numbers are doubles,
// exact only to 2^53): dadd saturates as core's SaturatingAdd does; dsub needs a >= b. Operands
// of at most 15 digits (sums below 2^53: every real time) take the fast path of doubles.
#define CQ_LUA_DECIMAL                                                                        \
  "local MAXI = '9223372036854775807'\n"                                                      \
  "local function dcmp(a, b)\n"                                                               \
  "  if #a ~= #b then return #a < #b and -1 or 1 end\n"                                       \
  "  for i = 1, #a do\n"                                                                      \
  "    local x, y = string.byte(a, i), string.byte(b, i)\n"                                   \
  "    if x ~= y then return x < y and -1 or 1 end\n"                                         \
  "  end\n"                                                                                   \
  "  return 0\n"                                                                              \
  "end\n"                                                                                     \
  "local function digits(out)\n"                                                              \
  "  local r = string.gsub(string.reverse(table.concat(out)), '^0+', '')\n"                   \
  "  if r == '' then return '0' end\n"                                                        \
  "  return r\n"                                                                              \
  "end\n"                                                                                     \
  "local function dadd(a, b)\n"                                                               \
  "  if #a < 16 and #b < 16 then return string.format('%d', tonumber(a) + tonumber(b)) end\n" \
  "  local out, carry, i, j = {}, 0, #a, #b\n"                                                \
  "  while i > 0 or j > 0 or carry > 0 do\n"                                                  \
  "    local s = carry + (i > 0 and string.byte(a, i) - 48 or 0) + "                          \
  "(j > 0 and string.byte(b, j) - 48 or 0)\n"                                                 \
  "    out[#out+1] = s % 10; carry = math.floor(s / 10); i = i - 1; j = j - 1\n"              \
  "  end\n"                                                                                   \
  "  local r = digits(out)\n"                                                                 \
  "  if dcmp(r, MAXI) > 0 then return MAXI end\n"                                             \
  "  return r\n"                                                                              \
  "end\n"                                                                                     \
  "local function dsub(a, b)\n"                                                               \
  "  if #a < 16 then return string.format('%d', tonumber(a) - tonumber(b)) end\n"             \
  "  local out, borrow, i, j = {}, 0, #a, #b\n"                                               \
  "  while i > 0 do\n"                                                                        \
  "    local s = string.byte(a, i) - 48 - borrow - (j > 0 and string.byte(b, j) - 48 or 0)\n" \
  "    if s < 0 then s = s + 10; borrow = 1 else borrow = 0 end\n"                            \
  "    out[#out+1] = s; i = i - 1; j = j - 1\n"                                               \
  "  end\n"                                                                                   \
  "  return digits(out)\n"                                                                    \
  "end\n"

// Message history (core/history.h): pasted into CQ_LUA_COMMON before finish(), which records
// the ends; the scripts call hist_new, hist_before and hist_change where a record changes.
#define CQ_LUA_HISTORY                                                                             \
  "-- Message history (core/history.h, docs/redis.md): with the topic's history on ('hs'), a "     \
  "change\n"                                                                                       \
  "-- appends its entries (core::HistoryOf) to the list 'h:<msgId>', each '<seq> <time> <event>\n" \
  "-- <attempt> <node length> <node><reason>', oldest first, the newest `max` kept; the list\n"    \
  "-- expires with the record (natural end + retention). Entries of another seq (an older "        \
  "message\n"                                                                                      \
  "-- of that msgId) are not this message's: getMsgHistory skips them. H_SKIP: a change "          \
  "recorded\n"                                                                                     \
  "-- by nothing (a release). Four functions only: every call of every script makes them.\n"       \
  "local H_SKIP\n"                                                                                 \
  "-- Appends entries {time, event, attempt, reason} of m (as it is now) made at now (none: "      \
  "only\n"                                                                                         \
  "-- renews the expiry).\n"                                                                       \
  "local function hist_write(m, now, entries)\n"                                                   \
  "  local ret, max, node = string.match(cfg()._h or '', '^(%d+) (%d+) (.*)$')\n"                  \
  "  if not ret then return end\n"                                                                 \
  "  local k, e = P..'h:'..m.id, {}\n"                                                             \
  "  for i, x in ipairs(entries) do\n"                                                             \
  "    e[i] = m.raw.sq..' '..x[1]..' '..x[2]..' '..x[3]..' '..#node..' '..node..(x[4] or '')\n"    \
  "  end\n"                                                                                        \
  "  if e[1] and redis.call('RPUSH', k, unpack(e)) > tonumber(max) then\n"                         \
  "    redis.call('LTRIM', k, -tonumber(max), -1)\n"                                               \
  "  end\n"                                                                                        \
  "  local left = natural_end(m) + tonumber(ret) - now\n"                                          \
  "  if left > 1e15 then redis.call('PERSIST', k)\n"                                               \
  "  elseif left > 0 then redis.call('PEXPIRE', k, string.format('%d', left))\n"                   \
  "  else redis.call('DEL', k) end\n"                                                              \
  "end\n"                                                                                          \
  "-- A new record: entry `ev` (1 sent, 14 dead-lettered, 15 redriven; nil: none); `from`: the "   \
  "seq\n"                                                                                          \
  "-- whose history goes on (a redrive back to the source). `id`: its msgId (the record is "       \
  "read),\n"                                                                                       \
  "-- or, for a record never delivered, {msgId, seq, expire time} (nothing read).\n"               \
  "local function hist_new(id, now, now_raw, ev, reason, from)\n"                                  \
  "  if H_SKIP or cfg().hs ~= '1' then return end\n"                                               \
  "  local m\n"                                                                                    \
  "  if type(id) == 'table' then\n"                                                                \
  "    m = {id = id[1], ph = 0, r = 0, mr = 0, et = tonumber(id[3]),\n"                            \
  "         raw = {sq = tostring(id[2]), r = '0', et = id[3]}}\n"                                  \
  "    id = id[1]\n"                                                                               \
  "  else m = load(id, false) end\n"                                                               \
  "  if from then\n"                                                                               \
  "    local k, keep = P..'h:'..id, {}\n"                                                          \
  "    for _, x in ipairs(redis.call('LRANGE', k, 0, -1)) do\n"                                    \
  "      local s, rest = string.match(x, '^(%d+) (.*)$')\n"                                        \
  "      if s == from then keep[#keep+1] = m.raw.sq..' '..rest end\n"                              \
  "    end\n"                                                                                      \
  "    redis.call('DEL', k)\n"                                                                     \
  "    if keep[1] then redis.call('RPUSH', k, unpack(keep)) end\n"                                 \
  "  end\n"                                                                                        \
  "  hist_write(m, now, ev and {{now_raw, ev, m.raw.r, reason}} or {})\n"                          \
  "end\n"                                                                                          \
  "-- What hist_change needs of a record before its change (nil: history off).\n"                  \
  "local function hist_before(m)\n"                                                                \
  "  if H_SKIP or cfg().hs ~= '1' then return nil end\n"                                           \
  "  local b = {ph = m.ph, r = m.r, va = m.raw.va, c = m.raw.c}\n"                                 \
  "  if m.ph == 1 then b.d, b.draw = deadline_of(m) end\n"                                         \
  "  return b\n"                                                                                   \
  "end\n"                                                                                          \
  "-- The entries of the change of a record from b (hist_before) to m, made at now "               \
  "(core::HistoryOf).\n"                                                                           \
  "local function hist_change(b, m, now, now_raw)\n"                                               \
  "  if not b then return end\n"                                                                   \
  "  local E = {}\n"                                                                               \
  "  local function add(t, ev, attempt, reason) E[#E+1] = {t, ev, attempt, reason} end\n"          \
  "  local r = m.raw.r\n"                                                                          \
  "  if m.ph == 2 then\n"                                                                          \
  "    if b.ph == 2 then return end\n"                                                             \
  "    local at = m.raw.ea\n"                                                                      \
  "    if b.ph == 1 and b.d <= m.ea then add(b.draw, 7, r) end\n"                                  \
  "    if m.es == 4 then add(at, 10, r)\n"                                                         \
  "    elseif m.es == 7 then add(at, 11, r)\n"                                                     \
  "    elseif m.es == 5 or m.es == 6 then\n"                                                       \
  "      if b.ph == 1 and b.d > m.ea then add(at, m.pu == 1 and 8 or 6, r, m.raw.le) end\n"        \
  "      add(at, m.es == 5 and 12 or 13, r)\n"                                                     \
  "      local dlt = cfg().dlt\n"                                                                  \
  "      if dlt and dlt ~= '' then add(at, 14, r, 'to '..dlt) end\n"                               \
  "    end\n"                                                                                      \
  "  elseif m.ph == 1 then\n"                                                                      \
  "    if m.r > b.r then\n"                                                                        \
  "      if b.ph == 1 then add(b.draw, 7, string.format('%d', b.r)) end\n"                         \
  "      add(now_raw, 5, r)\n"                                                                     \
  "    elseif m.raw.va ~= b.va then add(now_raw, 4, r) end\n"                                      \
  "  elseif b.ph == 1 then\n"                                                                      \
  "    if m.r < b.r then add(now_raw, 9, r)\n"                                                     \
  "    else add(now_raw, m.pu == 1 and 8 or 6, r, m.raw.le) end\n"                                 \
  "  elseif m.raw.c ~= b.c then add(now_raw, 3, r, 'count '..m.raw.c)\n"                           \
  "  else add(now_raw, 2, r) end\n"                                                                \
  "  if E[1] then hist_write(m, now, E) end\n"                                                     \
  "end\n"

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
  "local function pk(l) if l == 0 then return P..'p' end return P..'p'..l end\n"                   \
  "local function dk(l) if l == 0 then return P..'d' end return P..'d'..l end\n"                   \
  "-- A record's level: its priority, plus 10 in the push lane.\n"                                 \
  "local function lv(m) if m.pu == 1 then return m.pr + 10 end return m.pr end\n"                  \
  "local LV\n"                                                                                     \
  "local function levels() -- in use, highest first; 0 always, last\n"                             \
  "  if LV then return LV end\n"                                                                   \
  "  LV = {}\n"                                                                                    \
  "  for _, x in ipairs(redis.call('SMEMBERS', P..'pl')) do\n"                                     \
  "    local l = tonumber(x)\n"                                                                    \
  "    if redis.call('ZCARD', pk(l)) + redis.call('ZCARD', dk(l)) > 0 then LV[#LV+1] = l\n"        \
  "    else redis.call('SREM', P..'pl', x) end\n"                                                  \
  "  end\n"                                                                                        \
  "  table.sort(LV, function(a, b) return a > b end)\n"                                            \
  "  LV[#LV+1] = 0\n"                                                                              \
  "  return LV\n"                                                                                  \
  "end\n"                                                                                          \
  "local function zadd_level(set, l, score, member)\n"                                             \
  "  if l ~= 0 then redis.call('SADD', P..'pl', tostring(l)); LV = nil end\n"                      \
  "  redis.call('ZADD', set == 'p' and pk(l) or dk(l), score, member)\n"                           \
  "end\n"                                                                                          \
  "local function account(now_arg, now)\n"                                                         \
  "  local wm = redis.call('GET', P..'wm')\n"                                                      \
  "  if wm and tonumber(wm) >= now then return end\n"                                              \
  "  redis.call('SET', P..'wm', now_arg)\n"                                                        \
  "  if not wm then return end\n"                                                                  \
  "  local first\n"                                                                                \
  "  for _, l in ipairs(levels()) do\n"                                                            \
  "    TOUT = TOUT + redis.call('ZCOUNT', dk(l), '('..wm, now_arg)\n"                              \
  "    local n = redis.call('ZCOUNT', pk(l), '('..wm, now_arg)\n"                                  \
  "    if n > 0 then\n"                                                                            \
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
  "-- many entries the outbox holds (the node moves them on).\n"                                   \
  "local function reply(t)\n"                                                                      \
  "  table.insert(t, 1, {TRIG, GSUM, GMAX, TOUT, ENDED, EXH, DLO, redis.call('ZCARD', "            \
  "P..'ob')})\n"                                                                                   \
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
  "    if FMT == 3 and NUM[f] and #x < 16 then x = tonumber(x) or x end\n"                         \
  "    t[i] = x\n"                                                                                 \
  "  end\n"                                                                                        \
  "  for i = n + 1, #PF do t[i] = nil end\n"                                                       \
  "  return cmsgpack.pack(t)\n"                                                                    \
  "end\n"                                                                                          \
  "-- Writes m's record in format FMT; `keep`: keeps its expiry (an ended record's).\n"            \
  "local function write_record(m, keep)\n"                                                         \
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
  "local function load(id, with_payload)\n"                                                        \
  "  local k = P..'r:'..id\n"                                                                      \
  "  local s = redis.pcall('GET', k)\n"                                                            \
  "  local v\n"                                                                                    \
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
  "  m.member = string.format('%016d', m.sq)..id\n"                                                \
  "  return m\n"                                                                                   \
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
  "  redis.call('ZREMRANGEBYSCORE', P..'x'..st, '-inf', string.format('%d', now - retention))\n"   \
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
  "             'pr', m.raw.pr, 'le', m.raw.le, 'ds', tostring(st), 'dr', m.raw.r, 'de', "         \
  "at_raw, 'cb', m.raw.cb)\n"                                                                      \
  "  redis.call('ZADD', P..'ob', string.format('%d', now), m.member)\n"                            \
  "  DLO = DLO + 1\n"                                                                              \
  "end\n"                                                                                          \
  "local function finish(m, st, at_raw, now, retention, by_time)\n"                                \
  "  if by_time then ENDED = ENDED + 1; if st == 6 then EXH = EXH + 1 end end\n"                   \
  "  local hb = hist_before(m)\n"                                                                  \
  "  to_outbox(m, st, at_raw, now)\n"                                                              \
  "  redis.call('ZREM', pk(lv(m)), m.member); redis.call('ZREM', dk(lv(m)), m.member)\n"           \
  "  redis.call('ZREM', P..'e', m.member)\n"                                                       \
  "  set_fields(m, 'ph', '2', 'es', tostring(st), 'ea', at_raw)\n"                                 \
  "  local left = tonumber(at_raw) + retention - now\n"                                            \
  "  hist_change(hb, m, now, at_raw)\n"                                                            \
  "  if left <= 0 then redis.call('DEL', P..'r:'..m.id, P..'h:'..m.id); return end\n"              \
  "  redis.call('PEXPIRE', P..'r:'..m.id, string.format('%d', left))\n"                            \
  "  redis.call('ZADD', P..'x'..st, at_raw, m.member)\n"                                           \
  "  trim_ended(st, now, retention)\n"                                                             \
  "end\n"                                                                                          \
  "local function unindex(m) -- a record about to be replaced or forgotten\n"                      \
  "  redis.call('ZREM', pk(lv(m)), m.member); redis.call('ZREM', dk(lv(m)), m.member)\n"           \
  "  redis.call('ZREM', P..'e', m.member)\n"                                                       \
  "  if m.ph == 2 then redis.call('ZREM', P..'x'..m.es, m.member) end\n"                           \
  "end\n"                                                                                          \
  "-- Stores a new pending record (`fields`: name/value pairs beyond the common ones, values\n"    \
  "-- already strings) consumable from `va`; replaces an ended one. Returns its seq. With `D` "    \
  "(a\n"                                                                                           \
  "-- batch, new_batch) its writes wait in D for flush_batch: one MSET and one ZADD per set for "  \
  "the\n"                                                                                          \
  "-- whole batch instead of five commands per message. The caller flushes before it loads a "     \
  "msgId\n"                                                                                        \
  "-- stored in D (D.mem) and at the end.\n"                                                       \
  "local function store_new(id, old, payload, pt, tt, et, mr, pr, va, fields, D)\n"                \
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
  "  local member = string.format('%016d', seq)..id\n"                                             \
  "  local l = tonumber(pr)\n"                                                                     \
  "  if m.raw.pu == '1' then l = l + 10 end\n"                                                     \
  "  if D and FMT == 1 then write_record(m, false) end -- hashes: one at a time\n"                 \
  "  if D then\n"                                                                                  \
  "    if FMT ~= 1 then D.sets[#D.sets+1] = P..'r:'..id; D.sets[#D.sets+1] = pack(m) end\n"        \
  "    D.mem[id] = true\n"                                                                         \
  "    local ps = D.p[l] or {}\n"                                                                  \
  "    D.p[l] = ps\n"                                                                              \
  "    ps[#ps+1] = va; ps[#ps+1] = member\n"                                                       \
  "    D.e[#D.e+1] = et; D.e[#D.e+1] = member\n"                                                   \
  "    return seq\n"                                                                               \
  "  end\n"                                                                                        \
  "  -- SET replaces an old record (of either form) with its expiry.\n"                            \
  "  write_record(m, false)\n"                                                                     \
  "  zadd_level('p', l, va, member)\n"                                                             \
  "  redis.call('ZADD', P..'e', et, member)\n"                                                     \
  "  return seq\n"                                                                                 \
  "end\n"                                                                                          \
  "-- A batch of stores for `left` messages at most (store_new's D).\n"                            \
  "local function new_batch(left)\n"                                                               \
  "  return {left=left, sets={}, p={}, e={}, mem={}}\n"                                            \
  "end\n"                                                                                          \
  "local function flush_batch(D)\n"                                                                \
  "  if #D.e == 0 then return end\n"                                                               \
  "  if D.sets[1] then redis.call('MSET', unpack(D.sets)) end -- like SET, drops an expiry\n"      \
  "  for l, ps in pairs(D.p) do\n"                                                                 \
  "    if l ~= 0 then redis.call('SADD', P..'pl', tostring(l)); LV = nil end\n"                    \
  "    redis.call('ZADD', pk(l), unpack(ps))\n"                                                    \
  "  end\n"                                                                                        \
  "  redis.call('ZADD', P..'e', unpack(D.e))\n"                                                    \
  "  D.sets, D.p, D.e, D.mem = {}, {}, {}, {}\n"                                                   \
  "end\n"                                                                                          \
  "-- The in-life messages now: those whose natural end is after now.\n"                           \
  "local function in_life(now_arg)\n"                                                              \
  "  return redis.call('ZCOUNT', P..'e', '('..now_arg, '+inf')\n"                                  \
  "end\n"                                                                                          \
  "local function next_visible(now_arg)\n"                                                         \
  "  local n = ''\n"                                                                               \
  "  local keys = {P..'e'}\n"                                                                      \
  "  for _, l in ipairs(levels()) do keys[#keys+1] = pk(l); keys[#keys+1] = dk(l) end\n"           \
  "  for _, k in ipairs(keys) do\n"                                                                \
  "    local x = redis.call('ZRANGEBYSCORE', k, '('..now_arg, '+inf', 'WITHSCORES', 'LIMIT', 0, "  \
  "1)\n"                                                                                           \
  "    if x[2] and (n == '' or tonumber(x[2]) < tonumber(n)) then n = x[2] end\n"                  \
  "  end\n"                                                                                        \
  "  return n\n"                                                                                   \
  "end\n"                                                                                          \
  "local function finish_due(now_arg, now, retention)\n"                                           \
  "  local due = redis.call('ZRANGEBYSCORE', P..'e', '-inf', now_arg, 'LIMIT', 0, 1000)\n"         \
  "  for _, member in ipairs(due) do\n"                                                            \
  "    local m = load(string.sub(member, 17), false)\n"                                            \
  "    if m and m.member == member and m.ph ~= 2 then\n"                                           \
  "      local st = status(m, now)\n"                                                              \
  "      if st >= 4 then local _, at = natural_end(m); finish(m, st, at, now, retention, true) "   \
  "end\n"                                                                                          \
  "    else redis.call('ZREM', P..'e', member) end\n"                                              \
  "  end\n"                                                                                        \
  "end\n"

// Walks over sorted sets in (score, seq) order from a position, bounded per call (listMsg, purge;
// pasted after CQ_LUA_COMMON by those scripts only). `pos` is the position: the (score, seq) of
// the last entry examined (score nil: the start). W holds the walk's bounds: how many entries
// to accept (want), how many were (done), how many may still be examined (budget).
#define CQ_LUA_WALK                                                                                \
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
  "    if tonumber(string.sub(x, 1, 16)) <= seq then a = mid + 1 else b = mid end\n"               \
  "  end\n"                                                                                        \
  "  return a\n"                                                                                   \
  "end\n"                                                                                          \
  "-- Examines the entries of `keys` ({key, highest score (inclusive) or nil}...) after pos, "     \
  "merged\n"                                                                                       \
  "-- in (score, seq) order, calling visit(member, key) on each (true: it counts as done), until " \
  "W.want\n"                                                                                       \
  "-- are done or the budget is spent; pos follows. Returns true when the keys have nothing "      \
  "more.\n"                                                                                        \
  "local function scan(keys, visit)\n"                                                             \
  "  while W.done < W.want and W.budget > 0 do\n"                                                  \
  "    local n = math.min(W.want - W.done, W.budget)\n"                                            \
  "    local cand = {}\n"                                                                          \
  "    for _, kh in ipairs(keys) do\n"                                                             \
  "      local k = kh[1]\n"                                                                        \
  "      local r = rank_after(k, pos.s, pos.seq)\n"                                                \
  "      local e = kh[2] and redis.call('ZCOUNT', k, '-inf', kh[2]) or redis.call('ZCARD', k)\n"   \
  "      if r < e then\n"                                                                          \
  "        local xs = redis.call('ZRANGE', k, r, math.min(r + n, e) - 1, 'WITHSCORES')\n"          \
  "        for i = 1, #xs, 2 do\n"                                                                 \
  "          cand[#cand+1] = {xs[i], tonumber(xs[i+1]), xs[i+1], tonumber(string.sub(xs[i], 1, "   \
  "16)), k}\n"                                                                                     \
  "        end\n"                                                                                  \
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
  "      if visit(c[1], c[5]) then W.done = W.done + 1 end\n"                                      \
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
  "      keys[#keys+1] = {pk(l)}\n"                                                                \
  "      if hi > 0 then keys[#keys+1] = {dk(l), string.format('%d', now + hi)} end\n"              \
  "    elseif st == 3 then keys[#keys+1] = {dk(l)}\n"                                              \
  "    else keys[#keys+1] = {pk(l), now_arg}; keys[#keys+1] = {dk(l), now_arg} end\n"              \
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
