#!/usr/bin/env bash
# Instructions per sendMsg in the server (callgrind counts instructions, not time, so the figure
# repeats for the same binary and input whatever else the machine does; docs/benchmarks.md).
#
#   bench/callgrind-send.sh [BINARY] [STORAGE]      (defaults: build/chronoq, memory)
#   BATCH=100 bench/callgrind-send.sh ...            (sendMsgBatch with 100 messages per request;
#                                                     the figures are then per message)
#   PAYLOAD=4096 bench/callgrind-send.sh ...         (payload bytes per message; default 100)
#   SERVE_FLAGS=--test-clock bench/callgrind-send.sh (extra serve flags; a frozen clock puts every
#                                                     send in the same millisecond)
#   CONNECTIONS=16 bench/callgrind-send.sh ...       (connections with a request in flight each;
#                                                     default 1: one message per group commit)
#   GRPC=grpc++ or GRPC=nghttp2 ...                 (gRPC Send on that grpc-engine instead of
#                                                     HTTP sendMsg; CALLS=N: calls in flight on
#                                                     each connection)
#   CACHESIM=1 ...                                  (also callgrind's cache and branch simulation:
#                                                     the busiest thread's events per send, I1mr
#                                                     and D1mr the L1 misses, Bcm and Bim the
#                                                     mispredicted conditional and indirect
#                                                     branches)
#   TOPIC=t SERVER_ARGS=--config=f.toml ...          (the topic of both runs, default "cg": a fresh
#                                                     random topic per run moved the figure by about
#                                                     4k with where it sorts; extra server flags:
#                                                     e.g. a [topics.t] table with history = true)
#
# Runs the server under callgrind with one HTTP thread, sends N1 then N2 messages in two runs of
# `chronoq bench produce` (one connection, 100-byte payloads), and prints the instructions of the
# second run divided by N2, so that start-up and the first run's warm-up do not count: in all
# threads, and in the busiest one (the HTTP worker, where a send on the memory store does all its
# work). Both vary by about +-2 % from run to run (how often a read finds the next request already
# there); compare medians of several interleaved runs.
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
BIN=${1:-build/chronoq}
STORAGE=${2:-memory}
N1=${N1:-2000}
N2=${N2:-20000}
command -v valgrind >/dev/null || { echo "callgrind-send: valgrind is not installed" >&2; exit 2; }
work=$(mktemp -d)
trap 'kill $pid 2>/dev/null || true; [ -n "${KEEP:-}" ] && cp "$work"/cg.* "$KEEP"/ 2>/dev/null; rm -rf "$work"' EXIT

valgrind --tool=callgrind ${CACHESIM:+--cache-sim=yes --branch-sim=yes} --separate-threads=yes --compress-strings=no --compress-pos=no --callgrind-out-file="$work/cg.%p" "$BIN" serve --listen=127.0.0.1:0 \
  --storage="$STORAGE" --data-dir="$work/data" --http-threads=1 --log-level=warn ${GRPC:+--grpc-engine=$GRPC} --grpc-listen=${GRPC:+127.0.0.1:0} ${SERVE_FLAGS:-} ${SERVER_ARGS:-} \
  >"$work/out" 2>"$work/err" &
pid=$!
port=$(cq_wait_listening "$work/out" "" "$work/err") || exit 1
server=http://127.0.0.1:$port
grpc=()
if [ -n "${GRPC:-}" ]; then
  grpc_port=$(cq_wait_listening "$work/out" gRPC "$work/err") || exit 1
  grpc=(--grpc="127.0.0.1:$grpc_port" --calls-per-connection="${CALLS:-1}")
fi

dump() {  # writes the counts since the last dump, one file per thread: cg.<pid>.<n>-<thread>
  callgrind_control -d "$pid" >/dev/null 2>&1
  sleep 0.5
}
counts_of() {  # the instructions of one thread's dump file
  sed -n 's/^summary: \([0-9]*\).*/\1/p;s/^totals: \([0-9]*\).*/\1/p' "$1" | head -1
}
counts() {  # the instructions of each thread in dump number $1
  for f in "$work"/cg.*."$1"-*; do counts_of "$f"; done
}

"$BIN" bench --server="$server" --no-progress --topic="${TOPIC:-cg}" produce --count="$N1" --connections="${CONNECTIONS:-1}" \
  --batch="${BATCH:-1}" --payload-bytes="${PAYLOAD:-100}" "${grpc[@]}" >/dev/null 2>&1
dump
"$BIN" bench --server="$server" --no-progress --topic="${TOPIC:-cg}" produce --count="$N2" --connections="${CONNECTIONS:-1}" \
  --batch="${BATCH:-1}" --payload-bytes="${PAYLOAD:-100}" "${grpc[@]}" >/dev/null 2>&1
dump
all=$(counts 2 | awk '{s += $1} END {printf "%.0f", s}')
busiest=$(counts 2 | sort -n | tail -1)
[ -n "${VERBOSE:-}" ] && counts 2 | awk -v n="$N2" '{printf "  thread: %d per send\n", $1 / n}'
if [ -n "${CACHESIM:-}" ]; then  # the busiest thread's dump: every event per send
  f=$(for g in "$work"/cg.*.2-*; do echo "$(counts_of "$g") $g"; done | sort -n | tail -1 | cut -d' ' -f2)
  sed -n 's/^events: //p' "$f" | head -1
  sed -n 's/^summary: //p;s/^totals: //p' "$f" | head -1 | awk -v n="$N2" '{for (i = 1; i <= NF; i++) printf "%.1f ", $i / n; print ""}'
fi
echo "instructions per send: $((all / N2)) in all threads, $((busiest / N2)) in the busiest" \
  "($STORAGE, ${GRPC:+gRPC $GRPC, }$BIN, $N2 sends)"
