// The scripts of issue 15 (API-EXTENSIONS.md section 4): the topic's stored configuration (hash
// 'cfg' in the topic's own slot, so every script of the topic reads it atomically), purge in
// bounded calls, and the two steps of moving dead letters and redrives between topics through
// the source topic's outbox ('ob', docs/redis.md).
#include "redis/lua_walk.h"
#include "redis/scripts.h"

namespace chronoq::redis::scripts {

// ARGV: name/value pairs of the stored fields to set (cap, ttl, mr, at, ri, dlt, pz). Returns
// {paused before ('1'/'0', effective), paused after, the stored hash as name/value pairs}.
const std::string_view kConfigSet = CQ_LUA_COMMON R"lua(
local before = cfg().pz
if #ARGV > 0 then redis.call('HSET', P..'cfg', unpack(ARGV)) end
CF = nil
return reply({before, cfg().pz, redis.call('HGETALL', P..'cfg')})
)lua";

// No ARGV. Returns {the stored hash as name/value pairs}.
const std::string_view kConfigGet = CQ_LUA_COMMON R"lua(
return reply({redis.call('HGETALL', P..'cfg')})
)lua";

// No ARGV. Removes the stored layer. Returns {paused before, paused after} (effective).
const std::string_view kConfigDelete = CQ_LUA_COMMON R"lua(
local before = cfg().pz
redis.call('DEL', P..'cfg')
CF = nil
return reply({before, cfg().pz})
)lua";

// ARGV: now, retention, status ('0': every in-life status, else 1..3), limit, then the position
// the previous call stopped at (score, seq; both '' at the start). Deletes (status 7, retained
// like deleteMsg) up to `limit` in-life messages in that status, finishing on the way those whose
// time ran out; examines at most 2 x limit entries, walking from the position in (score, seq)
// order the sets that hold the status (status_sets; without a status 'e'), so that entries of
// other statuses left in the way are passed once, not examined again by every call. Returns
// {deleted, the position to call again from ('' when the walk is complete)}.
const std::string_view kPurge = CQ_LUA_COMMON CQ_LUA_WALK R"lua(
local now, retention = tonumber(ARGV[1]), tonumber(ARGV[2])
local want, limit = tonumber(ARGV[3]), tonumber(ARGV[4])
account(ARGV[1], now)
local keys, start = {{KE}}, nil
-- Layout 4: waiting messages past the mark are not in E, so the pending sets are walked too (an
-- entry in both is purged at the first, passed at the second).
if LAY then for _, l in ipairs(levels()) do keys[#keys+1] = pset(l) end end
if want ~= 0 then keys, start = status_sets(want, ARGV[1], now) end
pos = {s = start}
if ARGV[5] ~= '' and (not start or tonumber(ARGV[5]) > tonumber(start)) then
  pos = {s = ARGV[5], seq = tonumber(ARGV[6])}
end
W.want, W.budget = limit, 2 * limit
local complete = scan(keys, function(member, kh, score)
  local m = mload(member, false)
  if not m or m.member ~= member or m.ph == 2 then
    walk_drop(kh, member, score)  -- stale entry
    return false
  end
  local st = status(m, now)
  if st >= 4 then
    local _, at = natural_end(m)
    finish(m, st, at, now, retention, true)
    return false
  end
  if want ~= 0 and st ~= want then return false end
  finish(m, 7, ARGV[1], now, retention)
  return true
end)
local cursor = ''
if not complete then
  cursor = (pos.s or '')..':'..(pos.seq and string.format('%d', pos.seq) or '')
end
return reply({W.done, cursor})
)lua";

// ARGV: written up to (ms), limit. Returns {entry...}, an entry being {member, {name, value...}}
// of the outbox entries written up to that time.
const std::string_view kOutboxRead = CQ_LUA_COMMON R"lua(
local ids = redis.call('ZRANGEBYSCORE', P..'ob', '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
local out = {}
for _, id in ipairs(ids) do
  local h = redis.call('HGETALL', P..'ob:'..id)
  if h[1] then out[#out+1] = {id, h} else redis.call('ZREM', P..'ob', id) end
end
return reply(out)
)lua";

// ARGV: outbox members whose dead letters are stored. Removes them. Returns {}.
const std::string_view kOutboxDone = CQ_LUA_COMMON R"lua(
for _, id in ipairs(ARGV) do
  redis.call('ZREM', P..'ob', id)
  redis.call('DEL', P..'ob:'..id)
end
return reply({})
)lua";

// On the dead-letter topic. ARGV: now, retention, source topic, then 9 per dead letter: msgId,
// payload, priority, last error, status, deliveries, end time, outbox member, callback ('' for
// none). Each becomes core::DeadLetterOf (consumable now, this topic's ttl and maxRetry; in the
// pull lane, keeping the message's own callback for getMsg and a redrive) whatever the capacity,
// unless this topic's inbox holds the marker of that outbox entry or a record of that msgId from
// the same death ({'DUP'}: moved before, by a node that died before removing the outbox entry),
// or holds that msgId in life ({'EXISTS'}: dropped like an idempotent send). Each one leaves its
// marker in the inbox. Returns {next change, item...}, an item being 'NEW', 'DUP' or 'EXISTS'.
const std::string_view kDeadLetterIn = CQ_LUA_COMMON CQ_LUA_INBOX R"lua(
local now, retention, src = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3]
)lua" CQ_LUA_NEW_TOPIC4 R"lua(
account(ARGV[1], now)
local c = cfg()
local out = {''}
for i = 4, #ARGV, 9 do
  local id = ARGV[i]
  local old = load(id, false)
  local live = old and not purged(old, now, retention)
  local token = src..'\n'..ARGV[i+7]
  if inbox_has(token) or (live and old.raw.dt == src and old.raw.de == ARGV[i+6]) then
    out[#out+1] = 'DUP'
  elseif live and status(old, now) <= 3 then
    inbox_keep(token, now)
    out[#out+1] = 'EXISTS'
  else
    inbox_keep(token, now)
    local et = dadd(ARGV[1], c.ttl)
    local seq = store_new(id, old, ARGV[i+1], ARGV[1], ARGV[1], et, c.mr, ARGV[i+2], ARGV[1],
                          {'le', ARGV[i+3], 'dt', src, 'ds', ARGV[i+4], 'dr', ARGV[i+5],
                           'de', ARGV[i+6], 'cb', ARGV[i+8]})
    hist_new({id, seq, et}, now, ARGV[1], 14, 'from '..src)
    if out[1] == '' or tonumber(et) < tonumber(out[1]) then out[1] = et end
    out[#out+1] = 'NEW'
  end
end
return reply(out)
)lua";

// On the dead-letter topic. ARGV: now, retention, msgId ('' for a walk), limit, delay (ms).
// Takes READY dead letters (the one msgId, or up to `limit` in pull order): each ends as DELETE,
// released, and an outbox entry (kind 'rd') keeps the whole record, so that the dead letter comes
// back if its source cannot take it (full, or the msgId in life there). Returns {'NF'},
// {'IS', record...} (a named msgId that is not a READY dead letter), or {'OK', entry...}, an
// entry being {member, msgId, payload, priority, source topic, callback ('' for none)}.
const std::string_view kRedriveOut = CQ_LUA_COMMON R"lua(
local now, retention, id, limit = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4])
account(ARGV[1], now)
local taken = {}
local function take(m)
  local k = P..'ob:'..m.member
  local h = {'k', 'rd', 'to', m.raw.dt, 'dy', ARGV[5], 'p', m.raw.p}
  for _, f in ipairs(F) do h[#h+1] = f; h[#h+1] = m.raw[f] end
  redis.call('HSET', k, unpack(h))
  redis.call('ZADD', P..'ob', ARGV[1], m.member)
  H_SKIP = true  -- leaving for its source: nothing recorded here (the history waits, see below)
  finish(m, 7, ARGV[1], now, retention)
  H_SKIP = nil
  if LAY then redis.call('HDEL', P..'b:'..m.bk, m.kid) else redis.call('DEL', P..'r:'..m.id) end
  redis.call('ZREM', KX..'7', m.member)
  taken[#taken+1] = {m.member, m.id, m.raw.p, m.raw.pr, m.raw.dt, m.raw.cb}
end
if id ~= '' then
  local m = load(id, true)
  if not m or purged(m, now, retention) then return reply({'NF'}) end
  if m.raw.dt == '' or status(m, now) ~= 2 then return reply(with_tag('IS', m)) end
  take(m)
else
  local budget = 4 * limit + 100
  for _, l in ipairs(levels()) do
    local cand = {}
    for _, xs in ipairs({LAY and B4.range(l, nil, tonumber(ARGV[1]), budget) or
          redis.call('ZRANGEBYSCORE', pk(l), '-inf', ARGV[1], 'WITHSCORES', 'LIMIT', 0, budget),
        redis.call('ZRANGEBYSCORE', dk(l), '-inf', ARGV[1], 'WITHSCORES', 'LIMIT', 0, budget)}) do
      for i = 1, #xs, 2 do cand[#cand+1] = {xs[i], tonumber(xs[i+1]), LAY and B4.seq(xs[i])} end
    end
    table.sort(cand, function(x, y)
      if x[2] ~= y[2] then return x[2] < y[2] end
      if LAY then return x[3] < y[3] end
      return x[1] < y[1]
    end)
    for _, cd in ipairs(cand) do
      if #taken >= limit or budget <= 0 then break end
      budget = budget - 1
      local m = mload(cd[1], true)
      if m and m.member == cd[1] and m.ph ~= 2 and m.raw.dt ~= '' and status(m, now) == 2 then
        take(m)
      end
    end
    if #taken >= limit or budget <= 0 then break end
  end
end
local out = {'OK'}
for _, t in ipairs(taken) do out[#out+1] = t end
return reply(out)
)lua";

// On the source topic. ARGV: now, retention, delay (ms), then 5 per message: msgId, payload,
// priority, token (the dead-letter topic and its outbox member), callback ('' for none). Each
// becomes core::RedriveOf (this topic's ttl and maxRetry; the push lane when it has a callback
// or this topic has one now, as a send) within this topic's capacity, and leaves its token as a
// marker in the inbox. Returns {next change, item...}, an item being {'NEW', lane ('1' push,
// '0' pull)}, {'DONE'} (a record with that token, or its marker: moved before), {'EXISTS'} (the
// msgId is in life here) or {'FULL', in life, capacity}.
const std::string_view kRedriveIn = CQ_LUA_COMMON CQ_LUA_INBOX R"lua(
local now, retention, delay = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3]
)lua" CQ_LUA_NEW_TOPIC4 R"lua(
account(ARGV[1], now)
local c = cfg()
local cap = tonumber(c.cap) or 0
local n = in_life(ARGV[1])
local out = {''}
local tcb = topic_cb()
for i = 4, #ARGV, 5 do
  local id, token, cb = ARGV[i], ARGV[i+3], ARGV[i+4]
  local old = load(id, false)
  local live = old and not purged(old, now, retention)
  if (live and old.raw.rv == token) or inbox_has(token) then
    out[#out+1] = {'DONE'}
  elseif live and status(old, now) <= 3 then
    out[#out+1] = {'EXISTS'}
  elseif cap > 0 and n >= cap then
    out[#out+1] = {'FULL', n, cap}
  else
    local tt = tonumber(delay) > 0 and dadd(ARGV[1], delay) or ARGV[1]
    local et = dadd(tt, c.ttl)
    local pu = (cb ~= '' or tcb) and '1' or '0'
    local seq = store_new(id, old, ARGV[i+1], ARGV[1], tt, et, c.mr, ARGV[i+2], tt,
                          {'rv', token, 'cb', cb, 'pu', pu})
    hist_new({id, seq, et}, now, ARGV[1], 15, nil, old and old.raw.sq)
    inbox_keep(token, now)
    n = n + 1
    local nx = tonumber(tt) > now and tt or et
    if out[1] == '' or tonumber(nx) < tonumber(out[1]) then out[1] = nx end
    out[#out+1] = {'NEW', pu}
  end
end
return reply(out)
)lua";

// On the dead-letter topic. ARGV: now, then 2 per outbox entry: member, 'back' (the source did
// not take it) or 'done'. Removes each entry still there; a dead letter that goes back is stored
// again as it was (READY from now), unless its msgId is in life here (the entry then stays, for
// a later attempt). Returns {how many went back}.
const std::string_view kRedriveDone = CQ_LUA_COMMON R"lua(
local now = tonumber(ARGV[1])
local back = 0
for i = 2, #ARGV, 2 do
  local k = P..'ob:'..ARGV[i]
  local h = redis.call('HGETALL', k)
  if h[1] then
    local r = {}
    for j = 1, #h, 2 do r[h[j]] = h[j+1] end
    local keep = false
    if ARGV[i+1] == 'back' then
      local id = LAY and B4.mid_of(B4.kid(ARGV[i])) or string.sub(ARGV[i], 17)
      local old = load(id, false)
      if old and old.ph ~= 2 and status(old, now) <= 3 then
        keep = true
      else
        store_new(id, old, r.p, r.pt, r.tt, r.et, r.mr, r.pr, ARGV[1],
                  {'r', r.r, 'ct', r.ct, 'c', r.c, 'le', r.le, 'dt', r.dt, 'ds', r.ds, 'dr', r.dr,
                   'de', r.de, 'cb', r.cb or ''})
        hist_new(id, now, ARGV[1], nil, nil, r.sq)  -- its history goes on
        back = back + 1
      end
    end
    if not keep then
      redis.call('DEL', k)
      redis.call('ZREM', P..'ob', ARGV[i])
    end
  end
end
return reply({back})
)lua";

}  // namespace chronoq::redis::scripts
