#!/usr/bin/env bash
# The Redis backend's figures of docs/benchmarks.md: a private redis-server (no persistence) on a
# free port, one node (produce, e2e), two nodes producing at once, two nodes e2e (E2E_RATES),
# and Redis memory per waiting message. Prints the bench tool's JSON reports. Run from the
# repository root.
#
# Every port is the kernel's choice (bench/lib.sh), never a fixed one: another session's
# redis-server or chronoq on a fixed port would be measured instead of ours. The nodes listen on
# port 0 and print theirs; redis-server gets a free port and is checked to be ours (its
# process_id) before anything runs.
#
# NODE_ARGS: more flags for every node (e.g. NODE_ARGS=--redis-format=4). MEMORY_ONLY=1: only the
# memory per waiting message.
set -u
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
R=$(mktemp -d /tmp/cq-redis-figures.XXXXXX)
RPID='' A='' B=''
cleanup() {
  [ -n "$A" ] && kill "$A" 2>/dev/null
  [ -n "$B" ] && kill "$B" 2>/dev/null
  [ -n "$RPID" ] && kill "$RPID" 2>/dev/null
  wait 2>/dev/null
  rm -rf "$R"
}
trap cleanup EXIT

RP=$(cq_free_port)
redis-server --port "$RP" --bind 127.0.0.1 --save '' --appendonly no --dir "$R" \
  --logfile "$R/redis.log" >/dev/null 2>&1 &
RPID=$!
cq_wait_port "$RP" 10
if [ "$(redis-cli -p "$RP" info server | sed -n 's/^process_id:\([0-9]*\).*/\1/p')" != "$RPID" ]; then
  echo "redis-figures: port $RP answers, but not our redis-server (pid $RPID)" >&2
  exit 1
fi
rcli() { redis-cli -p "$RP" "$@"; }
URL=redis://127.0.0.1:$RP

# start NAME: a node on a port of its own choice; sets NAME (its pid) and NAME_URL.
start() {
  build/chronoq serve --listen=127.0.0.1:0 --grpc-listen= --storage=redis --redis-url="$URL" \
    --namespace=bench ${NODE_ARGS:-} >"$R/$1.out" 2>"$R/$1.err" &
  eval "$1=$!"
  local port
  port=$(cq_wait_listening "$R/$1.out" "" "$R/$1.err") || exit 1
  eval "$1_URL=http://127.0.0.1:$port"
}
start A
if [ -z "${MEMORY_ONLY:-}" ]; then
  echo "== one node produce"; build/chronoq bench --server="$A_URL" --no-progress --json produce --count=200000 --connections=64 2>/dev/null
  echo "== one node e2e"; build/chronoq bench --server="$A_URL" --no-progress --json e2e --count="${E2E_COUNT:-5000}" --delay-min-ms=1000 --delay-max-ms=3000 --consumers=8 --batch=100 --rate="${E2E_RATE:-500}" 2>/dev/null
  rcli flushall >/dev/null
  start B
  echo "== two nodes produce (concurrently)"
  build/chronoq bench --server="$A_URL" --no-progress --json produce --count=100000 --connections=32 2>/dev/null >"$R/pa.json" &
  PA=$!
  build/chronoq bench --server="$B_URL" --no-progress --json produce --count=100000 --connections=32 2>/dev/null >"$R/pb.json"
  wait "$PA" 2>/dev/null; sleep 1
  cat "$R/pa.json"; cat "$R/pb.json"
  rcli flushall >/dev/null
  for rate in ${E2E_RATES:-500 2000 5000}; do
    echo "== two nodes e2e at $rate/s (sends through one node, consumers on the other)"
    build/chronoq bench --server="$A_URL" --no-progress --json e2e --count=$((rate * 4)) --delay-min-ms=1000 --delay-max-ms=3000 --consumers=8 --batch=100 --rate="$rate" --consume-server="$B_URL" 2>/dev/null
    rcli flushall >/dev/null
  done
fi
echo "== memory per waiting message"
m0=$(rcli info memory | grep '^used_memory:' | cut -d: -f2 | tr -d '\r')
build/chronoq bench --server="$A_URL" --no-progress --json backlog --count=200000 --delay-ms=3600000 2>/dev/null | python3 -c "import json,sys; d=json.load(sys.stdin); print('backlog sends/s', round(d['throughput']))"
m1=$(rcli info memory | grep '^used_memory:' | cut -d: -f2 | tr -d '\r')
echo "used_memory before $m0 after $m1 per msg $(( (m1-m0)/200000 ))"
