#!/usr/bin/env bash
# Redis CPU and memory of the send path's Redis commands in layout 3 (today) and layout 4
# (docs/redis.md "Format 4 (design, issue 20)"), without the rest of the send script: a private
# redis-server without persistence; CALLS script calls of BATCH messages each (100-byte
# payloads packed as format 3, 32-hex-digit msgIds), the same Lua loop around either
#   layout 3: GET r:<msgId> (idempotence), one MSET of the records, one ZADD p and one ZADD e
#             of the batch (48-byte members);
#   layout 4: HGET b:<n> <key id>, HSET per message into its record bucket, bz_add into the
#             pending buckets (bz_add_all of src/redis/lua_buckets.h, pasted from the
#             header), no e entry.
# Prints Redis CPU per message (INFO cpu, whole server) and usec_per_call of EVALSHA per
# message (INFO commandstats), used_memory per message, and the load average. With
# CALLGRIND=1 the server runs under valgrind's callgrind instead and the figure is the
# instructions it executed per message for the calls (zeroed after the script load, dumped
# after the last call): exact and repeatable on a loaded host, unlike times.
# DELAYS: 'rising' (trigger times in send order, the common case) or 'random' (over a day).
# Usage: bench/redis-buckets.sh [CALLS=2000] [BATCH=50] [DELAYS=rising]
set -u
CALLS=${1:-2000}; BATCH=${2:-50}; DELAYS=${3:-rising}; P=${REDIS_PORT:-16574}
D=$(mktemp -d /tmp/cq-redis-buckets.XXXXXX)
trap 'redis-cli -p $P shutdown nosave >/dev/null 2>&1; sleep 0.5; [ -n "${KEEP_DIR:-}" ] && echo "kept $D" || rm -rf $D' EXIT
R="redis-cli -p $P"
VG=
start() { # layout
  if [ -n "${CALLGRIND:-}" ]; then
    valgrind --tool=callgrind --callgrind-out-file=$D/cg.$1 redis-server --port $P --save '' \
      --appendonly no --dir $D >$D/vg.$1.log 2>&1 &
    VG=$!
    for _ in $(seq 100); do $R ping >/dev/null 2>&1 && break; sleep 0.2; done
  else
    redis-server --port $P --save '' --appendonly no --dir $D --daemonize yes --logfile $D/r.log >/dev/null
    sleep 0.3
  fi
}
stop() { $R shutdown nosave >/dev/null 2>&1; [ -n "$VG" ] && wait $VG; VG=; sleep 0.3; }
BZ=$(python3 - "$(dirname "$0")/../src/redis/lua_buckets.h" <<'PY'
import ast, re, sys
text = open(sys.argv[1]).read()
body = text[text.index('#define CQ_LUA_BUCKETS'):]
print(''.join(ast.literal_eval(s) for s in re.findall(r'"(?:[^"\\]|\\.)*"', body)), end='')
PY
)
COMMON='local P = KEYS[1]
local base, n = tonumber(ARGV[1]), tonumber(ARGV[2])
local pl = string.rep("x", 100)
local function delay(i)
  if ARGV[3] == "random" then return 3600000 + (i * 7919) % 86400000 end
  return 3600000 + math.floor(i / 3)
end
local function rec(i, t) return cmsgpack.pack({pl, t, t, t + 86400000, 3, 0, 0, 1, t, 0, i}) end'
L3="$COMMON
local sets, ps, es = {}, {}, {}
for i = base, base + n - 1 do
  local id = string.format('%032x', i * 7919)
  redis.call('GET', P..'r:'..id)
  local t = 1700000000000 + delay(i)
  local m = string.format('%016d', i)..id
  sets[#sets+1] = P..'r:'..id; sets[#sets+1] = rec(i, t)
  ps[#ps+1] = t; ps[#ps+1] = m; es[#es+1] = t + 86400000; es[#es+1] = m
end
redis.call('MSET', unpack(sets)); redis.call('ZADD', P..'p', unpack(ps)); redis.call('ZADD', P..'e', unpack(es))"
L4="$COMMON
$BZ
local ps = {}
for i = base, base + n - 1 do
  local kid = '\\1'..string.sub(string.format('%032x', i * 7919), 17)
  local b = i % 256
  redis.call('HGET', P..'b:'..b, kid)
  local t = 1700000000000 + delay(i)
  redis.call('HSET', P..'b:'..b, kid, rec(i, t))
  ps[#ps+1] = t; ps[#ps+1] = struct.pack('>I6', i)..string.char(b)..kid
end
bz_add_all(0, ps)"
mem() { $R info memory | grep '^used_memory:' | cut -d: -f2 | tr -d '\r'; }
cpu() { $R info cpu | awk -F: '/used_cpu_(sys|user):/{s+=$2} END{printf "%.3f", s}'; }
for layout in 3 4; do
  start $layout
  if [ $layout = 3 ]; then S=$($R script load "$L3"); else S=$($R script load "$L4"); fi
  $R flushall >/dev/null; $R config resetstat >/dev/null
  [ -n "$VG" ] && callgrind_control -z $VG >/dev/null 2>&1
  m0=$(mem); c0=$(cpu); load=$(cut -d' ' -f1 /proc/loadavg)
  for ((c = 0; c < CALLS; c++)); do echo "EVALSHA $S 1 cq:{bench:t1}: $((c * BATCH + 1)) $BATCH $DELAYS"; done | $R | grep -i err | sort | uniq -c | head -3
  N=$((CALLS * BATCH))
  if [ -n "$VG" ]; then
    callgrind_control -d $VG >/dev/null 2>&1
    ir=$(grep -h '^totals:' $D/cg.$layout.* | awk '{print $2}')
    echo "layout $layout ($DELAYS): $((ir / N)) instructions/message in redis-server ($N messages, callgrind)"
  else
    c1=$(cpu); m1=$(mem)
    usec=$($R info commandstats | awk -F'[=,]' '/cmdstat_evalsha:/{print $6}')
    echo "layout $layout ($DELAYS): Redis CPU $(python3 -c "print(round(($c1 - $c0) * 1e6 / $N, 2))") us/message," \
      "EVALSHA $(python3 -c "print(round($usec / $BATCH, 2))") us/message, used_memory $(( (m1 - m0) / N )) bytes/message" \
      "($N messages, load average $load)"
  fi
  stop
done
