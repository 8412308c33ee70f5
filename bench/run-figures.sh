#!/usr/bin/env bash
# Reproduces the figures of docs/benchmarks.md: runs each workload RUNS times, each against a
# fresh server on this machine, and prints one JSON report per run (stdout) for
# bench/median.py. Usage: bench/run-figures.sh [workload ...]   (default: all five)
# Environment: BIN (default build/chronoq), RUNS (default 3), SERVER_FLAGS (extra serve flags).
set -euo pipefail
BIN=${BIN:-build/chronoq}
RUNS=${RUNS:-3}
PORT=${PORT:-18200}
URL=http://127.0.0.1:$PORT
WORKLOADS=${*:-produce e2e burst longpoll backlog}

run() {  # run <workload> <bench args...>
  local name=$1
  shift
  for i in $(seq 1 "$RUNS"); do
    # shellcheck disable=SC2086
    "$BIN" serve --listen=127.0.0.1:$PORT $SERVER_FLAGS >/dev/null 2>&1 &
    local pid=$!
    sleep 0.5
    "$BIN" bench --server=$URL --server-pid=$pid --no-progress --json "$@" 2>/dev/null || echo "{\"workload\":\"$name\",\"error\":true}"
    kill -TERM $pid
    wait $pid || true
  done
}

SERVER_FLAGS=${SERVER_FLAGS:-}
for w in $WORKLOADS; do
  case $w in
    produce) run produce produce --count=400000 --connections=64 --payload-bytes=100 ;;
    e2e) run e2e e2e --count=100000 --delay-min-ms=1000 --delay-max-ms=10000 --consumers=8 --batch=100 ;;
    burst) run burst burst --count=1000000 --consumers=8 --batch=100 ;;
    longpoll) run longpoll longpoll --parked=10000 --seconds=8 ;;
    backlog) run backlog backlog --count=1000000 --delay-ms=3600000 ;;
    *) echo "unknown workload $w" >&2; exit 2 ;;
  esac
done
