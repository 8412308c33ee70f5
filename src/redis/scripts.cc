#include "redis/scripts.h"

namespace chronoq::redis::scripts {
namespace {

// Shared by every script: the record (a hash), its status at `now` (core::StatusAt), its natural
// end (core::NaturalEndTime), moves between the sets. Times are epoch milliseconds; records keep
// them as the strings the node sent (exact beyond 2^53), numbers are only compared.
// Record fields: p payload, pt produce, tt trigger, et expire, mr maxRetry, r deliveries,
// ph phase (0 pending, 1 delivered, 2 ended), es end status, va visible at, ea ended at, sq seq.
// Sets: p (pending, by visible at), d (delivered, by ack deadline), e (in life, by natural end);
// members are the zero-padded seq followed by the msgId.
#define CQ_LUA_COMMON                                                                            \
  "local P = KEYS[1]\n"                                                                          \
  "local TRIG, GSUM, GMAX, TOUT, ENDED, EXH = 0, 0, 0, 0, 0, 0\n"                                \
  "local function account(now_arg, now)\n"                                                       \
  "  local wm = redis.call('GET', P..'wm')\n"                                                    \
  "  if wm and tonumber(wm) >= now then return end\n"                                            \
  "  redis.call('SET', P..'wm', now_arg)\n"                                                      \
  "  if not wm then return end\n"                                                                \
  "  TRIG = redis.call('ZCOUNT', P..'p', '('..wm, now_arg)\n"                                    \
  "  TOUT = redis.call('ZCOUNT', P..'d', '('..wm, now_arg)\n"                                    \
  "  if TRIG > 0 then\n"                                                                         \
  "    local first = redis.call('ZRANGEBYSCORE', P..'p', '('..wm, now_arg, 'WITHSCORES', "       \
  "'LIMIT', 0, 1)\n"                                                                             \
  "    GMAX = now - tonumber(first[2])\n"                                                        \
  "    if TRIG <= 10000 then\n"                                                                  \
  "      local all = redis.call('ZRANGEBYSCORE', P..'p', '('..wm, now_arg, 'WITHSCORES')\n"      \
  "      for i = 2, #all, 2 do GSUM = GSUM + now - tonumber(all[i]) end\n"                       \
  "    else\n"                                                                                   \
  "      local last = redis.call('ZREVRANGEBYSCORE', P..'p', now_arg, '('..wm, 'WITHSCORES', "   \
  "'LIMIT', 0, 1)\n"                                                                             \
  "      GSUM = TRIG * (now - (tonumber(first[2]) + tonumber(last[2])) / 2)\n"                   \
  "    end\n"                                                                                    \
  "  end\n"                                                                                      \
  "end\n"                                                                                        \
  "local function reply(t)\n"                                                                    \
  "  table.insert(t, 1, {TRIG, GSUM, GMAX, TOUT, ENDED, EXH})\n"                                 \
  "  return t\n"                                                                                 \
  "end\n"                                                                                        \
  "local F = {'pt','tt','et','mr','r','ph','es','va','ea','sq'}\n"                               \
  "local function load(id, with_payload)\n"                                                      \
  "  local v = redis.call('HMGET', P..'r:'..id, 'pt','tt','et','mr','r','ph','es','va','ea',"    \
  "'sq','p')\n"                                                                                  \
  "  if not v[1] then return nil end\n"                                                          \
  "  local m = {id=id, raw={}}\n"                                                                \
  "  for i, f in ipairs(F) do m.raw[f] = v[i]; m[f] = tonumber(v[i]) end\n"                      \
  "  m.raw.p = with_payload and v[11] or ''\n"                                                   \
  "  m.member = string.format('%016d', m.sq)..id\n"                                              \
  "  return m\n"                                                                                 \
  "end\n"                                                                                        \
  "local function natural_end(m)\n"                                                              \
  "  if m.ph == 2 then return m.ea, m.raw.ea end\n"                                              \
  "  if m.r >= m.mr + 1 and m.va < m.et then return m.va, m.raw.va end\n"                        \
  "  return m.et, m.raw.et\n"                                                                    \
  "end\n"                                                                                        \
  "local function status(m, now)\n"                                                              \
  "  if m.ph == 2 then return m.es end\n"                                                        \
  "  if now >= natural_end(m) then if m.r == 0 then return 5 else return 6 end end\n"            \
  "  if m.va > now then if m.ph == 0 then return 1 else return 3 end end\n"                      \
  "  return 2\n"                                                                                 \
  "end\n"                                                                                        \
  "local function purged(m, now, retention)\n"                                                   \
  "  return now >= natural_end(m) + retention\n"                                                 \
  "end\n"                                                                                        \
  "local function flat(m)\n"                                                                     \
  "  local out = {m.id, m.raw.p}\n"                                                              \
  "  for _, f in ipairs(F) do out[#out+1] = m.raw[f] end\n"                                      \
  "  return out\n"                                                                               \
  "end\n"                                                                                        \
  "local function tagged(tag, m)\n"                                                              \
  "  local out = flat(m)\n"                                                                      \
  "  table.insert(out, 1, tag)\n"                                                                \
  "  return reply(out)\n"                                                                        \
  "end\n"                                                                                        \
  "local function set_fields(m, ...)\n"                                                          \
  "  local a = {...}\n"                                                                          \
  "  for i = 1, #a, 2 do m.raw[a[i]] = a[i+1]; m[a[i]] = tonumber(a[i+1]) end\n"                 \
  "  redis.call('HSET', P..'r:'..m.id, ...)\n"                                                   \
  "end\n"                                                                                        \
  "local function finish(m, st, at_raw, now, retention, by_time)\n"                              \
  "  if by_time then ENDED = ENDED + 1; if st == 6 then EXH = EXH + 1 end end\n"                 \
  "  redis.call('ZREM', P..'p', m.member); redis.call('ZREM', P..'d', m.member)\n"               \
  "  redis.call('ZREM', P..'e', m.member)\n"                                                     \
  "  set_fields(m, 'ph', '2', 'es', tostring(st), 'ea', at_raw)\n"                               \
  "  local left = tonumber(at_raw) + retention - now\n"                                          \
  "  if left <= 0 then redis.call('DEL', P..'r:'..m.id)\n"                                       \
  "  else redis.call('PEXPIRE', P..'r:'..m.id, string.format('%d', left)) end\n"                 \
  "end\n"                                                                                        \
  "local function next_visible(now_arg)\n"                                                       \
  "  local n = ''\n"                                                                             \
  "  for _, k in ipairs({'p', 'd', 'e'}) do\n"                                                   \
  "    local x = redis.call('ZRANGEBYSCORE', P..k, '('..now_arg, '+inf', 'WITHSCORES', "         \
  "'LIMIT', 0, 1)\n"                                                                             \
  "    if x[2] and (n == '' or tonumber(x[2]) < tonumber(n)) then n = x[2] end\n"                \
  "  end\n"                                                                                      \
  "  return n\n"                                                                                 \
  "end\n"                                                                                        \
  "local function finish_due(now_arg, now, retention)\n"                                         \
  "  local due = redis.call('ZRANGEBYSCORE', P..'e', '-inf', now_arg, 'LIMIT', 0, 1000)\n"       \
  "  for _, member in ipairs(due) do\n"                                                          \
  "    local m = load(string.sub(member, 17), false)\n"                                          \
  "    if m and m.member == member and m.ph ~= 2 then\n"                                         \
  "      local st = status(m, now)\n"                                                            \
  "      if st >= 4 then local _, at = natural_end(m); finish(m, st, at, now, retention, true) " \
  "end\n"                                                                                        \
  "    else redis.call('ZREM', P..'e', member) end\n"                                            \
  "  end\n"                                                                                      \
  "end\n"

}  // namespace

// ARGV: msgId, payload, produce, trigger, expire, maxRetry, now, retention.
// Returns {'EXISTS', record...} for an in-life message with that id (nothing stored), else
// {'NEW', seq, next_visible}.
const std::string_view kSend = CQ_LUA_COMMON R"lua(
local id, now, retention = ARGV[1], tonumber(ARGV[7]), tonumber(ARGV[8])
account(ARGV[7], now)
local old = load(id, true)
if old and not purged(old, now, retention) and status(old, now) <= 3 then
  return tagged('EXISTS', old)
end
if old then
  redis.call('ZREM', P..'p', old.member); redis.call('ZREM', P..'d', old.member)
  redis.call('ZREM', P..'e', old.member)
end
local seq = redis.call('INCR', P..'seq')
local key = P..'r:'..id
redis.call('DEL', key)
redis.call('HSET', key, 'p', ARGV[2], 'pt', ARGV[3], 'tt', ARGV[4], 'et', ARGV[5], 'mr', ARGV[6],
           'r', '0', 'ph', '0', 'es', '1', 'va', ARGV[4], 'ea', '0', 'sq', tostring(seq))
local member = string.format('%016d', seq)..id
redis.call('ZADD', P..'p', ARGV[4], member)
local m = load(id, false)
local ne = natural_end(m)
redis.call('ZADD', P..'e', ne, member)
-- The next change this send can bring: its trigger time, else its end. Nodes keep the earliest
-- of what they hear, so the topic's other heads need not be read here.
local next = ARGV[5]
if tonumber(ARGV[4]) > now then next = ARGV[4] end
return reply({'NEW', tostring(seq), next})
)lua";

// ARGV: now, batch, ack deadline (now + ack timeout), retention.
// Delivers up to `batch` READY messages in visibility order (ties in send order), finishing on
// the way those whose time ran out. Returns {ended count, next_visible, record...} (12 fields per
// record, payload included).
const std::string_view kPull = CQ_LUA_COMMON R"lua(
local now, batch, deadline, retention = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3],
                                        tonumber(ARGV[4])
account(ARGV[1], now)
local out = {0, ''}
local taken = 0
local nowarg = ARGV[1]
-- Rounds: fetch the due heads of both sets, merge them in (score, member) order, handle them.
-- Handled entries leave the sets (delivered ones move to d at a deadline after now), so the next
-- round sees the next ones; messages found ended are finished and do not count.
while taken < batch do
  local need = batch - taken
  local a = redis.call('ZRANGEBYSCORE', P..'p', '-inf', nowarg, 'WITHSCORES', 'LIMIT', 0, need)
  local b = redis.call('ZRANGEBYSCORE', P..'d', '-inf', nowarg, 'WITHSCORES', 'LIMIT', 0, need)
  if not a[1] and not b[1] then break end
  local cand = {}
  for i = 1, #a, 2 do cand[#cand+1] = {a[i], tonumber(a[i+1]), 'p'} end
  for i = 1, #b, 2 do cand[#cand+1] = {b[i], tonumber(b[i+1]), 'd'} end
  table.sort(cand, function(x, y)
    if x[2] ~= y[2] then return x[2] < y[2] end
    return x[1] < y[1]
  end)
  local progress = false
  for _, c in ipairs(cand) do
    if taken >= batch then break end
    local member, from = c[1], c[3]
    local m = load(string.sub(member, 17), true)
    if not m or m.member ~= member or m.ph == 2 then
      redis.call('ZREM', P..from, member)  -- stale entry
      progress = true
    else
      local st = status(m, now)
      if st == 2 then
        redis.call('ZREM', P..from, member)
        set_fields(m, 'r', tostring(m.r + 1), 'ph', '1', 'va', deadline)
        redis.call('ZADD', P..'d', deadline, member)
        redis.call('ZADD', P..'e', natural_end(m), member)
        for _, x in ipairs(flat(m)) do out[#out+1] = x end
        taken = taken + 1
        progress = true
      elseif st >= 4 then
        local _, at = natural_end(m)
        finish(m, st, at, now, retention, true)
        out[1] = out[1] + 1
        progress = true
      end  -- else waiting or consuming with a score not after now: cannot happen; left alone
    end
  end
  if not progress then break end
end
out[2] = next_visible(ARGV[1])
return reply(out)
)lua";

// ARGV: msgId, ack ('1') or nack ('0'), now, retention.
// Returns {'NF'} (no such message), {'IS', record...} (not in a state the move applies to; the
// node words the error), {'OK', 'ENDED'|'READY', next_visible}.
const std::string_view kAck = CQ_LUA_COMMON R"lua(
local id, ack, now, retention = ARGV[1], ARGV[2] == '1', tonumber(ARGV[3]), tonumber(ARGV[4])
account(ARGV[3], now)
local m = load(id, false)
if not m or purged(m, now, retention) then return reply({'NF'}) end
local st = status(m, now)
if ack then
  if st == 3 or (st == 2 and m.ph == 1) then
    finish(m, 4, ARGV[3], now, retention)
    return reply({'OK', 'ENDED', ''})
  end
  return tagged('IS', m)
end
if st ~= 3 then return tagged('IS', m) end
if m.r >= m.mr + 1 then
  finish(m, 6, ARGV[3], now, retention)
  return reply({'OK', 'ENDED', ''})
end
redis.call('ZREM', P..'d', m.member)
set_fields(m, 'ph', '0', 'va', ARGV[3])
redis.call('ZADD', P..'p', ARGV[3], m.member)
redis.call('ZADD', P..'e', natural_end(m), m.member)
local _, ne_raw = natural_end(m)
return reply({'OK', 'READY', ne_raw})
)lua";

// ARGV: msgId, release ('1'|'0'), now, retention. Returns {'NF'}, {'IS', record...} or {'OK'}.
const std::string_view kDelete = CQ_LUA_COMMON R"lua(
local id, release, now, retention = ARGV[1], ARGV[2] == '1', tonumber(ARGV[3]), tonumber(ARGV[4])
account(ARGV[3], now)
local m = load(id, false)
if not m or purged(m, now, retention) then return reply({'NF'}) end
if status(m, now) > 3 then return tagged('IS', m) end
finish(m, 7, ARGV[3], now, retention)
if release then redis.call('DEL', P..'r:'..id) end
return reply({'OK', ''})
)lua";

// ARGV: msgId, now, retention. Returns {} (not found) or the record (payload included).
const std::string_view kGet = CQ_LUA_COMMON R"lua(
account(ARGV[2], tonumber(ARGV[2]))
local m = load(ARGV[1], true)
if not m or purged(m, tonumber(ARGV[2]), tonumber(ARGV[3])) then return reply({}) end
return reply(flat(m))
)lua";

// ARGV: now, retention, then the 8 upper bounds (ms from now) of the first waiting buckets.
// Finishes (up to 1000) messages whose time ran out, then counts:
// {waiting bucket 1..9, ready, consuming, next_visible}.
const std::string_view kInfo = CQ_LUA_COMMON R"lua(
local now, retention = tonumber(ARGV[1]), tonumber(ARGV[2])
account(ARGV[1], now)
finish_due(ARGV[1], now, retention)
local out = {}
local lo = '(' .. ARGV[1]
local waiting = 0
for i = 3, 10 do
  local hi = '(' .. string.format('%d', now + tonumber(ARGV[i]))
  local n = redis.call('ZCOUNT', P..'p', lo, hi)
  out[#out+1] = n
  waiting = waiting + n
  lo = string.sub(hi, 2)
end
local last = redis.call('ZCOUNT', P..'p', lo, '+inf')
out[#out+1] = last
waiting = waiting + last
local consuming = redis.call('ZCOUNT', P..'d', '(' .. ARGV[1], '+inf')
local total = redis.call('ZCARD', P..'p') + redis.call('ZCARD', P..'d')
out[#out+1] = total - waiting - consuming
out[#out+1] = consuming
out[#out+1] = next_visible(ARGV[1])
return reply(out)
)lua";

// ARGV: now, retention. At a time something may have changed by itself: finishes what ran out,
// then returns {1 if a message is consumable now else 0, next_visible, 1 if one of them is a
// delivery whose ack deadline passed (other nodes cannot know its time) else 0}.
const std::string_view kWake = CQ_LUA_COMMON R"lua(
local now, retention = tonumber(ARGV[1]), tonumber(ARGV[2])
account(ARGV[1], now)
finish_due(ARGV[1], now, retention)
local late = redis.call('ZCOUNT', P..'d', '-inf', ARGV[1])
local ready = redis.call('ZCOUNT', P..'p', '-inf', ARGV[1]) + late
return reply({ready > 0 and 1 or 0, next_visible(ARGV[1]), late > 0 and 1 or 0})
)lua";

}  // namespace chronoq::redis::scripts
