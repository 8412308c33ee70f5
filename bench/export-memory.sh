#!/usr/bin/env bash
# Constant client memory of `chronoq import` and `chronoq export` (issue 21): imports N messages
# (default 1,000,000) written as export lines into a fresh embedded server, exports them back, and
# prints each client's peak RSS (GNU time's "Maximum resident set size") with its wall time, and
# checks that the export has N lines. The client's peak must not grow with N: run it with
# N=100000 and N=1000000 and compare.
#
#   bench/export-memory.sh [N] [build/chronoq]
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
N=${1:-1000000}
BIN=${2:-build/chronoq}
DIR=$(mktemp -d /tmp/chronoq-export-bench-XXXXXX)
trap 'kill "$SERVER" 2>/dev/null || true; wait "$SERVER" 2>/dev/null || true; rm -rf "$DIR"' EXIT

"$BIN" serve --listen=127.0.0.1:0 --grpc-listen= --data-dir="$DIR/data" --log-level=warn \
  > "$DIR/out" 2> "$DIR/err" &
SERVER=$!
URL=http://127.0.0.1:$(cq_wait_listening "$DIR/out" "" "$DIR/err") || exit 1

python3 - "$N" > "$DIR/in.jsonl" <<'PY'
import sys, time
n = int(sys.argv[1]); now = int(time.time() * 1000)
out = sys.stdout
for i in range(n):
    t = now + 3_600_000 + i
    out.write('{"topic":"bench%d","msgId":"m%d","msg":"payload \\"%d\\" caf\\u00e9 %s",'
              '"produceTime":%d,"triggerTime":%d,"expireTime":%d,"maxRetry":3,"retry":0,'
              '"status":1}\n' % (i % 4, i, i, "x" * 40, now, t, t + 86_400_000))
PY

measure() {  # label, command...
  local label=$1; shift
  /usr/bin/time -f "%M %e" -o "$DIR/time" "$@" > "$DIR/stdout" 2> "$DIR/stderr" || {
    cat "$DIR/stderr" >&2; exit 1; }
  read -r rss secs < "$DIR/time"
  printf '%-7s %9d messages  peak client RSS %6.1f MiB  %6.1f s\n' "$label" "$N" \
    "$(echo "$rss / 1024" | bc -l)" "$secs"
}
measure import "$BIN" import --server="$URL" --in="$DIR/in.jsonl"
grep -q "imported $N, skipped 0" "$DIR/stdout" || { cat "$DIR/stdout" "$DIR/stderr"; exit 1; }
measure export "$BIN" export --server="$URL" --out="$DIR/exported.jsonl"
LINES=$(wc -l < "$DIR/exported.jsonl")
[ "$LINES" -eq "$N" ] || { echo "export wrote $LINES lines, expected $N" >&2; exit 1; }
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
