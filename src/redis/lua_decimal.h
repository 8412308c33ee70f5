// Exact decimal arithmetic for the Lua of the Redis backend's scripts (docs/redis.md), as a
// string-literal macro pasted by CQ_LUA_COMMON (lua_common.h). Private to src/redis/.
#pragma once

// Exact arithmetic on non-negative decimal strings up to 2^63 - 1 (Lua numbers are doubles,
// exact only to 2^53): dadd saturates as core's SaturatingAdd does; dsub needs a >= b. Operands
// of at most 15 digits (sums below 2^53: every real time) take the fast path of doubles.
#define CQ_LUA_DECIMAL                                                                        \
  "local MAXI = '9223372036854775807'\n"                                                      \
  "local function dcmp(a, b)\n"                                                               \
  "  if #a ~= #b then return #a < #b and -1 or 1 end\n"                                       \
  "  for i = 1, #a do\n"                                                                      \
  "    local x, y = string.byte(a, i), string.byte(b, i)\n"                                   \
  "    if x ~= y then return x < y and -1 or 1 end\n"                                         \
  "  end\n"                                                                                   \
  "  return 0\n"                                                                              \
  "end\n"                                                                                     \
  "local function digits(out)\n"                                                              \
  "  local r = string.gsub(string.reverse(table.concat(out)), '^0+', '')\n"                   \
  "  if r == '' then return '0' end\n"                                                        \
  "  return r\n"                                                                              \
  "end\n"                                                                                     \
  "local function dadd(a, b)\n"                                                               \
  "  if #a < 16 and #b < 16 then return string.format('%d', tonumber(a) + tonumber(b)) end\n" \
  "  local out, carry, i, j = {}, 0, #a, #b\n"                                                \
  "  while i > 0 or j > 0 or carry > 0 do\n"                                                  \
  "    local s = carry + (i > 0 and string.byte(a, i) - 48 or 0) + "                          \
  "(j > 0 and string.byte(b, j) - 48 or 0)\n"                                                 \
  "    out[#out+1] = s % 10; carry = math.floor(s / 10); i = i - 1; j = j - 1\n"              \
  "  end\n"                                                                                   \
  "  local r = digits(out)\n"                                                                 \
  "  if dcmp(r, MAXI) > 0 then return MAXI end\n"                                             \
  "  return r\n"                                                                              \
  "end\n"                                                                                     \
  "local function dsub(a, b)\n"                                                               \
  "  if #a < 16 then return string.format('%d', tonumber(a) - tonumber(b)) end\n"             \
  "  local out, borrow, i, j = {}, 0, #a, #b\n"                                               \
  "  while i > 0 do\n"                                                                        \
  "    local s = string.byte(a, i) - 48 - borrow - (j > 0 and string.byte(b, j) - 48 or 0)\n" \
  "    if s < 0 then s = s + 10; borrow = 1 else borrow = 0 end\n"                            \
  "    out[#out+1] = s; i = i - 1; j = j - 1\n"                                               \
  "  end\n"                                                                                   \
  "  return digits(out)\n"                                                                    \
  "end\n"
