#!/usr/bin/env python3
"""Server CPU per send, alone and beside 10,000 long polls parked on one topic.

`chronoq bench longpoll` measures the cost of parked polls as lost throughput, which on a shared
host moves by ±20 % with the neighbours. The server's own CPU time per send (/proc/<pid>/stat)
does not: this script starts a server (flags: its arguments), sends 200,000 messages with
`chronoq bench produce` alone, then again beside 10,000 long polls it holds itself (one socket
each, topic `parked-empty`, 120 s timeout; the server's cq_http_long_polls_parked is checked),
ROUNDS times (default 2), and prints both figures per round.

Usage: BIN=build/chronoq bench/longpoll-cpu.py [serve flags, e.g. --storage=memory]
"""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

BIN = os.path.realpath(os.environ.get("BIN", "build/chronoq"))
ROUNDS = int(os.environ.get("ROUNDS", "2"))
PARKED = 10_000
SENDS = 200_000


def main():
    work = tempfile.mkdtemp(prefix="cq-longpoll-cpu.")
    server = subprocess.Popen(
        [BIN, "serve", "--listen=127.0.0.1:0", "--data-dir=" + os.path.join(work, "data")] +
        sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    port = int(re.search(r":(\d+)$", server.stdout.readline().strip()).group(1))
    tick = os.sysconf("SC_CLK_TCK")

    def server_cpu():
        stat = open(f"/proc/{server.pid}/stat").read()
        fields = stat[stat.rindex(")") + 2:].split()
        return (int(fields[11]) + int(fields[12])) / tick  # utime + stime

    def produce(count):
        cpu0 = server_cpu()
        out = subprocess.run([BIN, "bench", f"--server=http://127.0.0.1:{port}", "--no-progress",
                              "--json", "produce", f"--count={count}", "--connections=64"],
                             capture_output=True, text=True, check=True).stdout
        report = json.loads(out)
        return (server_cpu() - cpu0) / report["sent_ok"] * 1e6, report["throughput"]

    def metric(name):
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: chronoq\r\nConnection: close\r\n\r\n")
        answer = b""
        while chunk := s.recv(65536):
            answer += chunk
        s.close()
        m = re.search(rf"^{name} (\S+)$".encode(), answer, re.M)
        return float(m.group(1)) if m else -1

    body = b"topic=parked-empty&longPollingTimeoutMillis=120000"
    request = (b"POST /camellia/delayQueue/longPollingMsg HTTP/1.1\r\nHost: chronoq\r\n"
               b"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: %d\r\n\r\n%s"
               % (len(body), body))
    try:
        produce(50_000)  # warm-up
        for round_ in range(ROUNDS):
            alone = produce(SENDS)
            polls = []
            for _ in range(PARKED):
                s = socket.create_connection(("127.0.0.1", port))
                s.sendall(request)
                polls.append(s)
            while metric("cq_http_long_polls_parked") < PARKED:
                time.sleep(0.1)
            beside = produce(SENDS)
            parked = metric("cq_http_long_polls_parked")
            for s in polls:
                s.close()
            while metric("cq_http_long_polls_parked") > 0:
                time.sleep(0.1)
            load = open("/proc/loadavg").read().split()[0]
            print(f"round {round_}: alone {alone[0]:.1f} CPU-us/send, {alone[1]:.0f} sends/s; "
                  f"beside {parked:.0f} parked {beside[0]:.1f} CPU-us/send, {beside[1]:.0f} "
                  f"sends/s; load average {load}", flush=True)
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
