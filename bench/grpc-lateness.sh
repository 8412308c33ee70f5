#!/usr/bin/env bash
# Consume lateness (docs/benchmarks.md, gRPC "The bench's own gRPC client"): e2e through Consume
# streams with each of the bench's gRPC clients ($CLIENTS, default "h2 grpcpp") and through HTTP
# long polls, runs interleaved on one memory-storage server (its gRPC engine: $ENGINE, default
# h2, the server's), $ROUNDS rounds (default 3); 10,000 messages at 2,000 msgs/s due in 1-3 s,
# 8 consumers of credit (batch) 100. Prefix with `chrt -f 5` to take the host's waiting out (root).
# $SERVER_BIN: the server's binary (default: the bench's).
# Usage: bench/grpc-lateness.sh [build/chronoq] [rounds]
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
BIN=${1:-build/chronoq}
ROUNDS=${2:-3}
CLIENTS=${CLIENTS:-h2 grpcpp}
ENGINE=${ENGINE:-h2}
SERVER_BIN=${SERVER_BIN:-$BIN}
DIR=$(mktemp -d)
trap 'kill $PS 2>/dev/null; rm -rf "$DIR"' EXIT
"$SERVER_BIN" serve --storage=memory --listen=127.0.0.1:0 --grpc-listen=127.0.0.1:0 --log-level=warn \
  --grpc-engine="$ENGINE" >"$DIR/s.out" 2>"$DIR/s.err" &
PS=$!
H=$(cq_wait_listening "$DIR/s.out" "" "$DIR/s.err") || exit 1
G=$(cq_wait_listening "$DIR/s.out" gRPC "$DIR/s.err") || exit 1
run() {  # label [e2e options...]
  local label=$1 out; shift
  out=$("$BIN" bench --no-progress --server="http://127.0.0.1:$H" e2e --count=10000 --rate=2000 \
    --delay-min-ms=1000 --delay-max-ms=3000 "$@" 2>&1)
  printf '%-22s load %s  %s  delivered %s  %s\n' "$label" "$(cut -d' ' -f1 /proc/loadavg)" \
    "$(echo "$out" | awk '/^  lateness/{$1=""; print}')" \
    "$(echo "$out" | awk '/^  delivered/{print $2}')" \
    "$(echo "$out" | awk '/client_cpu_percent/{print "client", $2, "%"}')"
}
for r in $(seq "$ROUNDS"); do
  echo "round $r"
  for cl in $CLIENTS; do run "Consume, $cl" --grpc="127.0.0.1:$G" --grpc-client="$cl"; done
  run "HTTP long polls"
done
