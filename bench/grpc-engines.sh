#!/usr/bin/env bash
# Server CPU per send of HTTP sendMsg, gRPC Send on gRPC's C++ server (grpc-engine=grpc++) and gRPC
# Send on the experimental nghttp2 engine (grpc-engine=nghttp2), one message per call, runs
# interleaved on two identical memory-storage servers (docs/benchmarks.md, gRPC "Third look" and
# "The bench's own gRPC client"), with each of the bench's gRPC clients in $CLIENTS (default
# "h2 grpcpp": its own HTTP/2 client, gRPC's C++ client) and calls per connection in $PER_CONN
# (default "1 4 16").
# Server CPU is utime + stime of /proc/<pid>/stat around each run (clock ticks of 10 ms); the
# client's is the bench's own client_cpu_us_per_send.
# Usage: bench/grpc-engines.sh [build/chronoq] [rounds] [count] [connections]
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
BIN=${1:-build/chronoq}
ROUNDS=${2:-3}
COUNT=${3:-40000}
CONNS=${4:-16}
CLIENTS=${CLIENTS:-h2 grpcpp}
PER_CONN=${PER_CONN:-1 4 16}
DIR=$(mktemp -d)
trap 'kill $PA $PB 2>/dev/null; rm -rf "$DIR"' EXIT
"$BIN" serve --storage=memory --listen=127.0.0.1:0 --grpc-listen=127.0.0.1:0 --log-level=warn \
  >"$DIR/a.out" 2>"$DIR/a.err" &
PA=$!
"$BIN" serve --storage=memory --listen=127.0.0.1:0 --grpc-listen=127.0.0.1:0 --log-level=warn \
  --grpc-engine=nghttp2 >"$DIR/b.out" 2>"$DIR/b.err" &
PB=$!
HA=$(cq_wait_listening "$DIR/a.out" "" "$DIR/a.err") || exit 1
GA=$(cq_wait_listening "$DIR/a.out" gRPC "$DIR/a.err") || exit 1
GB=$(cq_wait_listening "$DIR/b.out" gRPC "$DIR/b.err") || exit 1
run() {  # label pid [produce options...]
  local label=$1 pid=$2; shift 2
  local a b out
  a=$(cq_cpu_ticks3 "$pid")
  local sa sb
  sa=$(cq_switches "$pid")
  out=$("$BIN" bench --server="http://127.0.0.1:$HA" produce --count="$COUNT" \
    --connections="$CONNS" "$@" 2>&1)
  b=$(cq_cpu_ticks3 "$pid")
  sb=$(cq_switches "$pid")
  read -r a au as <<<"$a"
  read -r b bu bs <<<"$b"
  printf '%-34s cpu_us_per_send %5.1f (user %5.1f, sys %5.1f) cs/send %4.2f %s  %s  %s\n' "$label" \
    "$(echo "($b-$a)*10000/$COUNT" | bc -l)" "$(echo "($bu-$au)*10000/$COUNT" | bc -l)" \
    "$(echo "($bs-$as)*10000/$COUNT" | bc -l)" "$(echo "($sb-$sa)/$COUNT" | bc -l)" \
    "$(echo "$out" | awk '/throughput/{print $2, $3}')" \
    "$(echo "$out" | awk '/client_cpu_percent/{print "client", $2, "%"}')" \
    "$(echo "$out" | awk '/client_cpu_us_per_send/{print "client_us/send", $2}')"
}
for r in $(seq "$ROUNDS"); do
  echo "round $r, load $(cut -d' ' -f1-3 /proc/loadavg)"
  for cl in $CLIENTS; do
    run "http sendMsg" "$PA"
    for k in $PER_CONN; do
      run "grpc++ Send, $cl, $k per conn" "$PA" --grpc="127.0.0.1:$GA" --grpc-client="$cl" \
        --calls-per-connection="$k"
      run "nghttp2 Send, $cl, $k per conn" "$PB" --grpc="127.0.0.1:$GB" --grpc-client="$cl" \
        --calls-per-connection="$k"
    done
  done
done
