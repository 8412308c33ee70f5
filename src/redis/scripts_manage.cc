// The scripts of issue 14's message management (API-EXTENSIONS.md section 3): update, touch,
// count. Each mirrors its move of src/core/state_machine.cc on one message, atomically against
// pulls (a script runs alone on its slot), and answers the record as it is afterwards.
#include "redis/lua_common.h"
#include "redis/scripts.h"

namespace chronoq::redis::scripts {

// ARGV: msgId, now, retention, then name/value pairs of the fields to change (core::MessageUpdate):
// 'tt' new trigger time (already max'ed with now by the node), 'p' payload, 'ttl', 'mr' maxRetry,
// 'pr' priority. core::ApplyUpdate on a WAITING or READY message. Returns {'NF'},
// {'IS', record...} or {'OK', record...} (payload included).
const std::string_view kUpdate = CQ_LUA_COMMON R"lua(
local id, now, retention = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
account(ARGV[2], now)
local m = load(id, true)
if not m or purged(m, now, retention) then return reply({'NF'}) end
local st = status(m, now)
if st ~= 1 and st ~= 2 then return reply(with_tag('IS', m)) end
local u = {}
for i = 4, #ARGV, 2 do u[ARGV[i]] = ARGV[i+1] end
local tt = m.raw.tt
local ttl = u.ttl or dsub(m.raw.et, tt)
local f = {}
if u.tt then tt = u.tt; f[#f+1] = 'tt'; f[#f+1] = tt; f[#f+1] = 'va'; f[#f+1] = tt end
if u.tt or u.ttl then f[#f+1] = 'et'; f[#f+1] = dadd(tt, ttl) end
if u.p then f[#f+1] = 'p'; f[#f+1] = u.p end
if u.mr then f[#f+1] = 'mr'; f[#f+1] = u.mr end
if u.pr then f[#f+1] = 'pr'; f[#f+1] = u.pr end
-- READY covers a delivery whose ack deadline passed (phase 1): a new trigger time makes it
-- pending again (its deliveries so far stay counted); otherwise it stays in its phase's set.
if u.tt and m.ph == 1 then f[#f+1] = 'ph'; f[#f+1] = '0'; f[#f+1] = 'ri'; f[#f+1] = '0' end
if LAY then unpend(m) else redis.call('ZREM', m.ph == 0 and pk(lv(m)) or dk(lv(m)), m.member) end
local hb = hist_before(m)
set_fields(m, unpack(f))
hist_change(hb, m, now, ARGV[2])
zadd_level(m.ph == 0 and 'p' or 'd', lv(m), m.raw.va, m.member)
local _, ne = natural_end(m)
if LAY and m.ph == 0 then B4.e_pend(m) else redis.call('ZADD', KE, ne, m.member) end
return reply(with_tag('OK', m))
)lua";

// ARGV: msgId, now, retention, ack timeout ('' when the request left it out: the topic's). A
// CONSUMING message's deadline becomes now + ack timeout (visible at that plus its retry
// interval). Returns {'NF'}, {'IS', record...} or {'OK', record...}.
const std::string_view kTouch = CQ_LUA_COMMON R"lua(
local id, now, retention = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
account(ARGV[2], now)
local m = load(id, true)
if not m or purged(m, now, retention) then return reply({'NF'}) end
if status(m, now) ~= 3 then return reply(with_tag('IS', m)) end
local va = dadd(ARGV[2], ARGV[4] ~= '' and ARGV[4] or cfg().at)
if m.ri ~= 0 then va = dadd(va, m.raw.ri) end
local hb = hist_before(m)
set_fields(m, 'va', va)
hist_change(hb, m, now, ARGV[2])
redis.call('ZADD', dk(lv(m)), va, m.member)
redis.call('ZADD', P..'iv', 'GT', va, m.raw.ri)
local _, ne = natural_end(m)
redis.call('ZADD', KE, ne, m.member)
return reply(with_tag('OK', m))
)lua";

// ARGV: msgId, count to add (>= 1), now, retention. A WAITING message's count grows; reaching
// its count trigger makes it READY now. Returns {'NF'}, {'IS', record...} or
// {'OK', record...}.
const std::string_view kCount = CQ_LUA_COMMON R"lua(
local id, now, retention = ARGV[1], tonumber(ARGV[3]), tonumber(ARGV[4])
account(ARGV[3], now)
local m = load(id, true)
if not m or purged(m, now, retention) then return reply({'NF'}) end
if status(m, now) ~= 1 then return reply(with_tag('IS', m)) end
local c = dadd(m.raw.c, ARGV[2])
local hb = hist_before(m)
if m.ct > 0 and dcmp(c, m.raw.ct) >= 0 then
  if LAY then unpend(m) end -- its bucket is found by its old score
  set_fields(m, 'c', c, 'va', ARGV[3])
  zadd_level('p', lv(m), ARGV[3], m.member)
  local _, ne = natural_end(m)
  if LAY then B4.e_pend(m) else redis.call('ZADD', KE, ne, m.member) end
else
  set_fields(m, 'c', c)
end
hist_change(hb, m, now, ARGV[3])
return reply(with_tag('OK', m))
)lua";

}  // namespace chronoq::redis::scripts
