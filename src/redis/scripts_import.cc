// The import script of the Redis backend (issue 21, docs/api-extensions.md "Export and import"):
// messages stored with the full state an export carries. See scripts.h and lua_common.h.
#include "redis/lua_common.h"
#include "redis/scripts.h"

namespace chronoq::redis::scripts {

// ARGV: now, retention, then 20 per message: msgId, payload, produce, trigger, expire, maxRetry,
// priority, countTrigger, count, lastError, callback (core::EncodeCallback's bytes, '' for none),
// lane ('1' push, '0' pull), deliveries (r), phase ('0' pending, '1' delivered), visible at
// (pending: consumable from; delivered: ack deadline + retry interval), retry interval of the
// delivery, then a dead letter's source topic, status, deliveries and end time ('', '0', '0',
// '0' on other messages). A msgId in life here is left alone ({'SKIP'}); otherwise the message
// is stored as given (an ended one is replaced; the capacity does not apply) ({'NEW'}). Returns
// {next change, item...}: the earliest time a new message becomes consumable or ends ('' when
// none is new).
const std::string_view kImport = CQ_LUA_COMMON R"lua(
local now, retention = tonumber(ARGV[1]), tonumber(ARGV[2])
)lua" CQ_LUA_NEW_TOPIC4 R"lua(
account(ARGV[1], now)
local out = {''}
local iv = {}
for i = 3, #ARGV, 20 do
  local id = ARGV[i]
  local old = load(id, false)
  if old and not purged(old, now, retention) and status(old, now) <= 3 then
    out[#out+1] = 'SKIP'
  else
    local r, ph, va, ri = ARGV[i+12], ARGV[i+13], ARGV[i+14], ARGV[i+15]
    store_new(id, old, ARGV[i+1], ARGV[i+2], ARGV[i+3], ARGV[i+4], ARGV[i+5], ARGV[i+6], va,
              {'ct', ARGV[i+7], 'c', ARGV[i+8], 'le', ARGV[i+9], 'cb', ARGV[i+10],
               'pu', ARGV[i+11], 'r', r, 'dt', ARGV[i+16], 'ds', ARGV[i+17], 'dr', ARGV[i+18],
               'de', ARGV[i+19]})
    local m = load(id, false)
    if ph == '1' then
      if LAY then unpend(m) else redis.call('ZREM', pk(lv(m)), m.member) end
      set_fields(m, 'ph', '1', 'ri', ri)
      zadd_level('d', lv(m), va, m.member)
      if not iv[ri] or tonumber(va) > tonumber(iv[ri]) then iv[ri] = va end
    end
    local ne, ne_raw = natural_end(m)
    if not LAY or ph == '1' then redis.call('ZADD', KE, ne_raw, m.member) end
    local nx = ne_raw
    if m.va > now and m.va < ne then nx = va end
    if out[1] == '' or tonumber(nx) < tonumber(out[1]) then out[1] = nx end
    out[#out+1] = 'NEW'
  end
end
for ri, visible in pairs(iv) do redis.call('ZADD', P..'iv', 'GT', visible, ri) end
return reply(out)
)lua";

}  // namespace chronoq::redis::scripts
