#include "redis/scripts.h"

#include "redis/lua_common.h"

namespace chronoq::redis::scripts {

// ARGV: now, retention, then 9 per message: msgId, payload, produce, trigger, ttl, maxRetry
// (both '' when the request left them out: the topic's), priority, countTrigger, callback
// (core::EncodeCallback's bytes, '' for none), and from a node with NEW4 (redis-format 4) two
// more: the record bucket and key id of the msgId (key_id.h; used for a layout-4 topic, else
// ignored). Each message is stored, or answered with the
// in-life message of its id (nothing stored; an ended one is replaced), or refused when the
// topic holds its capacity of in-life messages (counted here, so exact whatever the nodes). Its
// lane is decided here, with the send (core::ResolveDefaults): the push lane when it has a
// callback or the topic has one now. Returns {next change, item...}, an item being {'EXISTS',
// record...}, {'NEW', seq, expire, maxRetry, lane ('1' push, '0' pull)} or {'FULL', in life,
// capacity}; the next change is the earliest trigger time (else expire time) of the new
// messages, '' when none is new.
const std::string_view kSend = CQ_LUA_COMMON R"lua(
local now, retention = tonumber(ARGV[1]), tonumber(ARGV[2])
)lua" CQ_LUA_NEW_TOPIC4 R"lua(
account(ARGV[1], now)
local c = cfg()
local cap = tonumber(c.cap) or 0
local n
local out = {''}
local tcb = topic_cb()
local S = NEW4 and 11 or 9 -- arguments per message
local D = new_batch((#ARGV - 2) / S)
for i = 3, #ARGV, S do
  local id, tt, ttl, mr, pr, ct = ARGV[i], ARGV[i+3], ARGV[i+4], ARGV[i+5], ARGV[i+6], ARGV[i+7]
  local cb = ARGV[i+8]
  local bk, kid -- nil from other nodes: computed in Lua then
  if S == 11 then bk, kid = tonumber(ARGV[i+9]), ARGV[i+10] end
  local pu = (cb ~= '' or tcb) and '1' or '0'
  if D.mem[id] then flush_batch(D) end -- the same msgId twice in one batch
  local old = load(id, true, kid, bk)
  if old and not purged(old, now, retention) and status(old, now) <= 3 then
    out[#out+1] = with_tag('EXISTS', old)
  else
    if cap > 0 and not n then n = in_life(ARGV[1]) end
    if cap > 0 and n >= cap then
      out[#out+1] = {'FULL', n, cap}
    else
      if ttl == '' then ttl = c.ttl end
      if mr == '' then mr = c.mr end
      local et = dadd(tt, ttl)
      local seq = store_new(id, old, ARGV[i+1], ARGV[i+2], tt, et, mr, pr, tt,
                            {'ct', ct, 'cb', cb, 'pu', pu}, D, kid, bk)
      hist_new({id, seq, et}, now, ARGV[1], 1)
      if n then n = n + 1 end
      out[#out+1] = {'NEW', tostring(seq), et, mr, pu}
      -- The next change it can bring: its trigger time, else its end. Nodes keep the earliest of
      -- what they hear, so the topic's other heads need not be read here.
      local nx = et
      if tonumber(tt) > now then nx = tt end
      if out[1] == '' or tonumber(nx) < tonumber(out[1]) then out[1] = nx end
    end
  end
  D.left = D.left - 1
end
flush_batch(D)
return reply(out)
)lua";

// ARGV: now, batch, ack timeout ('' when the request left it out: the topic's), retention, lane
// ('0' pull, '1' push), lease margin and default callback timeout (push; ms). Delivers up to
// `batch` READY messages of the lane, highest priority first, within a priority in visibility
// order (ties in send order), finishing on the way those whose time ran out. Pull lane: each is
// CONSUMING until now + the ack timeout, then waits the topic's retry interval (visible at
// deadline + interval, its score in d). Push lane (levels 10..19): each is CONSUMING for its lease,
// core::PushLease (its callback's timeout, else its topic's, else the default, plus the margin),
// then waits core::RetryIntervalOf. A paused topic delivers nothing. Returns {ended count,
// next_visible, the topic's callback ('' for none), record...} (kRecordFields per record, payload
// included).
const std::string_view kPull = CQ_LUA_COMMON R"lua(
local now, batch, retention = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[4])
local push = ARGV[5] == '1'
account(ARGV[1], now)
local c = cfg()
local tcb = topic_cb()
if c.pz == '1' then return reply({0, '', tcb or ''}) end
-- timing(m): the deadline, visible-at and retry interval of a delivery of m now.
local timing
if push then
  timing = function(m)
    local cb = m.raw.cb ~= '' and m.raw.cb or tcb
    local t = cb and string.format('%d', (cb_times(cb))) or ARGV[7]
    local ri = retry_interval_of(m)
    local deadline = dadd(ARGV[1], dadd(t, ARGV[6]))
    return deadline, ri == '0' and deadline or dadd(deadline, ri), ri
  end
else
  local ri = c.ri
  local deadline = dadd(ARGV[1], ARGV[3] ~= '' and ARGV[3] or c.at)
  local visible = ri == '0' and deadline or dadd(deadline, ri)
  timing = function() return deadline, visible, ri end
end
local out = {0, '', tcb or ''}
local taken = 0
local nowarg = ARGV[1]
local iv = {}  -- retry interval -> the latest visible-at of a delivery made with it
-- Per level of the lane, rounds: fetch the due heads of both sets, merge them in (score, member)
-- order, handle them. Handled entries leave the sets (delivered ones move to d at a deadline
-- after now), so the next round sees the next ones; messages found ended are finished and do
-- not count.
for _, l in ipairs(levels()) do
  if (l >= 10) == push then
    local dkey = dk(l)
    while taken < batch do
      local need = batch - taken
      local a = B4 and B4.range(l, nil, now, need)
        or redis.call('ZRANGEBYSCORE', pk(l), '-inf', nowarg, 'WITHSCORES', 'LIMIT', 0, need)
      local b = redis.call('ZRANGEBYSCORE', dkey, '-inf', nowarg, 'WITHSCORES', 'LIMIT', 0, need)
      if not a[1] and not b[1] then break end
      local cand = {}
      for i = 1, #a, 2 do cand[#cand+1] = {a[i], tonumber(a[i+1]), false, LAY and B4.seq(a[i])} end
      for i = 1, #b, 2 do cand[#cand+1] = {b[i], tonumber(b[i+1]), true, LAY and B4.seq(b[i])} end
      table.sort(cand, function(x, y)
        if x[2] ~= y[2] then return x[2] < y[2] end
        if LAY then return x[4] < y[4] end
        return x[1] < y[1]
      end)
      -- Takes an entry off the set it came from (pending: by its score).
      local function take(cd)
        if cd[3] then redis.call('ZREM', dkey, cd[1])
        elseif LAY then B4.rem(l, cd[2], cd[1])
        else redis.call('ZREM', pk(l), cd[1]) end
      end
      local progress = false
      for _, cd in ipairs(cand) do
        if taken >= batch then break end
        local member = cd[1]
        local m = mload(member, true)
        if not m or m.member ~= member or m.ph == 2 or lv(m) ~= l then
          take(cd)  -- stale entry
          progress = true
        else
          local st = status(m, now)
          if st == 2 then
            local _, visible, ri = timing(m)
            if LAY then unpend(m) else take(cd) end
            local hb = hist_before(m)
            set_fields(m, 'r', tostring(m.r + 1), 'ph', '1', 'va', visible, 'ri', ri)
            hist_change(hb, m, now, nowarg)
            redis.call('ZADD', dkey, visible, member)
            redis.call('ZADD', KE, natural_end(m), member)
            for _, x in ipairs(flat(m)) do out[#out+1] = x end
            if not iv[ri] or tonumber(visible) > tonumber(iv[ri]) then iv[ri] = visible end
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
  end
  if taken >= batch then break end
end
-- The intervals of deliveries in flight, for listMsg and purge (status_sets).
for ri, visible in pairs(iv) do redis.call('ZADD', P..'iv', 'GT', visible, ri) end
out[2] = next_visible(ARGV[1])
return reply(out)
)lua";

// ARGV: now, retention, release back-off (ms), then 4 per item: msgId, '1' ack, '0' nack or 'r'
// release, nack reason ('' for none; kept as the last error), attempt ('0': any). Each item is
// applied by itself, in order. An item naming an attempt applies only while the message is in it
// (core::CheckAttempt). A nack waits core::RetryIntervalOf (the message's own callback's, else
// the topic's); a release (core EventKind::kRelease) makes the delivery pending again after the
// back-off without counting it. Returns {next change, item...}, an item being {'NF'} (no such
// message), {'AT', record...} (another attempt), {'IS', record...} (not in a state the move
// applies to; the node words the error), {'OK', 'ENDED', lane}, {'OK', 'EXHAUSTED', lane} (a
// nack of the last delivery), {'OK', 'READY', lane} (nacked: consumable now) or {'OK',
// 'WAITING', lane} (consumable after the retry interval or the back-off), lane being '1' for
// the push lane, '0' for the pull lane; the next change is the earliest time a nacked or
// released message becomes consumable or ends ('' when none).
const std::string_view kAck = CQ_LUA_COMMON R"lua(
local now, retention = tonumber(ARGV[1]), tonumber(ARGV[2])
account(ARGV[1], now)
local out = {''}
-- A delivery pending again from va (raw; after now unless `now_too`).
local function pending_again(m, va, now_too)
  redis.call('ZREM', dk(lv(m)), m.member)
  set_fields(m, 'ph', '0', 'va', va, 'ri', '0')
  pz_add(lv(m), va, m.member)
  local ne, ne_raw = natural_end(m)
  if LAY then B4.e_pend(m) else redis.call('ZADD', KE, ne_raw, m.member) end
  local nx, nx_raw = ne, ne_raw
  if not now_too and m.va < ne then nx, nx_raw = m.va, va end
  if out[1] == '' or nx < tonumber(out[1]) then out[1] = nx_raw end
end
for i = 4, #ARGV, 4 do
  local id, kind, reason, attempt = ARGV[i], ARGV[i+1], ARGV[i+2], tonumber(ARGV[i+3])
  local m = load(id, false)
  if not m or purged(m, now, retention) then
    out[#out+1] = {'NF'}
  elseif attempt > 0 and m.r ~= attempt then
    out[#out+1] = with_tag('AT', m)
  else
    local st = status(m, now)
    local lane = m.pu == 1 and '1' or '0'
    local hb = hist_before(m)
    if kind == '1' then
      if st == 3 or ((st == 1 or st == 2) and m.ph == 1) then
        finish(m, 4, ARGV[1], now, retention)
        out[#out+1] = {'OK', 'ENDED', lane}
      else
        out[#out+1] = with_tag('IS', m)
      end
    elseif st ~= 3 then
      out[#out+1] = with_tag('IS', m)
    elseif kind == 'r' then
      set_fields(m, 'r', tostring(m.r > 0 and m.r - 1 or 0))
      pending_again(m, dadd(ARGV[1], ARGV[3]), ARGV[3] == '0')
      hist_change(hb, m, now, ARGV[1])
      out[#out+1] = {'OK', ARGV[3] == '0' and 'READY' or 'WAITING', lane}
    else
      if reason ~= '' then set_fields(m, 'le', reason) end
      if m.r >= m.mr + 1 then
        finish(m, 6, ARGV[1], now, retention)
        out[#out+1] = {'OK', 'EXHAUSTED', lane}
      else
        local ri = retry_interval_of(m)
        pending_again(m, ri == '0' and ARGV[1] or dadd(ARGV[1], ri), ri == '0')
        hist_change(hb, m, now, ARGV[1])
        out[#out+1] = {'OK', ri == '0' and 'READY' or 'WAITING', lane}
      end
    end
  end
end
return reply(out)
)lua";

// ARGV: msgId, release ('1'|'0'), now, retention. Returns {'NF'}, {'IS', record...} or {'OK'}.
const std::string_view kDelete = CQ_LUA_COMMON R"lua(
local id, release, now, retention = ARGV[1], ARGV[2] == '1', tonumber(ARGV[3]), tonumber(ARGV[4])
account(ARGV[3], now)
local m = load(id, false)
if not m or purged(m, now, retention) then return reply({'NF'}) end
if status(m, now) > 3 then return reply(with_tag('IS', m)) end
H_SKIP = release  -- a release records nothing: its history goes with the record
finish(m, 7, ARGV[3], now, retention)
if release then
  if LAY then B4.del(m) else redis.call('DEL', P..'r:'..m.id, P..'h:'..m.id) end
  redis.call('ZREM', KX..'7', m.member)
end
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
local waiting, consuming, total = 0, 0, 0
-- Deliveries past their deadline wait out their retry interval in d, scored deadline +
-- interval: those scored up to now + the topic's interval are WAITING (exact when the interval
-- did not change since they were delivered), the rest CONSUMING.
local R = tonumber(cfg().ri) or 0
local cap = string.format('%d', now + R)
for _, l in ipairs(levels()) do
  local lo = '(' .. ARGV[1]
  for i = 3, 11 do
    local hi = '+inf'
    if i <= 10 then hi = '(' .. string.format('%d', now + tonumber(ARGV[i])) end
    local n = pz_count(l, lo, hi)
    if R > 0 then
      local hd = hi
      if hi == '+inf' or tonumber(string.sub(hi, 2)) > now + R then hd = cap end
      n = n + redis.call('ZCOUNT', dk(l), lo, hd)
    end
    out[i - 2] = (out[i - 2] or 0) + n
    waiting = waiting + n
    lo = string.sub(hi, 2)
  end
  consuming = consuming + redis.call('ZCOUNT', dk(l), '(' .. cap, '+inf')
  total = total + pz_card(l) + redis.call('ZCARD', dk(l))
end
out[#out+1] = total - waiting - consuming
out[#out+1] = consuming
out[#out+1] = next_visible(ARGV[1])
return reply(out)
)lua";

// ARGV: now, retention, and '1' for a sweep (a node's, of a topic in the namespace's sweep set).
// At a time something may have changed by itself: finishes what ran out, then returns {1 if a
// pull-lane message is consumable now else 0, next_visible, 1 if a message consumable now is a
// delivery whose ack deadline (or lease) passed (other nodes cannot know its time) else 0, 1 if
// a push-lane message is due now else 0, how many messages the push lane holds, 1 if the topic
// has a callback else 0}; a sweep also trims every ended set of a layout-4 topic and answers
// last when the oldest end left runs out ('': none left).
const std::string_view kWake = CQ_LUA_COMMON R"lua(
local now, retention = tonumber(ARGV[1]), tonumber(ARGV[2])
account(ARGV[1], now)
finish_due(ARGV[1], now, retention)
local late, ready, due, held = 0, 0, 0, 0
for _, l in ipairs(levels()) do
  local d = redis.call('ZCOUNT', dk(l), '-inf', ARGV[1])
  local p = pz_count(l, '-inf', ARGV[1])
  late = late + d
  if l >= 10 then
    due = due + d + p
    held = held + pz_card(l) + redis.call('ZCARD', dk(l))
  else
    ready = ready + d + p
  end
end
local out = {ready > 0 and 1 or 0, next_visible(ARGV[1]), late > 0 and 1 or 0,
             due > 0 and 1 or 0, held, topic_cb() and 1 or 0}
if ARGV[3] == '1' then
  if B4 then B4.sweep(now, retention, cfg().hs == '1') end
  out[7] = B4 and B4.sw and string.format('%d', B4.sw) or ''
end
return reply(out)
)lua";

}  // namespace chronoq::redis::scripts
