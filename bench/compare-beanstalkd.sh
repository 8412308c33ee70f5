#!/usr/bin/env bash
# chronoq (embedded store) side by side with beanstalkd (with its binlog), one load generator
# (`chronoq bench`, same connections, payloads and one message per request), interleaved rounds:
# for each connection count, ROUNDS x (chronoq, beanstalkd), each run on a fresh server and a fresh
# data dir, on free loopback ports. Prints each run's sends/s and the server's CPU-us per send
# (utime + stime from /proc/PID/stat over the run, and user and system apart), then per
# connection count the median sends/s of each server and the ratio chronoq / beanstalkd.
#
# Installs nothing: needs beanstalkd on PATH (Debian: `apt-get install beanstalkd`; a bench-only
# package, not in scripts/install-deps.sh). The package's systemd service is not used.
#
# Usage: bench/compare-beanstalkd.sh
# Environment: BIN (default build/chronoq), ROUNDS (3), CONNECTIONS ("16 64"), COUNT (200000
# sends per run), PAYLOAD (100 bytes), CQ_FLAGS (extra `serve` flags), BS_FLAGS (extra beanstalkd
# flags), E2E=1 also runs the e2e workload (COUNT_E2E messages at RATE msgs/s, delays 1-10 s, 8
# consumers) once per round against each and prints the lateness.
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
BIN=$(realpath "${BIN:-build/chronoq}")
ROUNDS=${ROUNDS:-3}
CONNECTIONS=${CONNECTIONS:-16 64}
COUNT=${COUNT:-200000}
PAYLOAD=${PAYLOAD:-100}
CQ_FLAGS=${CQ_FLAGS:-}
BS_FLAGS=${BS_FLAGS:-}
E2E=${E2E:-0}
COUNT_E2E=${COUNT_E2E:-20000}
RATE=${RATE:-2000}
if ! command -v beanstalkd >/dev/null; then
  echo "compare-beanstalkd: beanstalkd is not installed (Debian: apt-get install beanstalkd)" >&2
  exit 2
fi
WORK=$(mktemp -d /tmp/cq-vs-bs.XXXXXX)
SERVER_PID=
stop_server() {
  if [ -n "$SERVER_PID" ]; then
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=
  fi
}
trap 'stop_server; rm -rf "$WORK"' EXIT

# start <chronoq|beanstalkd>: a fresh server on a free port; sets SERVER_PID and TARGET (the bench
# flags that aim at it).
start() {
  local port
  port=$(cq_free_port)
  rm -rf "$WORK/data"
  mkdir -p "$WORK/data"
  if [ "$1" = chronoq ]; then
    # shellcheck disable=SC2086
    "$BIN" serve --listen=127.0.0.1:"$port" --grpc-listen= --data-dir="$WORK/data" --log-level=warn $CQ_FLAGS \
      >>"$WORK/chronoq.log" 2>&1 &
    SERVER_PID=$!
    TARGET=(--server=http://127.0.0.1:"$port")
  else
    # shellcheck disable=SC2086
    beanstalkd -l 127.0.0.1 -p "$port" -b "$WORK/data" $BS_FLAGS >>"$WORK/beanstalkd.log" 2>&1 &
    SERVER_PID=$!
    TARGET=(--beanstalkd=127.0.0.1:"$port")
  fi
  cq_wait_port "$port"
}

# bench <server> <workload> <args...>: one run; prints the report's JSON with the server's CPU.
bench() {
  local server=$1 workload=$2
  shift 2
  start "$server"
  local t0 t1 u0 u1 s0 s1 out
  read -r t0 u0 s0 < <(cq_cpu_ticks3 "$SERVER_PID")
  if [ "$server" = chronoq ]; then
    out=$("$BIN" bench "${TARGET[@]}" --no-progress --json "$workload" "$@" 2>/dev/null)
  else
    out=$("$BIN" bench --no-progress --json "$workload" "${TARGET[@]}" "$@" 2>/dev/null)
  fi
  read -r t1 u1 s1 < <(cq_cpu_ticks3 "$SERVER_PID")
  stop_server
  python3 - "$server" "$out" "$((t1 - t0))" "$(getconf CLK_TCK)" "$((u1 - u0))" "$((s1 - s0))" <<'EOF'
import json, sys
server, out, ticks, hz = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
user, system = int(sys.argv[5]), int(sys.argv[6])
sent = out.get("sent_ok", 0)
out["server"] = server
out["server_cpu_us_per_send"] = ticks * 1e6 / hz / sent if sent else None
out["server_user_us_per_send"] = user * 1e6 / hz / sent if sent else None
out["server_system_us_per_send"] = system * 1e6 / hz / sent if sent else None
print(json.dumps(out))
EOF
}

# show <report JSON> <round>: one line per run.
cat >"$WORK/show.py" <<'EOF'
import json, sys
d = json.loads(sys.argv[1])
load = open("/proc/loadavg").read().split()[0]
if d["workload"] == "produce":
    print("produce c=%-3d round %s %-10s %9.0f sends/s  p99 %.2f ms  server %.1f CPU-us/send "
          "(user %.1f, sys %.1f)  load %s"
          % (d["connections"], sys.argv[2], d["server"], d["throughput"],
             d["send_latency"]["p99_us"] / 1000, d["server_cpu_us_per_send"],
             d["server_user_us_per_send"], d["server_system_us_per_send"], load))
else:
    l = d["lateness"]
    print("e2e %.0f/s round %s %-10s delivered %d missing %d duplicates %d  lateness p50 %.2f "
          "p99 %.2f max %.2f ms  load %s"
          % (d["send_rate_target"], sys.argv[2], d["server"], d["delivered"], d["missing"],
             d["duplicates"], l["p50_us"] / 1000, l["p99_us"] / 1000, l["max_us"] / 1000, load))
EOF
show() { python3 "$WORK/show.py" "$@"; }

RESULTS=$WORK/results.jsonl
echo "# $(date -u +%FT%TZ) load average: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for c in $CONNECTIONS; do
  for r in $(seq 1 "$ROUNDS"); do
    for s in chronoq beanstalkd; do
      line=$(bench "$s" produce --count="$COUNT" --connections="$c" --payload-bytes="$PAYLOAD")
      echo "$line" >>"$RESULTS"
      show "$line" "$r"
    done
  done
done
if [ "$E2E" = 1 ]; then
  for r in $(seq 1 "$ROUNDS"); do
    for s in chronoq beanstalkd; do
      line=$(bench "$s" e2e --count="$COUNT_E2E" --rate="$RATE" --delay-min-ms=1000 \
        --delay-max-ms=10000 --consumers=8 --payload-bytes="$PAYLOAD")
      echo "$line" >>"$RESULTS"
      show "$line" "$r"
    done
  done
fi
python3 - "$RESULTS" <<'EOF'
import json, statistics, sys
from collections import defaultdict
runs = defaultdict(list)
cpu = defaultdict(list)
late = defaultdict(list)
for line in open(sys.argv[1]):
    d = json.loads(line)
    if d["workload"] != "produce":
        late[d["server"]].append(d["lateness"])
        continue
    runs[(d["connections"], d["server"])].append(d["throughput"])
    cpu[(d["connections"], d["server"])].append(d["server_cpu_us_per_send"])
for c in sorted({k[0] for k in runs}):
    cq = statistics.median(runs[(c, "chronoq")])
    bs = statistics.median(runs[(c, "beanstalkd")])
    print(f"connections {c}: chronoq {cq:.0f} sends/s ({statistics.median(cpu[(c, 'chronoq')]):.1f} "
          f"CPU-us/send), beanstalkd {bs:.0f} ({statistics.median(cpu[(c, 'beanstalkd')]):.1f}), "
          f"ratio {cq / bs:.2f}  (median of {len(runs[(c, 'chronoq')])})")
for server, ls in late.items():
    med = {k: statistics.median(l[k] for l in ls) / 1000 for k in ("p50_us", "p99_us", "max_us")}
    print(f"e2e {server}: lateness p50 {med['p50_us']:.2f} ms, p99 {med['p99_us']:.2f} ms, "
          f"max {med['max_us']:.2f} ms (median of {len(ls)})")
EOF
echo "# $(date -u +%FT%TZ) load average: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
