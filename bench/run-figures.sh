#!/usr/bin/env bash
# Reproduces the figures of docs/benchmarks.md: runs each workload RUNS times, each against a
# fresh server (and a fresh, empty data dir) on this machine, and prints one JSON report per run
# (stdout) for bench/median.py. Usage: bench/run-figures.sh [workload ...]
# Workloads: produce e2e burst longpoll backlog (default: all five).
# Environment: BIN (default build/chronoq), RUNS (default 3), SERVER_FLAGS (extra serve flags,
# e.g. "--storage=memory" or "--sync-writes=true"), BACKLOG (messages, default 1000000).
set -euo pipefail
BIN=$(realpath "${BIN:-build/chronoq}")
RUNS=${RUNS:-3}
PORT=${PORT:-18200}
URL=http://127.0.0.1:$PORT
WORKLOADS=${*:-produce e2e burst longpoll backlog}
SERVER_FLAGS=${SERVER_FLAGS:-}
BACKLOG=${BACKLOG:-1000000}
WORK=$(mktemp -d /tmp/cq-figures.XXXXXX)
trap 'kill -TERM $(cat "$WORK/pid" 2>/dev/null) 2>/dev/null || true; rm -rf "$WORK"' EXIT

# The server command; restart.sh (used by the backlog workload) SIGKILLs it and starts it again
# on the same data dir.
cat >"$WORK/start.sh" <<EOS
"$BIN" serve --listen=127.0.0.1:$PORT --data-dir="$WORK/data" $SERVER_FLAGS >>"$WORK/server.log" 2>&1 &
echo \$! >"$WORK/pid"
EOS
cat >"$WORK/restart.sh" <<EOS
pid=\$(cat "$WORK/pid"); kill -KILL \$pid; while kill -0 \$pid 2>/dev/null; do sleep 0.01; done
. "$WORK/start.sh"
EOS

run() {  # run <workload> <bench args...>
  local name=$1
  shift
  for _ in $(seq 1 "$RUNS"); do
    rm -rf "$WORK/data"
    . "$WORK/start.sh"
    sleep 0.5
    "$BIN" bench --server=$URL --server-pid="$(cat "$WORK/pid")" --no-progress --json "$@" 2>/dev/null ||
      echo "{\"workload\":\"$name\",\"error\":true}"
    local pid
    pid=$(cat "$WORK/pid")
    kill -TERM "$pid"
    wait "$pid" 2>/dev/null || true  # our child unless the backlog workload restarted it
    while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
  done
}

for w in $WORKLOADS; do
  case $w in
    produce) run produce produce --count=400000 --connections=64 --payload-bytes=100 ;;
    e2e) run e2e e2e --count=100000 --delay-min-ms=1000 --delay-max-ms=10000 --consumers=8 --batch=100 ;;
    burst) run burst burst --count=1000000 --consumers=8 --batch=100 ;;
    longpoll) run longpoll longpoll --parked=10000 --seconds=8 ;;
    backlog) run backlog backlog --count="$BACKLOG" --delay-ms=3600000 --data-dir="$WORK/data" \
      --restart-cmd="bash $WORK/restart.sh" ;;
    *) echo "unknown workload $w" >&2; exit 2 ;;
  esac
done
