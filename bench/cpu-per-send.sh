#!/usr/bin/env bash
# Server CPU per send of several chronoq builds, interleaved: for each connection count, ROUNDS x
# (each binary in turn), each run on a fresh server and data dir, `chronoq bench produce` (one
# message per request) from the first binary. Prints per run the sends/s, the server's CPU-us per
# send (utime + stime from /proc/PID/stat over the run, user and system apart) and its context
# switches per send (voluntary + involuntary, all threads), then the medians per binary. The load
# average is printed with every run: on a shared machine CPU per send is the comparable figure.
#
# With SYSCALLS=1 (needs perf and the permission to trace: root), each run also prints the
# server's system calls per send by kind, the failed reads among them (EAGAIN) and the wake-ups its
# threads caused (sched:sched_wakeup, the client's included), counted by `perf stat` over the run.
#
# Usage: bench/cpu-per-send.sh BIN_A [BIN_B ...]
# Environment: ROUNDS (3), CONNECTIONS ("16 64"), COUNT (200000), PAYLOAD (100), CQ_FLAGS (extra
# `serve` flags, e.g. --storage=memory), SYSCALLS (0).
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
[ $# -ge 1 ] || { echo "usage: bench/cpu-per-send.sh BIN_A [BIN_B ...]" >&2; exit 2; }
BINS=()
for b in "$@"; do BINS+=("$(realpath "$b")"); done
ROUNDS=${ROUNDS:-3}
CONNECTIONS=${CONNECTIONS:-16 64}
COUNT=${COUNT:-200000}
PAYLOAD=${PAYLOAD:-100}
CQ_FLAGS=${CQ_FLAGS:-}
SYSCALLS=${SYSCALLS:-0}
WORK=$(mktemp -d /tmp/cq-cpu.XXXXXX)
PID=
PERF_PID=
trap '[ -n "$PERF_PID" ] && kill -INT "$PERF_PID" 2>/dev/null; [ -n "$PID" ] && kill -TERM "$PID" 2>/dev/null; rm -rf "$WORK"' EXIT
EVENTS=sched:sched_wakeup
for call in sendto recvfrom epoll_wait epoll_ctl futex write writev read; do
  EVENTS+=,syscalls:sys_enter_$call
done
# syscalls_per_send SENDS: the counts of the run's perf stat (CSV) divided by SENDS, one line.
syscalls_per_send() {
  python3 - "$WORK/perf" "$1" <<'PY'
import sys
n = int(sys.argv[2]); parts = []
for line in open(sys.argv[1]):
    f = line.strip().split(",")
    if len(f) < 3 or not f[0].replace(".", "").isdigit():
        continue
    name = f[2].replace("syscalls:sys_enter_", "").replace("sched:sched_", "")
    if "sys_exit_recvfrom" in name:
        name = "recvfrom-failed"
    parts.append(f"{name} {float(f[0]) / n:.3f}")
print("  per send: " + ", ".join(parts))
PY
}
HZ=$(getconf CLK_TCK)
for c in $CONNECTIONS; do
  for r in $(seq 1 "$ROUNDS"); do
    for b in "${BINS[@]}"; do
      # The last run's `out` goes too: the new server's shell truncates it only once it has
      # forked, and a wait that read the old line first took the old port (or none).
      rm -rf "$WORK/data" "$WORK/out"
      # shellcheck disable=SC2086
      "$b" serve --listen=127.0.0.1:0 --grpc-listen= --data-dir="$WORK/data" --log-level=warn \
        $CQ_FLAGS >"$WORK/out" 2>>"$WORK/err" &
      PID=$!
      port=$(cq_wait_listening "$WORK/out" "" "$WORK/err") || exit 1
      read -r u0 s0 < <(awk '{print $14, $15}' /proc/$PID/stat)
      x0=$(cq_switches $PID)
      if [ "$SYSCALLS" = 1 ]; then
        perf stat -x, -o "$WORK/perf" -e "$EVENTS" -e syscalls:sys_exit_recvfrom --filter 'ret < 0' \
          -p "$PID" &
        PERF_PID=$!
        sleep 0.3 # perf attaches to every thread before the first send
      fi
      out=$("${BINS[0]}" bench --server=http://127.0.0.1:"$port" --no-progress --json produce \
        --count="$COUNT" --connections="$c" --payload-bytes="$PAYLOAD" 2>/dev/null)
      read -r u1 s1 < <(awk '{print $14, $15}' /proc/$PID/stat)
      x1=$(cq_switches $PID)
      if [ -n "$PERF_PID" ]; then
        kill -INT "$PERF_PID"
        wait "$PERF_PID" 2>/dev/null || true
        PERF_PID=
      fi
      kill -TERM "$PID"
      wait "$PID" 2>/dev/null || true
      PID=
      python3 - "$out" "$b" "$c" "$r" "$((u1 - u0))" "$((s1 - s0))" "$((x1 - x0))" "$HZ" <<'PY' | tee -a "$WORK/runs"
import json, sys
d = json.loads(sys.argv[1]); b, c, r = sys.argv[2], int(sys.argv[3]), sys.argv[4]
u, s, x, hz = int(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7]), int(sys.argv[8])
n = d["sent_ok"]
load = open("/proc/loadavg").read().split()[0]
print(f"c={c} round {r} {b}: {d['throughput']:.0f} sends/s  CPU-us/send {(u + s) * 1e6 / hz / n:.1f} "
      f"(user {u * 1e6 / hz / n:.1f}, sys {s * 1e6 / hz / n:.1f})  switches/send {x / n:.2f}  load {load}")
PY
      if [ "$SYSCALLS" = 1 ]; then
        syscalls_per_send "$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["sent_ok"])' "$out")"
      fi
    done
  done
done
python3 - "$WORK/runs" <<'PY'
import re, statistics, sys
from collections import defaultdict
m = defaultdict(list)
for line in open(sys.argv[1]):
    g = re.match(r"c=(\d+) round \d+ (\S+): (\d+) sends/s  CPU-us/send ([\d.]+) \(user ([\d.]+), sys ([\d.]+)\)  switches/send ([\d.]+)", line)
    m[(int(g[1]), g[2])].append([float(v) for v in g.groups()[2:]])
for (c, b), rows in sorted(m.items()):
    med = [statistics.median(col) for col in zip(*rows)]
    print(f"median c={c} {b}: {med[0]:.0f} sends/s, CPU-us/send {med[1]:.1f} (user {med[2]:.1f}, "
          f"sys {med[3]:.1f}), switches/send {med[4]:.2f}  ({len(rows)} runs)")
PY
