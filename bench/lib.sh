# shellcheck shell=bash
# What the bench/*.sh scripts share (sourced: `. "$(dirname "$0")/lib.sh"`): finding a free port,
# waiting for a server to listen, and a process's CPU and context switches from /proc. Each
# function's failure message starts with the script's name ($0).

# A free loopback TCP port (the kernel's choice; free when asked, not reserved).
cq_free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# cq_wait_port PORT [SECONDS]: waits until 127.0.0.1:PORT accepts connections (SECONDS at most,
# default 10); exits the script with 1 when it never does.
cq_wait_port() {
  for _ in $(seq 1 $((${2:-10} * 20))); do
    if python3 -c "import socket; socket.create_connection(('127.0.0.1',$1),0.2)" 2>/dev/null; then
      return 0
    fi
    sleep 0.05
  done
  echo "$(basename "$0"): nothing listens on port $1" >&2
  exit 1
}

# cq_wait_listening OUT [WHAT] [ERR]: waits (60 s at most: a server under valgrind starts slowly)
# until the server whose stdout is the file OUT has printed "chronoq WHAT listening on
# HOST:PORT" (WHAT: empty for HTTP, "gRPC" for the gRPC listener), then prints PORT. Without the
# line: a message and the server's stderr file ERR (when given), and status 1 (use it as
# `port=$(cq_wait_listening ...) || exit 1`).
cq_wait_listening() {
  local out=$1 what=${2:+$2 } err=${3:-} port
  for _ in $(seq 1 1200); do
    grep -qs "^chronoq ${what}listening on" "$out" && break
    sleep 0.05
  done
  port=$(sed -n "s/^chronoq ${what}listening on .*:\([0-9]*\)$/\1/p" "$out")
  if [ -z "$port" ]; then
    echo "$(basename "$0"): the server did not start (no '${what}listening on' in $out)" >&2
    if [ -n "$err" ]; then cat "$err" >&2; fi
    return 1
  fi
  echo "$port"
}

# The CPU a process has used, in clock ticks (getconf CLK_TCK per second): utime + stime, and
# with cq_cpu_ticks3 also utime and stime apart ("total user system").
cq_cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
cq_cpu_ticks3() { awk '{print $14 + $15, $14, $15}' "/proc/$1/stat"; }

# Voluntary + involuntary context switches of all the threads of process $1.
cq_switches() {
  cat /proc/"$1"/task/*/status 2>/dev/null | awk '/ctxt_switches/ {s += $2} END {print s + 0}'
}
