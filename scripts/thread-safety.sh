#!/usr/bin/env bash
# The thread-safety check (docs/testing.md): builds every library and the chronoq binary with
# clang-14 and -Wthread-safety -Werror (cmake/CqHelpers.cmake adds the flag for clang), so a
# member declared CQ_GUARDED_BY(mu_) touched without mu_ held, a CQ_REQUIRES function called
# without its lock, or a lock left held on some path fails the build. Compiles without
# optimization or debug information in its own tree (the analysis runs in the front end); with
# ccache a run where nothing changed takes seconds. `make check` runs it.
#
# Usage: scripts/thread-safety.sh        Environment: TSA_BUILD (build tree, default build-tsa)
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
BUILD="${TSA_BUILD:-build-tsa}"

if ! command -v clang++-14 >/dev/null; then bash scripts/install-deps.sh; fi
# A build type of our own has no flags: -O0, no -g.
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=ThreadSafety -DCMAKE_C_COMPILER=clang-14 \
  -DCMAKE_CXX_COMPILER=clang++-14 -DCQ_BUILD_TESTS=OFF -DCQ_BUILD_BENCHMARKS=OFF >/dev/null
if ! cmake --build "$BUILD" -- -k 0 >"$BUILD/thread-safety.log" 2>&1; then
  grep -E '(error|warning|note): ' "$BUILD/thread-safety.log" >&2 || tail -40 "$BUILD/thread-safety.log" >&2
  echo "thread-safety: the clang build fails (full log: $BUILD/thread-safety.log)" >&2
  exit 1
fi
echo "thread-safety: ok"
