// The listMsg script (API-EXTENSIONS.md section 3): one page of a topic's messages in one status
// (or the walk WAITING, READY, CONSUMING), from a cursor that is a position in the listed order,
// never a snapshot. Cost: O(limit * levels * log n), never the backlog.
#include "redis/lua_common.h"
#include "redis/scripts.h"

namespace chronoq::redis::scripts {

// ARGV: now, retention, limit, the statuses walked (digits: '123', or one status), then the
// cursor's status ('' on the first page), priority level, score and seq (each '' when absent).
// Orders: WAITING by visible at over the p sets of every level, CONSUMING by deadline over the
// d sets, READY as a pull delivers (levels from 9 down, in each p and d by visible at), ended
// statuses by end time (the x sets). Ties by seq. Returns {next cursor ('' on the last page),
// record...} (16 fields per record, payload included).
const std::string_view kList = CQ_LUA_COMMON R"lua(
local now, retention, limit = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
account(ARGV[1], now)
local walk = {}
for ch in string.gmatch(ARGV[4], '%d') do walk[#walk+1] = tonumber(ch) end
-- The position: status, level (READY only), then the (score, seq) of the last entry examined;
-- a nil score is the start of the status (or level).
local pos = {st = walk[1]}
if ARGV[5] ~= '' then
  pos = {st = tonumber(ARGV[5]), l = tonumber(ARGV[6]), s = ARGV[7], seq = tonumber(ARGV[8])}
  if pos.s == '' then pos.s = nil end
end
-- The rank in sorted set k of the first entry after (s, seq) in (score, seq) order (after every
-- entry scored s when seq is nil): O(log n), a binary search over the entries scored s.
local function rank_after(k, s, seq)
  if not s then return 0 end
  local lo = redis.call('ZCOUNT', k, '-inf', '('..s)
  local eq = redis.call('ZCOUNT', k, s, s)
  if not seq then return lo + eq end
  local a, b = lo, lo + eq
  while a < b do
    local mid = math.floor((a + b) / 2)
    local x = redis.call('ZRANGE', k, mid, mid)[1]
    if tonumber(string.sub(x, 1, 16)) <= seq then a = mid + 1 else b = mid end
  end
  return a
end
local out = {''}
local want, listed, budget = limit, 0, limit * 4 + 100
local emit = function(m) for _, x in ipairs(flat(m)) do out[#out+1] = x end end
-- Examines the entries of `keys` after pos, scored up to hi (inclusive; nil: no bound), merged in
-- (score, seq) order, and lists those ok() accepts, until `want` are listed or the budget of
-- entries examined is spent; pos follows. Returns true when the keys have nothing more.
local function scan(keys, hi, ok)
  while listed < want and budget > 0 do
    local n = math.min(want - listed, budget)
    local cand = {}
    for _, k in ipairs(keys) do
      local r = rank_after(k, pos.s, pos.seq)
      local e = hi and redis.call('ZCOUNT', k, '-inf', hi) or redis.call('ZCARD', k)
      if r < e then
        local xs = redis.call('ZRANGE', k, r, math.min(r + n, e) - 1, 'WITHSCORES')
        for i = 1, #xs, 2 do
          cand[#cand+1] = {xs[i], tonumber(xs[i+1]), xs[i+1], tonumber(string.sub(xs[i], 1, 16))}
        end
      end
    end
    if #cand == 0 then return true end
    table.sort(cand, function(x, y)
      if x[2] ~= y[2] then return x[2] < y[2] end
      return x[4] < y[4]
    end)
    for i = 1, math.min(n, #cand) do
      local c = cand[i]
      pos.s, pos.seq = c[3], c[4]
      budget = budget - 1
      local m = load(string.sub(c[1], 17), emit ~= nil)
      if m and m.member == c[1] and ok(m) then
        listed = listed + 1
        if emit then emit(m) end
      end
    end
  end
  return false
end
local function segment(st)
  if st == 1 or st == 3 then
    if not pos.s or tonumber(pos.s) <= now then pos.s, pos.seq = ARGV[1], nil end
    local keys = {}
    for _, l in ipairs(levels()) do keys[#keys+1] = st == 1 and pk(l) or dk(l) end
    return scan(keys, nil, function(m) return status(m, now) == st end)
  elseif st == 2 then
    for _, l in ipairs(levels()) do
      if not pos.l or l <= pos.l then
        if pos.l ~= l then pos.l, pos.s, pos.seq = l, nil, nil end
        local ready = function(m) return m.pr == l and status(m, now) == 2 end
        if not scan({pk(l), dk(l)}, ARGV[1], ready) then return false end
      end
    end
    return true
  end
  if st == 5 or st == 6 then finish_due(ARGV[1], now, retention) end
  trim_ended(st, now, retention)
  return scan({P..'x'..st}, nil, function(m)
    return m.ph == 2 and m.es == st and not purged(m, now, retention)
  end)
end
-- Walks the statuses from the position's; returns true when nothing more is there.
local function run()
  local from
  for i, st in ipairs(walk) do if st == pos.st then from = i end end
  if not from then return true end
  for i = from, #walk do
    if i > from then pos = {st = walk[i]} end
    if not segment(pos.st) then return false end
  end
  return true
end
if not run() then
  -- A full page: is anything left? A dry run from here (nothing listed, position kept) says.
  local here = {st = pos.st, l = pos.l, s = pos.s, seq = pos.seq}
  want, listed, budget, emit = 1, 0, limit + 100, nil
  if not run() then
    out[1] = string.format('%d:%d:%s:%s', here.st, here.l or 0, here.s or '',
                           here.seq and string.format('%d', here.seq) or '')
  end
end
return reply(out)
)lua";

}  // namespace chronoq::redis::scripts
