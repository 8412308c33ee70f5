#!/usr/bin/env bash
# Instructions per sendMsg in the server (callgrind counts instructions, not time, so the figure
# repeats for the same binary and input whatever else the machine does; docs/benchmarks.md).
#
#   bench/callgrind-send.sh [BINARY] [STORAGE]      (defaults: build/chronoq, memory)
#
# Runs the server under callgrind with one HTTP thread, sends N1 then N1+N2 messages in two runs
# of `chronoq bench produce` (one connection, 100-byte payloads), and prints the instructions of
# the second run divided by N2, so that start-up and the first run's warm-up do not count.
set -euo pipefail
BIN=${1:-build/chronoq}
STORAGE=${2:-memory}
N1=${N1:-2000}
N2=${N2:-20000}
command -v valgrind >/dev/null || { echo "callgrind-send: valgrind is not installed" >&2; exit 2; }
work=$(mktemp -d)
trap 'kill $pid 2>/dev/null || true; rm -rf "$work"' EXIT

valgrind --tool=callgrind --callgrind-out-file="$work/cg.%p" "$BIN" serve --listen=127.0.0.1:0 \
  --storage="$STORAGE" --data-dir="$work/data" --http-threads=1 --log-level=warn \
  >"$work/out" 2>"$work/err" &
pid=$!
for _ in $(seq 1 600); do
  grep -q 'listening on' "$work/out" 2>/dev/null && break
  sleep 0.1
done
port=$(sed -n 's/.*listening on .*:\([0-9]*\)$/\1/p' "$work/out")
[ -n "$port" ] || { echo "callgrind-send: the server did not start" >&2; cat "$work/err" >&2; exit 1; }
server=http://127.0.0.1:$port

total() {  # instructions so far (callgrind_control dumps the running counts)
  callgrind_control -d "$pid" >/dev/null 2>&1
  sleep 0.5
  local sum=0
  for f in "$work"/cg.*; do
    v=$(sed -n 's/^summary: \([0-9]*\).*/\1/p;s/^totals: \([0-9]*\).*/\1/p' "$f" | head -1)
    sum=$((sum + ${v:-0}))
  done
  echo "$sum"
}

"$BIN" bench --server="$server" --no-progress produce --count="$N1" --connections=1 \
  --payload-bytes=100 >/dev/null 2>&1
a=$(total)
"$BIN" bench --server="$server" --no-progress produce --count="$N2" --connections=1 \
  --payload-bytes=100 >/dev/null 2>&1
b=$(total)
echo "instructions per send: $(((b - a) / N2)) ($STORAGE, $BIN, $N2 sends)"
