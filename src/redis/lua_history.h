// Message history for the Lua of the Redis backend's scripts (docs/redis.md "Message history"),
// as a string-literal macro pasted by CQ_LUA_COMMON (lua_common.h) before finish(); it calls
// helpers CQ_LUA_COMMON defines before it (cfg, load, natural_end, deadline_of). Private to
// src/redis/.
#pragma once

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
  "  local k, e = P..'h:'..(B4 and B4.kid_of(m.id) or m.id), {}\n"                                 \
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
  "    local k, keep = P..'h:'..(B4 and B4.kid_of(id) or id), {}\n"                                \
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
