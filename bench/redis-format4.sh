#!/usr/bin/env bash
# Redis memory and CPU per message of redis-format 3 against layout 4 (docs/redis.md "Format 4",
# build step 4), through RedisBackend and the real scripts (bench/redis_format_bench.cc): a
# private redis-server without persistence on a fresh port, one run per format on an emptied
# keyspace, N sends of 100-byte payloads 1 hour ahead in batches of BATCH (17: about what the
# coalescer makes of 64 connections), then every message pulled in batches of 100 and acked.
# Prints per format: used_memory per waiting message, Redis CPU (INFO cpu) per send and per
# pull+ack, and the load average.
# CALLGRIND=1: redis-server runs under callgrind instead (one server per run; instructions, exact
# whatever the load): each format is run with N and 2N messages and the difference divided by N
# is printed, as instructions per send (the pulls and acks left out: no --life).
# Usage (from the repository root): bench/redis-format4.sh [BUILD_DIR=build] [N=20000] [BATCH=17]
# FORMATS="3 4" by default.
set -u
B=${1:-build}; N=${2:-20000}; BATCH=${3:-17}
P=${REDIS_PORT:-16520}
R=$(mktemp -d /tmp/cq-redis-format4.XXXXXX)
trap 'redis-cli -p $P shutdown nosave >/dev/null 2>&1; rm -rf $R' EXIT
start() {
  if [ -n "${CALLGRIND:-}" ]; then
    valgrind --tool=callgrind --callgrind-out-file=$R/cg.out redis-server --port $P --save '' \
      --appendonly no --dir $R >$R/redis.log 2>&1 &
    for _ in $(seq 100); do redis-cli -p $P ping >/dev/null 2>&1 && break; sleep 0.2; done
  else
    redis-server --port $P --save '' --appendonly no --dir $R --daemonize yes \
      --logfile $R/redis.log >/dev/null
    sleep 0.3
  fi
}
stop_ir() {  # shuts the callgrind server down, prints its instructions
  redis-cli -p $P shutdown nosave >/dev/null 2>&1
  for _ in $(seq 100); do [ -s $R/cg.out ] && grep -q '^summary' $R/cg.out && break; sleep 0.2; done
  awk '/^summary:/{print $2}' $R/cg.out; rm -f $R/cg.out
}
for f in ${FORMATS:-3 4}; do
  if [ -n "${CALLGRIND:-}" ]; then
    start; $B/bench/redis_format_bench --port=$P --format=$f --messages=$N --batch=$BATCH >/dev/null
    i1=$(stop_ir)
    start; $B/bench/redis_format_bench --port=$P --format=$f --messages=$((2 * N)) \
      --batch=$BATCH >/dev/null
    i2=$(stop_ir)
    echo "format $f batch $BATCH instructions/send $(( (i2 - i1) / N ))"
  else
    [ -z "$(redis-cli -p $P ping 2>/dev/null)" ] && start
    redis-cli -p $P flushall >/dev/null
    load=$(cut -d' ' -f1 /proc/loadavg)
    echo "$($B/bench/redis_format_bench --port=$P --format=$f --messages=$N --batch=$BATCH \
      --life) load $load"
  fi
done
