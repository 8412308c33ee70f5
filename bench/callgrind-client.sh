#!/usr/bin/env bash
# Instructions per call in the bench's own clients (docs/benchmarks.md, "One call per connection
# (session of 2026-11-26 night)"): callgrind on `chronoq bench produce` over one connection,
# 10,000 then 30,000 sends against a memory server run outside valgrind; the difference divided by
# 20,000, so that start-up does not count. HTTP sendMsg, then gRPC Send (nghttp2 engine) on the
# bench's h2 client, one call per connection at a time.
#   bench/callgrind-client.sh [BINARY] [SERVER_BINARY]   (defaults: build/chronoq, the same)
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
BIN=${1:-build/chronoq}
SRV=${2:-$BIN}
command -v valgrind >/dev/null || { echo "callgrind-client: valgrind is not installed" >&2; exit 2; }
work=$(mktemp -d)
"$SRV" serve --storage=memory --listen=127.0.0.1:0 --grpc-listen=127.0.0.1:0 --log-level=warn \
  --grpc-engine=nghttp2 >"$work/out" 2>"$work/err" &
pid=$!
trap 'kill $pid 2>/dev/null || true; rm -rf "$work"' EXIT
http=$(cq_wait_listening "$work/out" "" "$work/err") || exit 1
grpc=$(cq_wait_listening "$work/out" gRPC "$work/err") || exit 1
total() { sed -n 's/^summary: \([0-9]*\).*/\1/p;s/^totals: \([0-9]*\).*/\1/p' "$1" | head -1; }
for mode in http grpc; do
  args=()
  [ "$mode" = grpc ] && args=(--grpc="127.0.0.1:$grpc" --grpc-client=h2 --calls-per-connection=1)
  for n in 10000 30000; do
    valgrind --tool=callgrind --callgrind-out-file="$work/cg.$mode.$n" "$BIN" bench \
      --server="http://127.0.0.1:$http" --no-progress produce --count="$n" --connections=1 \
      "${args[@]}" >/dev/null 2>&1
  done
  echo "$mode client instructions per call: $((($(total "$work/cg.$mode.30000") - \
    $(total "$work/cg.$mode.10000")) / 20000))"
done
