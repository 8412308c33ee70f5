// The listMsg script (API-EXTENSIONS.md section 3): one page of a topic's messages in one status
// (or the walk WAITING, READY, CONSUMING), from a cursor that is a position in the listed order,
// never a snapshot. Cost: O(limit * levels * log n), never the backlog.
#include "redis/lua_walk.h"
#include "redis/scripts.h"

namespace chronoq::redis::scripts {

// ARGV: now, retention, limit, the statuses walked (digits: '123', or one status), then the
// cursor's status ('' on the first page), priority level, score and seq (each '' when absent).
// Orders: WAITING by the time it becomes consumable (visible at) over the p sets of every level
// and the deliveries waiting out a retry interval in the d sets, CONSUMING by deadline (plus the
// retry interval of the delivery, the same for all while one interval is in use) over the d sets,
// READY as a pull delivers (levels from 19 down: the push lane's 10..19 first, then 9..0, in
// each p and d by visible at), ended statuses by
// end time (the x sets). Ties by seq. Returns {next cursor ('' on the last page), record...} (16
// fields per record, payload included).
const std::string_view kList = CQ_LUA_COMMON CQ_LUA_WALK R"lua(
local now, retention, limit = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
account(ARGV[1], now)
local walk = {}
for ch in string.gmatch(ARGV[4], '%d') do walk[#walk+1] = tonumber(ch) end
-- The position: status, level (READY only), then the (score, seq) of the last entry examined;
-- a nil score is the start of the status (or level).
pos = {st = walk[1]}
if ARGV[5] ~= '' then
  pos = {st = tonumber(ARGV[5]), l = tonumber(ARGV[6]), s = ARGV[7], seq = tonumber(ARGV[8])}
  if pos.s == '' then pos.s = nil end
end
local out = {''}
W.want, W.budget = limit, limit * 4 + 100
local emit = function(m) for _, x in ipairs(flat(m)) do out[#out+1] = x end end
-- Lists the entries whose record is there and that ok() accepts.
local function lister(ok)
  return function(member)
    local m = mload(member, emit ~= nil)
    if not (m and m.member == member and ok(m)) then return false end
    if emit then emit(m) end
    return true
  end
end
local function segment(st)
  if st == 1 or st == 3 then
    local keys, start = status_sets(st, ARGV[1], now)
    if not pos.s or tonumber(pos.s) <= tonumber(start) then pos.s, pos.seq = start, nil end
    return scan(keys, lister(function(m) return status(m, now) == st end))
  elseif st == 2 then
    for _, l in ipairs(levels()) do
      if not pos.l or l <= pos.l then
        if pos.l ~= l then pos.l, pos.s, pos.seq = l, nil, nil end
        local ready = function(m) return lv(m) == l and status(m, now) == 2 end
        if not scan({pset(l, ARGV[1]), {dk(l), ARGV[1]}}, lister(ready)) then return false end
      end
    end
    return true
  end
  if st == 5 or st == 6 then finish_due(ARGV[1], now, retention) end
  trim_ended(st, now, retention)
  return scan({{KX..st}}, lister(function(m)
    return m.ph == 2 and m.es == st and not purged(m, now, retention)
  end))
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
  W.want, W.done, W.budget, emit = 1, 0, limit + 100, nil
  if not run() then
    out[1] = string.format('%d:%d:%s:%s', here.st, here.l or 0, here.s or '',
                           here.seq and string.format('%d', here.seq) or '')
  end
end
return reply(out)
)lua";

}  // namespace chronoq::redis::scripts
