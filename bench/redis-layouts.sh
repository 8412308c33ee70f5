#!/usr/bin/env bash
# Redis memory per entry of the layouts a waiting message could use (docs/redis.md "Sizing",
# docs/benchmarks.md "The Redis backend (issue 20)"): a private redis-server without
# persistence, 100,000 entries written by one Lua loop per layout, used_memory before and after.
# Values of 181 bytes are a format-2 record with a 100-byte payload, 152 bytes one of format 3;
# keys and members are shaped like chronoq's (32-hex-digit msgIds).
# Usage: bench/redis-layouts.sh [N=100000]
set -u
N=${1:-100000}; P=${REDIS_PORT:-16572}
D=$(mktemp -d /tmp/cq-redis-layouts.XXXXXX)
redis-server --port $P --save '' --appendonly no --dir $D --daemonize yes --logfile $D/r.log >/dev/null
trap 'redis-cli -p $P shutdown nosave >/dev/null 2>&1; rm -rf $D' EXIT
sleep 0.3
R="redis-cli -p $P"
mem() { $R info memory | grep '^used_memory:' | cut -d: -f2 | tr -d '\r'; }
val=$(python3 -c "print('x'*181)")
ID="string.format('%032x', i*7919)"
run() { # name, Lua loop body over i (ARGV[1] = N, ARGV[2] = a 181-byte value)
  $R flushall >/dev/null; local m0; m0=$(mem)
  $R eval "for i=1,tonumber(ARGV[1]) do $2 end" 0 $N "$val" >/dev/null
  echo "$1: $(( ($(mem) - m0) / N )) bytes/entry"
}
V152="string.sub(ARGV[2], 1, 152)"
run "string key per record, 49-byte key, 181-byte value (format 2)" "redis.call('SET', 'cq:{bench:t1}:r:'..$ID, ARGV[2])"
run "string key per record, 49-byte key, 152-byte value (format 3)" "redis.call('SET', 'cq:{bench:t1}:r:'..$ID, $V152)"
for B in 256 4096; do
  run "$B hash buckets, default config (hashtable), 181-byte value" "redis.call('HSET', 'cq:{bench:t1}:r:'..(i%$B), $ID, ARGV[2])"
done
$R config set hash-max-listpack-value 1024 >/dev/null; $R config set hash-max-listpack-entries 512 >/dev/null
for B in 256 4096; do
  run "$B hash buckets, listpack (value <= 1024, entries <= 512), 181-byte value" "redis.call('HSET', 'cq:{bench:t1}:r:'..(i%$B), $ID, ARGV[2])"
  run "$B hash buckets, listpack, 152-byte value" "redis.call('HSET', 'cq:{bench:t1}:r:'..(i%$B), $ID, $V152)"
done
$R config set hash-max-listpack-value 64 >/dev/null; $R config set hash-max-listpack-entries 128 >/dev/null
run "one sorted set, 48-byte member (16 digits + msgId, today)" "redis.call('ZADD', 'z', 1700000000000+i, string.format('%016d', i)..$ID)"
run "one sorted set, 40-byte member (8-byte binary seq + msgId)" "redis.call('ZADD', 'z', 1700000000000+i, struct.pack('>I8', i)..$ID)"
run "one sorted set, 8-byte member (binary seq)" "redis.call('ZADD', 'z', 1700000000000+i, struct.pack('>I8', i))"
run "sorted sets of 100 entries (listpack, default config), 48-byte member" "redis.call('ZADD', 'w:'..math.floor(i/100), 1700000000000+i, string.format('%016d', i)..$ID)"
# Format 4 (docs/redis.md "Format 4 (design)"), the whole of a waiting message on a default
# Redis: its record as a field of one of B hash buckets picked by the msgId's SHA-1
# ('cq:T:b:<3 hex digits>', hashtable encoding since the value is over 64 bytes), and its entry
# in a bucket of at most 128 entries of the pending set ('cq:T:p:<id>', listpack encoding),
# plus the buckets' index ('cq:T:pi', one member per bucket). Messages sent in order fill each
# pending bucket (an insert after the last entry of a full last bucket starts a new one).
F4REC="local id = $ID; redis.call('HSET', 'cq:{bench:t1}:b:'..string.sub(redis.sha1hex(id), 1, 3), id, $V152)"
F4IDX="if i % 128 == 1 then redis.call('ZADD', 'cq:{bench:t1}:pi', 0, struct.pack('>dI6', 1700000000000+i, i)..'cq:{bench:t1}:p:'..math.floor(i/128)) end"
run "format 4: record in 4096 buckets (152-byte value) + pending buckets of 128, 22-byte member (6-byte seq + 16-byte msgId)" \
  "$F4REC; $F4IDX; redis.call('ZADD', 'cq:{bench:t1}:p:'..math.floor(i/128), 1700000000000+i, struct.pack('>I6', i)..string.rep('k', 16))"
run "format 4: the same, 38-byte member (6-byte seq + 32-character msgId)" \
  "$F4REC; $F4IDX; redis.call('ZADD', 'cq:{bench:t1}:p:'..math.floor(i/128), 1700000000000+i, struct.pack('>I6', i)..$ID)"
run "format 4: the same, 48-byte member (16 digits + msgId, as today)" \
  "$F4REC; $F4IDX; redis.call('ZADD', 'cq:{bench:t1}:p:'..math.floor(i/128), 1700000000000+i, string.format('%016d', i)..$ID)"
run "format 4: 38-byte member, buckets of 64 (half-full after a split)" \
  "$F4REC; $F4IDX; redis.call('ZADD', 'cq:{bench:t1}:p:'..math.floor(i/64), 1700000000000+i, struct.pack('>I6', i)..$ID)"
run "format 4: record in 256 buckets, 38-byte member, buckets of 128" \
  "local id = $ID; redis.call('HSET', 'cq:{bench:t1}:b:'..string.sub(redis.sha1hex(id), 1, 2), id, $V152); $F4IDX; redis.call('ZADD', 'cq:{bench:t1}:p:'..math.floor(i/128), 1700000000000+i, struct.pack('>I6', i)..$ID)"
run "format 4: record field a 17-byte binary msgId (a generated id's 16 bytes), 38-byte member, 4096 buckets" \
  "local id = $ID; redis.call('HSET', 'cq:{bench:t1}:b:'..string.sub(redis.sha1hex(id), 1, 3), '\\001'..string.sub(redis.sha1hex(id), 1, 16)..'', $V152); $F4IDX; redis.call('ZADD', 'cq:{bench:t1}:p:'..math.floor(i/128), 1700000000000+i, struct.pack('>I6', i)..$ID)"
run "format 4: 17-byte field + 22-byte member (binary msgIds in both), 4096 buckets, buckets of 128" \
  "local id = $ID; local k = '\\001'..string.sub(redis.sha1hex(id), 1, 16); redis.call('HSET', 'cq:{bench:t1}:b:'..string.sub(redis.sha1hex(id), 1, 3), k, $V152); $F4IDX; redis.call('ZADD', 'cq:{bench:t1}:p:'..math.floor(i/128), 1700000000000+i, struct.pack('>I6', i)..string.sub(k, 2))"
run "format 4 records alone: 4096 buckets, 152-byte value" "$F4REC"
run "format 4 records alone: 4096 buckets, 181-byte value" "local id = $ID; redis.call('HSET', 'cq:{bench:t1}:b:'..string.sub(redis.sha1hex(id), 1, 3), id, ARGV[2])"
