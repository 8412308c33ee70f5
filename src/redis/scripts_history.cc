// The script of getMsgHistory (issue 21, API-EXTENSIONS.md section 8). The entries themselves
// are written by the scripts that change a record (lua_common.h, CQ_LUA_HISTORY).
#include "redis/lua_common.h"
#include "redis/scripts.h"

namespace chronoq::redis::scripts {

// ARGV: msgId, now, retention. Returns {'OFF'} (the topic's history is off), {'NF'} (no such
// message, or its retention ran out) or {'OK', record..., {entry...}}: the record (payload
// left out) and the list 'h:<msgId>', whose entries of another seq the node skips.
const std::string_view kHistory = CQ_LUA_COMMON R"lua(
if cfg().hs ~= '1' then return reply({'OFF'}) end
local m = load(ARGV[1], false)
if not m or purged(m, tonumber(ARGV[2]), tonumber(ARGV[3])) then return reply({'NF'}) end
local out = with_tag('OK', m)
out[#out+1] = redis.call('LRANGE', P..'h:'..(B4 and B4.kid_of(ARGV[1]) or ARGV[1]), 0, -1)
return reply(out)
)lua";

}  // namespace chronoq::redis::scripts
