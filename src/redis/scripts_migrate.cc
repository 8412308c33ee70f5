// The migration script of the Redis backend (build step 7 of format 4, docs/redis.md "Migration
// from layouts 1-3"): moves a topic's messages from layouts 1-3 into layout 4, in bounded calls.
// See scripts.h and lua_common.h.
#include "redis/lua_common.h"
#include "redis/scripts.h"

namespace chronoq::redis::scripts {

// KEYS: the topic's prefix and its 'lay' key (the second key is what lets this script run while
// 'lay' is 'm': every other script refuses then, lua_common.h). ARGV: now, limit.
//
// The first call on a topic in layouts 1-3 sets 'lay' to 'm' and the mark 'em' to now (pending
// entries at or before it go into E, later ones are counted in 'qn' field 'w'). Each call then
// takes up to `limit` entries of the old sets (the p<l> and d<l> of every level in 'pl' and of
// level 0, 'e', 'x4'..'x7'), and for each the message it names, read from its record (a hash of
// format 1 or a string of formats 2 and 3): its record goes to its bucket (layout 4, format 3's
// numbers), its old entries all go, and it enters layout 4's sets as its phase says (pending: its
// level's buckets and E or 'w'; delivered: D<l> and E; ended: X<s>); its history list is renamed
// to its key id. An entry whose record is gone or of another seq (replaced) is dropped. Outbox
// members are renamed to layout 4's. Each message moves whole within one call (a script is
// atomic), so a run stopped between calls and started again neither loses nor doubles one. The
// pending entries of a call go into their buckets together at its end. When the old sets and the
// old outbox members are all gone, the topic's record keys left (ended before issue 14, in no
// set) are walked by SCAN (cursor 'mscan') and the ended ones moved; then 'pl' goes and 'lay'
// becomes '4'.
// Returns {'DONE', moved} (the topic is in layout 4), {'MORE', moved}, or {'NONE', 0} (no such
// topic: no 'seq').
const std::string_view kMigrate = CQ_LUA_COMMON R"lua(
local now, limit = tonumber(ARGV[1]), tonumber(ARGV[2])
if LAY then return {'DONE', 0} end
if not redis.call('GET', P..'lay') then
  if redis.call('EXISTS', P..'seq') == 0 then return {'NONE', 0} end
  redis.call('SET', P..'lay', 'm')
  redis.call('SET', P..'em', string.format('%d 281474976710655', now))
end
local B4n, KEn, KXn, KLn = layout4(P, levels, mload, natural_end)
local function old() B4, KE, KX, KL, LV = nil, P..'e', P..'x', P..'pl', nil end
local function new() B4, KE, KX, KL, LV = B4n, KEn, KXn, KLn, nil end
local OLD = '^'..string.rep('%d', 16)
local moved, seen = 0, 0
-- The pending entries moved by this call, by level ({score, member, ...}): added to their
-- buckets together at its end (B4.add_all: one ZADD per bucket), not one at a time.
local PEND, W = {}, 0
local function flush_pending()
  for l, ps in pairs(PEND) do
    local order = {}
    for i = 1, #ps, 2 do order[#order+1] = {ps[i], ps[i+1]} end
    table.sort(order, function(x, y)
      if x[1] ~= y[1] then return x[1] < y[1] end
      return x[2] < y[2] -- a member starts with its seq, 6 bytes big-endian
    end)
    local xs = {}
    for _, o in ipairs(order) do xs[#xs+1] = o[1]; xs[#xs+1] = o[2] end
    if l ~= 0 then redis.call('SADD', KLn, tostring(l)) end
    B4n.add_all(l, xs)
  end
  if W > 0 then redis.call('HINCRBY', P..'qn', 'w', W) end
  PEND, W = {}, 0
end
-- Moves the message m (read by load in the old layout) whose old member is `member`.
local function move(m, id, member)
  local l = lv(m)
  redis.call('ZREM', pk(l), member)
  redis.call('ZREM', dk(l), member)
  redis.call('ZREM', KE, member)
  if m.ph == 2 then redis.call('ZREM', KX..m.es, member) end
  redis.call('DEL', P..'r:'..id)
  new()
  m.kid = B4.kid_of(id)
  m.bk = B4.bucket_of(m.kid)
  m.member = B4.member(m.sq, m.bk, m.kid)
  if m.kid ~= id and redis.call('EXISTS', P..'h:'..id) == 1 then
    redis.call('RENAME', P..'h:'..id, P..'h:'..m.kid)  -- keeps its expiry
  end
  write_record(m, false)
  if m.ph == 0 then
    local ps = PEND[l] or {}
    PEND[l] = ps
    ps[#ps+1] = tonumber(m.raw.va); ps[#ps+1] = m.member
    local ne, ne_raw = natural_end(m) -- into E, or counted out of it (B4.e_pend, grouped)
    if B4.out_of_e(m.va, m.sq, ne) then W = W + 1 else redis.call('ZADD', KE, ne_raw, m.member) end
  elseif m.ph == 1 then
    zadd_level('d', l, m.raw.va, m.member)
    local _, ne = natural_end(m)
    redis.call('ZADD', KE, ne, m.member)
  else
    redis.call('ZADD', KX..m.es, m.raw.ea, m.member)
  end
  moved = moved + 1
end
-- The message the old member `member` of the set `k` names.
local function migrate(k, member)
  seen = seen + 1
  local seq, id = tonumber(string.sub(member, 1, 16)), string.sub(member, 17)
  old()
  local m = load(id, true)
  redis.call('ZREM', k, member)
  if not m or m.sq ~= seq then return end
  move(m, id, member)
end
old()
local sets = {}
for _, x in ipairs(redis.call('SMEMBERS', P..'pl')) do
  sets[#sets+1] = pk(tonumber(x)); sets[#sets+1] = dk(tonumber(x))
end
sets[#sets+1] = pk(0); sets[#sets+1] = dk(0); sets[#sets+1] = P..'e'
for s = 4, 7 do sets[#sets+1] = P..'x'..s end
for _, k in ipairs(sets) do
  while seen < limit do
    local xs = redis.call('ZRANGE', k, 0, limit - seen - 1)
    if not xs[1] then break end
    for _, member in ipairs(xs) do migrate(k, member) end
  end
end
if seen < limit then -- outbox entries: renamed (the node copied their inbox markers first)
  local xs = redis.call('ZRANGE', P..'ob', 0, -1, 'WITHSCORES')
  for i = 1, #xs, 2 do
    local mo = xs[i]
    if seen < limit and string.find(mo, OLD) then
      seen = seen + 1
      local kid = B4n.kid_of(string.sub(mo, 17))
      local mn = B4n.member(tonumber(string.sub(mo, 1, 16)), B4n.bucket_of(kid), kid)
      if redis.call('EXISTS', P..'ob:'..mo) == 1 then
        redis.call('RENAME', P..'ob:'..mo, P..'ob:'..mn)
      end
      redis.call('ZADD', P..'ob', xs[i+1], mn)
      redis.call('ZREM', P..'ob', mo)
    end
  end
end
flush_pending()
if seen >= limit then return {'MORE', moved} end
-- Records in no set: those of messages ended before issue 14 (no x<s> then: they kept only
-- their expiry), which get still answers until it runs out. The topic's record keys left are
-- found by SCAN from the cursor 'mscan' (at most 10 SCANs of `limit` per call: the whole
-- keyspace of the server is walked), and each ended one is moved into its bucket and X<s> by
-- its end time (the trim deletes it once its retention is over, as it would have expired).
-- Any other record left there belongs to no message (no set names it): left alone.
local pat = string.gsub(P, '[%*%?%[%]\\]', '\\%0')..'r:*'
local cur, scans = redis.call('GET', P..'mscan') or '0', 0
repeat
  local r = redis.call('SCAN', cur, 'MATCH', pat, 'COUNT', limit)
  cur, scans = r[2] and r[1] or '0', scans + 1
  for _, k in ipairs(r[2] or {}) do
    local id = string.sub(k, #P + 3)
    old()
    local m = load(id, true)
    seen = seen + 1
    if m and m.ph == 2 then move(m, id, string.format('%016d', m.sq)..id) end
  end
until cur == '0' or seen >= limit or scans >= 10
if cur ~= '0' then
  redis.call('SET', P..'mscan', cur)
  return {'MORE', moved}
end
redis.call('DEL', P..'pl', P..'mscan')
redis.call('SET', P..'lay', '4')
return {'DONE', moved}
)lua";

}  // namespace chronoq::redis::scripts
