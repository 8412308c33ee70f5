#!/usr/bin/env bash
# Redis backend cost per send (docs/benchmarks.md "The Redis backend (issue 20)"): a private
# redis-server without persistence and one node on fresh ports, a warm-up, then COUNT sends
# (100-byte payloads, 1-hour delays, CONNS connections). Prints sends/s, the load average, Redis
# CPU (INFO cpu) and node CPU (/proc/PID/stat) per send, used_memory per waiting message, INFO
# commandstats per send and MEMORY USAGE of one record and of the p and e sets.
# Usage (from the repository root): bench/redis-cost.sh [BUILD_DIR=build] [COUNT=50000] [CONNS=64]
# NODE_ARGS: more flags for the node (e.g. NODE_ARGS=--redis-format=2).
set -u
B=${1:-build}; N=${2:-50000}; C=${3:-64}
P=${REDIS_PORT:-16510}; HP=${NODE_PORT:-18710}
R=$(mktemp -d /tmp/cq-redis-cost.XXXXXX)
redis-server --port $P --save '' --appendonly no --dir $R --daemonize yes --logfile $R/redis.log >/dev/null
sleep 0.3
$B/chronoq serve --listen=127.0.0.1:$HP --storage=redis --redis-url=redis://127.0.0.1:$P \
  --namespace=bench --grpc-listen= ${NODE_ARGS:-} >$R/node.log 2>&1 &
NODE=$!
trap 'kill $NODE 2>/dev/null; wait $NODE 2>/dev/null; redis-cli -p $P shutdown nosave >/dev/null 2>&1; rm -rf $R' EXIT
sleep 0.7
$B/chronoq bench --server=http://127.0.0.1:$HP --no-progress --topic warm produce --count=2000 \
  --connections=$C >/dev/null 2>&1
redis-cli -p $P flushall >/dev/null
redis-cli -p $P config resetstat >/dev/null
mem() { redis-cli -p $P info memory | grep '^used_memory:' | cut -d: -f2 | tr -d '\r'; }
cpu() { redis-cli -p $P info cpu | awk -F: '/used_cpu_(sys|user):/{s+=$2} END{printf "%.3f", s}'; }
ncpu() { awk '{print $14+$15}' /proc/$NODE/stat; }
m0=$(mem); c0=$(cpu); n0=$(ncpu); load=$(cut -d' ' -f1 /proc/loadavg)
$B/chronoq bench --server=http://127.0.0.1:$HP --no-progress --json --topic t1 produce --count=$N \
  --connections=$C 2>/dev/null >$R/p.json
c1=$(cpu); n1=$(ncpu); m1=$(mem)
tp=$(python3 -c "import json;print(round(json.load(open('$R/p.json'))['throughput']))")
python3 -c "print(f'sends/s $tp load $load redis_cpu_us/send {($c1-$c0)*1e6/$N:.1f} node_cpu_us/send {($n1-$n0)*1e4/$N:.1f} used_memory/msg {($m1-$m0)//$N}')"
redis-cli -p $P info commandstats | grep -v '^#' | tr -d '\r' |
  awk -F'[:,=]' -v n=$N '$0!="" && $3/n >= 0.01 {printf "  %s calls/send %.2f usec/send %.1f\n",$1,$3/n,$5/n}'
pre='cq:{bench:t1}:'
id=$(redis-cli -p $P --scan --pattern "${pre}r:*" | head -1)
echo "  record $(redis-cli -p $P type "$id"): $(redis-cli -p $P memory usage "$id" samples 0) bytes"
for k in p e; do
  echo "  ${k}: $(( $(redis-cli -p $P memory usage "${pre}$k" samples 0) / N )) bytes per message"
done
