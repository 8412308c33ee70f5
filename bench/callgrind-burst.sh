#!/usr/bin/env bash
# Instructions per drained message of a burst in the server (callgrind counts instructions, not
# time, so the figure repeats for the same binary whatever else the machine does, up to the size
# of the groups the threads happen to form; docs/benchmarks.md, "Third session: bursts").
#
#   bench/callgrind-burst.sh [BINARY] [COUNT] [LEAD_MS]   (defaults: build/chronoq, 10000, 40000)
#
# Runs `chronoq serve` (embedded store, fresh data dir) under callgrind with instrumentation off,
# sends COUNT messages due in one second LEAD_MS after the start (`chronoq bench burst`, 8
# long-polling consumers, acks by ackMsgBatch of up to 100), switches instrumentation on one
# second before the due second (LEAD_MS must leave time for every send under callgrind: check
# that sends_after_due_time is 0) and off once every message is drained and acked, then prints
# each server thread's instructions and the total, per drained message.
set -uo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
BIN=${1:-build/chronoq}
COUNT=${2:-10000}
LEAD=${3:-40000}
PORT=${PORT:-$(cq_free_port)}  # a fixed port could be another run's server
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
valgrind --tool=callgrind --instr-atstart=no --separate-threads=yes \
  --callgrind-out-file="$DIR/cg.%p.out" \
  "$BIN" serve --listen=127.0.0.1:$PORT --grpc-listen= --data-dir="$DIR/data" \
  --idle-timeout-millis=900000 >"$DIR/server.log" 2>&1 &
SPID=$!
cq_wait_port "$PORT" 60
"$BIN" bench --no-progress --server="http://127.0.0.1:$PORT" burst --count="$COUNT" \
  --ack-batch=100 --lead-ms="$LEAD" --grace-ms=120000 >"$DIR/bench.out" 2>&1 &
BPID=$!
sleep "$(echo "$LEAD/1000 - 1" | bc)"
callgrind_control -i on $SPID >/dev/null
wait $BPID
callgrind_control -i off $SPID >/dev/null
kill $SPID
wait $SPID 2>/dev/null || true
sleep 3  # the thread files are written as the process exits
grep -E 'missing|duplicates|sends_after_due_time|acked ' "$DIR/bench.out"
total=0
for f in "$DIR"/cg.$SPID.out-*; do
  ir=$(grep -m1 '^totals:' "$f" | awk '{print $2}')
  if [ -z "$ir" ] || [ "$ir" -lt $((COUNT * 100)) ]; then continue; fi  # idle threads
  top=$(callgrind_annotate --inclusive=yes "$f" 2>/dev/null)
  fn=other
  for role in CommitterLoop CompleterLoop HttpServer; do
    if grep -q "$role" <<<"$top"; then fn=$role; break; fi
  done
  echo "thread ${f##*-} ($fn): $((ir / COUNT)) instructions per drained message"
  total=$((total + ir))
done
echo "all threads: $((total / COUNT)) instructions per drained message"
