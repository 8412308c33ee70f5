#!/usr/bin/env bash
# The Redis backend's figures of docs/benchmarks.md: a private redis-server (no persistence) on
# port 16500, one node (produce, e2e), two nodes producing at once, two nodes e2e (E2E_RATES),
# and Redis memory per waiting message. Prints the bench tool's JSON reports. Run from the repository root.
set -u
R=$(mktemp -d /tmp/cq-redis-figures.XXXXXX); rm -rf $R; mkdir -p $R
redis-server --port 16500 --save '' --appendonly no --dir $R --daemonize yes --logfile $R/redis.log >/dev/null
sleep 0.3
URL=redis://127.0.0.1:16500
start() { build/chronoq serve --listen=127.0.0.1:$1 --grpc-listen= --storage=redis --redis-url=$URL --namespace=bench >/dev/null 2>&1 & echo $!; }
A=$(start 18701); sleep 0.5
kill -0 $A 2>/dev/null || { echo "redis-figures: node A did not start (port 18701 taken?)" >&2; exit 1; }
echo "== one node produce"; build/chronoq bench --server=http://127.0.0.1:18701 --no-progress --json produce --count=200000 --connections=64 2>/dev/null
echo "== one node e2e"; build/chronoq bench --server=http://127.0.0.1:18701 --no-progress --json e2e --count=${E2E_COUNT:-5000} --delay-min-ms=1000 --delay-max-ms=3000 --consumers=8 --batch=100 --rate=${E2E_RATE:-500} 2>/dev/null
redis-cli -p 16500 flushall >/dev/null
B=$(start 18702); sleep 0.5
kill -0 $B 2>/dev/null || { echo "redis-figures: node B did not start (port 18702 taken?)" >&2; exit 1; }
echo "== two nodes produce (concurrently)"
build/chronoq bench --server=http://127.0.0.1:18701 --no-progress --json produce --count=100000 --connections=32 2>/dev/null > $R/pa.json &
build/chronoq bench --server=http://127.0.0.1:18702 --no-progress --json produce --count=100000 --connections=32 2>/dev/null > $R/pb.json
wait %1 2>/dev/null; sleep 1
cat $R/pa.json; cat $R/pb.json
redis-cli -p 16500 flushall >/dev/null
for rate in ${E2E_RATES:-500 2000 5000}; do
  echo "== two nodes e2e at $rate/s (sends through one node, consumers on the other)"
  build/chronoq bench --server=http://127.0.0.1:18701 --no-progress --json e2e --count=$((rate * 4)) --delay-min-ms=1000 --delay-max-ms=3000 --consumers=8 --batch=100 --rate=$rate --consume-server=http://127.0.0.1:18702 2>/dev/null
  redis-cli -p 16500 flushall >/dev/null
done
echo "== memory per waiting message"
m0=$(redis-cli -p 16500 info memory | grep '^used_memory:' | cut -d: -f2 | tr -d '\r')
build/chronoq bench --server=http://127.0.0.1:18701 --no-progress --json backlog --count=200000 --delay-ms=3600000 2>/dev/null | python3 -c "import json,sys; d=json.load(sys.stdin); print('backlog sends/s', round(d['throughput']))"
m1=$(redis-cli -p 16500 info memory | grep '^used_memory:' | cut -d: -f2 | tr -d '\r')
echo "used_memory before $m0 after $m1 per msg $(( (m1-m0)/200000 ))"
kill $A $B; redis-cli -p 16500 shutdown nosave >/dev/null 2>&1
