#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, docs/fuzzing.md) with clang-14, ASan and UBSan in their own
# build tree, replays the saved crash inputs (fuzz/regressions/<target>/), then runs each target
# for a while on its seed corpus (fuzz/corpus/<target>/; new inputs go to a temporary directory,
# the repository is not written). Exits non-zero when any target crashes.
#
# Usage: scripts/fuzz.sh [seconds-per-target] [target ...]   (default: 20 s; every target)
# Environment: FUZZ_BUILD (build tree, default build-fuzz), FUZZ_KEEP=1 keeps the work directory.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
SECS="${1:-20}"
shift || true
TARGETS=("$@")
if [ ${#TARGETS[@]} -eq 0 ]; then
  TARGETS=(http_request params record auth http_fast_path h2_frames h2_session)
fi
BUILD="${FUZZ_BUILD:-build-fuzz}"

if ! command -v clang++-14 >/dev/null; then bash scripts/install-deps.sh; fi
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang-14 \
  -DCMAKE_CXX_COMPILER=clang++-14 -DCQ_BUILD_FUZZERS=ON -DCQ_BUILD_TESTS=OFF \
  -DCQ_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build "$BUILD" --target fuzzers

WORK="$(mktemp -d /tmp/chronoq-fuzz.XXXXXX)"
failed=0
for t in "${TARGETS[@]}"; do
  bin="$BUILD/fuzz/${t}_fuzz"
  if [ ! -x "$bin" ]; then
    echo "fuzz: no such target: $t" >&2
    exit 2
  fi
  mkdir -p "$WORK/$t/corpus"
  regressions=(fuzz/regressions/"$t"/*)
  if [ -e "${regressions[0]}" ]; then
    echo "fuzz: $t: replaying ${#regressions[@]} saved crash input(s)"
    if ! "$bin" "${regressions[@]}" >"$WORK/$t/regressions.log" 2>&1; then
      tail -40 "$WORK/$t/regressions.log" >&2
      echo "fuzz: $t: a saved crash input crashes again (log: $WORK/$t/regressions.log)" >&2
      failed=1
      continue
    fi
  fi
  echo "fuzz: $t: running for ${SECS}s"
  if "$bin" -max_total_time="$SECS" -timeout=10 -print_final_stats=1 \
    -artifact_prefix="$WORK/$t/" "$WORK/$t/corpus" "fuzz/corpus/$t" >"$WORK/$t/fuzz.log" 2>&1; then
    grep -E '^stat::number_of_executed_units|^stat::average_exec_per_sec' "$WORK/$t/fuzz.log" |
      sed "s/^/fuzz: $t: /"
  else
    tail -60 "$WORK/$t/fuzz.log" >&2
    echo "fuzz: $t: CRASH; input and log in $WORK/$t/ (see docs/fuzzing.md)" >&2
    failed=1
  fi
done
if [ "$failed" -eq 0 ] && [ "${FUZZ_KEEP:-0}" != 1 ]; then rm -rf "$WORK"; fi
exit "$failed"
