#!/usr/bin/env bash
# `make run` builds the chronoq target only (README "The two commands"); `make test` builds all.
# Reads what make would run (make -n), so nothing is built or started.
set -euo pipefail
src=$1
fail() { echo "FAIL: $*" >&2; exit 1; }
run=$(make -s -n -C "$src" run BUILD=build-make-run-check)
builds=$(grep -E '^cmake --build ' <<<"$run") || fail "make run builds nothing: $run"
[ "$(wc -l <<<"$builds")" -eq 1 ] || fail "make run builds more than once: $builds"
grep -qE -- '--target chronoq( |$)' <<<"$builds" || fail "make run builds more than chronoq: $builds"
grep -qE '/chronoq serve' <<<"$run" || fail "make run does not start the server: $run"
test=$(make -s -n -C "$src" test BUILD=build-make-run-check)
grep -E '^cmake --build build-make-run-check$' <<<"$test" >/dev/null ||
  fail "make test does not build everything: $test"
echo "make run builds only chronoq: ok"
