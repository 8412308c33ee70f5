#!/usr/bin/env bash
# gRPC Send (the server's default engine, h2, the bench's h2 client, $PER_CONN calls in flight per connection,
# default 1) against HTTP sendMsg on the same connections, with one or more binaries interleaved
# round by round (docs/benchmarks.md, "One call per connection (session of 2026-11-26 night)").
# Each binary runs its own memory-storage server and is its own client. Per run: the server's
# CPU-µs per send (utime + stime of /proc/<pid>/stat, clock ticks of 10 ms), sends/s, and the
# client's CPU-µs per send; at the end, per binary, the medians and gRPC's ratio of medians.
# ENGINES (default h2): the gRPC engines, each binary serving with each of them in a server of
# its own, interleaved too (ENGINES="h2 nghttp2": docs/grpc.md, "HTTP/2 framing of our own");
# with more than one, each run is named BINARY@ENGINE.
# Usage: bench/grpc-vs-http.sh [rounds] [count] [connections] BINARY...
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
ROUNDS=${1:-6}
COUNT=${2:-40000}
CONNS=${3:-16}
shift 3
[ $# -gt 0 ] || { echo "usage: $0 rounds count connections BINARY..." >&2; exit 2; }
DIR=$(mktemp -d)
PIDS=()
trap 'kill "${PIDS[@]}" 2>/dev/null; rm -rf "$DIR"' EXIT
read -ra ENGS <<<"${ENGINES:-h2}"
declare -A PID HP GP BIN
KEYS=()
for b in "$@"; do
  for e in "${ENGS[@]}"; do
    k=$b
    [ "${#ENGS[@]}" -eq 1 ] || k="$b@$e"
    KEYS+=("$k")
    BIN[$k]=$b
    d=$(mktemp -d -p "$DIR")
    "$b" serve --storage=memory --listen=127.0.0.1:0 --grpc-listen=127.0.0.1:0 --log-level=warn \
      --grpc-engine="$e" >"$d/out" 2>"$d/err" &
    PID[$k]=$!
    PIDS+=("$!")
    HP[$k]=$(cq_wait_listening "$d/out" "" "$d/err") || exit 1
    GP[$k]=$(cq_wait_listening "$d/out" gRPC "$d/err") || exit 1
  done
done
run() {  # key label [produce options...]
  local b=$1 label=$2 a z out
  shift 2
  a=$(cq_cpu_ticks3 "${PID[$b]}")
  out=$("${BIN[$b]}" bench --server="http://127.0.0.1:${HP[$b]}" produce --count="$COUNT" \
    --connections="$CONNS" "$@" 2>&1)
  z=$(cq_cpu_ticks3 "${PID[$b]}")
  read -r a _ <<<"$a"
  read -r z _ <<<"$z"
  printf '%-5s %s cpu_us %5.1f sends/s %8.0f client_us %5.2f\n' "$label" "$b" \
    "$(echo "($z-$a)*10000/$COUNT" | bc -l)" "$(echo "$out" | awk '/throughput/{print $2}')" \
    "$(echo "$out" | awk '/client_cpu_us_per_send/{print $2}')" | tee -a "$DIR/runs"
}
for r in $(seq "$ROUNDS"); do
  echo "round $r, load $(cut -d' ' -f1-3 /proc/loadavg)"
  for b in "${KEYS[@]}"; do
    run "$b" http
    run "$b" grpc --grpc="127.0.0.1:${GP[$b]}" --grpc-client=h2 \
      --calls-per-connection="${PER_CONN:-1}"
  done
done
awk '{k = $2 " " $1; cpu[k] = cpu[k] " " $4; sps[k] = sps[k] " " $6; cl[k] = cl[k] " " $8}
function med(s, a, n, i, j, t) {
  n = split(s, a, " ")
  for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) {t = a[i]; a[i] = a[j]; a[j] = t}
  return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
END {
  for (k in cpu) printf "%s: median server cpu_us %.1f, sends/s %.0f, client cpu_us %.2f\n", k, med(cpu[k]), med(sps[k]), med(cl[k])
  for (k in cpu) if (k ~ / grpc$/) {
    h = k; sub(/ grpc$/, " http", h)
    printf "%s: gRPC/HTTP sends/s %.2f, server cpu_us %.2f (ratios of medians)\n", substr(k, 1, length(k) - 5), med(sps[k]) / med(sps[h]), med(cpu[k]) / med(cpu[h])
  }
}' "$DIR/runs" | sort
