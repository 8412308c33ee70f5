#!/usr/bin/env python3
"""Runs the README's examples against a real server, so that they cannot rot.

Each ```sh block of the README sections named on the command line is pasted, top to bottom, into
one bash shell (variables and `export`s carry over), against a fresh `chronoq serve` of the build
under test (its own data directory, port 0; 127.0.0.1:8080 in the commands is replaced by its
address). The shell runs in a scratch directory where build/ is the build tree, so the README's
`export PATH=$PWD/build:$PATH` finds the binary as it would in a checkout.

What is checked, command by command:
- it exits 0, unless the README says `exit code N` in a comment on or after it;
- when it prints a JSON object with a "code", the code is 200, unless the README shows another
  code for it: the first comment after the command (on its line or the next ones) that holds
  `{"code":N` sets N (`# {"code":404,...}` under an ack that must fail).

Usage: readme_examples_test.py --binary build/chronoq --readme README.md --section "Using it"
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

MARK = "@@readme-example"
# As the C++ harness (tests/testutil/server_harness.h): a sanitizer report fails the test.
SANITIZER_MARKERS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer",
                     "WARNING: ThreadSanitizer", "runtime error:")


def blocks_of_section(readme, section):
    """The ```sh blocks between the heading `## <section>` and the next `## ` heading."""
    lines = readme.splitlines()
    try:
        start = lines.index("## " + section)
    except ValueError:
        sys.exit(f"README has no section '## {section}'")
    blocks, current = [], None
    for line in lines[start + 1:]:
        if line.startswith("## "):
            break
        if current is None and line.strip() == "```sh":
            current = []
        elif current is not None and line.strip() == "```":
            blocks.append(current)
            current = None
        elif current is not None:
            current.append(line)
    if not blocks:
        sys.exit(f"README section '## {section}' has no ```sh block")
    return blocks


def split_comment(line):
    """(command, comment) of a shell line: the comment starts at a `#` outside quotes."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1] in " \t"):
            return line[:i].rstrip(), line[i + 1:].strip()
    return line.rstrip(), ""


def commands_of(block):
    """[(command, [comments after it])]: continuation lines joined, comment lines attached to the
    command before them."""
    out, pending = [], ""
    for raw in block:
        line = pending + raw
        if line.rstrip().endswith("\\"):
            pending = line.rstrip()[:-1] + " "
            continue
        pending = ""
        command, comment = split_comment(line)
        if command.strip():
            out.append((command.strip(), [comment] if comment else []))
        elif comment and out:
            out[-1][1].append(comment)
    return out


def expectations(comments):
    code, exit_code = 200, 0
    for c in comments:
        m = re.search(r'\{"code":(\d+)', c)
        if m:
            code = int(m.group(1))
            break
    for c in comments:
        m = re.search(r"exit code (\d+)", c)
        if m:
            exit_code = int(m.group(1))
    return code, exit_code


def start_server(binary, work):
    proc = subprocess.Popen(
        [binary, "serve", "--listen=127.0.0.1:0", "--grpc-listen=",
         "--data-dir=" + os.path.join(work, "data"),
         "--log-level=warn"],
        stdout=subprocess.PIPE, stderr=open(os.path.join(work, "server.log"), "w"), text=True)
    line = proc.stdout.readline()
    m = re.match(r"chronoq listening on 127\.0\.0\.1:(\d+)$", line.strip())
    if not m:
        proc.kill()
        sys.exit(f"the server did not start: {line!r}\n" +
                 open(os.path.join(work, "server.log")).read())
    return proc, int(m.group(1))


def run_section(binary, readme, section, verbose):
    failures = []
    for block in blocks_of_section(readme, section):
        commands = commands_of(block)
        work = tempfile.mkdtemp(prefix="chronoq-readme-")
        server = None
        try:
            os.symlink(os.path.dirname(os.path.abspath(binary)), os.path.join(work, "build"))
            server, port = start_server(binary, work)
            script = []
            for i, (command, _) in enumerate(commands):
                command = command.replace("127.0.0.1:8080", f"127.0.0.1:{port}")
                script.append(f"echo '{MARK} {i}'\n{command}\nrc=$?; echo; echo '{MARK} exit' $rc")
            env = {k: v for k, v in os.environ.items() if not k.startswith("CHRONOQ_")}
            env["PATH"] = "/usr/bin:/bin"  # chronoq comes from the README's own PATH line
            done = subprocess.run(["bash", "-c", "\n".join(script)], cwd=work, env=env,
                                  stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                  timeout=120)
            outputs = re.split(rf"^{MARK} (\d+)$", done.stdout, flags=re.M)[1:]
            ran = {int(outputs[j]): outputs[j + 1] for j in range(0, len(outputs), 2)}
            for i, (command, comments) in enumerate(commands):
                want_code, want_exit = expectations(comments)
                if i not in ran:
                    failures.append(f"[{section}] never ran: {command}\n{done.stderr}")
                    continue
                m = re.search(rf"^{MARK} exit (\d+)$", ran[i], flags=re.M)
                output = ran[i][:m.start()].strip() if m else ran[i]
                exit_code = int(m.group(1)) if m else -1
                if verbose:
                    print(f"$ {command}\n{output}\n  (exit {exit_code})")
                if exit_code != want_exit:
                    failures.append(f"[{section}] exit code {exit_code}, README expects "
                                    f"{want_exit}: {command}\n  output: {output[:400]}")
                try:
                    answer = json.loads(output)
                except ValueError:
                    continue  # not a JSON answer (Prometheus text, the CLI's tables)
                if isinstance(answer, dict) and "code" in answer and answer["code"] != want_code:
                    failures.append(f"[{section}] code {answer['code']}, README expects "
                                    f"{want_code}: {command}\n  answer: {output[:400]}")
            print(f"[{section}] {len(commands)} commands run")
            server.terminate()
            rc = server.wait(timeout=10)
            server = None
            if rc != 0:
                failures.append(f"[{section}] the server exited {rc} after SIGTERM")
            logs = done.stderr + open(os.path.join(work, "server.log")).read()
            for marker in SANITIZER_MARKERS:
                if marker in logs:
                    at = logs.index(marker)
                    failures.append(f"[{section}] a sanitizer report:\n{logs[at:at + 4000]}")
                    break
        finally:
            if server is not None:
                server.kill()
                server.wait()
            shutil.rmtree(work, ignore_errors=True)
    return failures


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--readme", required=True)
    ap.add_argument("--section", action="append", required=True)
    ap.add_argument("--verbose", action="store_true", help="print every command and its output")
    args = ap.parse_args()
    readme = open(args.readme, encoding="utf-8").read()
    failures = []
    for section in args.section:
        failures += run_section(args.binary, readme, section, args.verbose)
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
