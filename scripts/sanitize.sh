#!/usr/bin/env bash
# The sanitizer runs of `make test` (docs/testing.md). Each builds in its own tree with g++:
#   asan  build-asan: AddressSanitizer (with LeakSanitizer) + UndefinedBehaviorSanitizer; runs the
#         unit, contract and integration tests (the integration tests start the sanitized binary).
#   tsan  build-tsan: ThreadSanitizer; runs the engine and service tests, the push transports' HTTP
#         tests, and the HTTP tests (http_test, the connection tests, and the integration and
#         compat tests on the memory and embedded stores; their server is the sanitized binary).
# Any report fails the run: in-process tests abort on the first one, and the test harness fails a
# test whose server or command wrote a report to its stderr (tests/testutil/server_harness.h).
# Each run has TMPDIR in its tree's test-tmp and fails when it passed but left anything there
# (scripts/ctest-tmp.sh).
#
# Usage: scripts/sanitize.sh [asan|tsan ...]   (default: both)
set -euo pipefail
cd "$(dirname "$0")/.."

# -O1 and line tables: the reports keep their line numbers, the builds stay affordable.
FLAGS=(-G Ninja -DCMAKE_BUILD_TYPE=None "-DCMAKE_CXX_FLAGS=-O1 -g1" -DCQ_BUILD_TESTS=ON
  -DCQ_BUILD_BENCHMARKS=OFF)
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=0"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/scripts/tsan.supp"
JOBS="${CTEST_JOBS:-2}"
# Not under sanitizers: the test that starves the server of file descriptors. The sanitizer
# runtimes need descriptors themselves (UBSan's vptr check probes memory through a pipe and, with
# none free, reports every virtual call as invalid). It runs in the plain build.
OUT_OF_FDS="OutOfFileDescriptorsTheAcceptLoopBacksOffAndRecovers"

# Runs "$@" with TMPDIR in the tree $1's test-tmp (scripts/ctest-tmp.sh).
in_tmp() {
  local tree=$1
  shift
  bash scripts/ctest-tmp.sh "$tree" "$@"
}

run_asan() {
  cmake -S . -B build-asan "${FLAGS[@]}" -DCQ_SANITIZE=address,undefined >/dev/null
  cmake --build build-asan
  in_tmp build-asan ctest --test-dir build-asan --output-on-failure -j"$JOBS" -L 'unit|contract|integration' \
    -E "$OUT_OF_FDS"
}

run_tsan() {
  cmake -S . -B build-tsan "${FLAGS[@]}" -DCQ_SANITIZE=thread >/dev/null
  cmake --build build-tsan --target chronoq engine_test service_test http_test integration_test \
    compat_test connection_test push_test
  in_tmp build-tsan build-tsan/tests/unit/engine_test --gtest_brief=1
  in_tmp build-tsan build-tsan/tests/unit/service_test --gtest_brief=1
  in_tmp build-tsan build-tsan/tests/unit/http_test --gtest_brief=1
  # The Pusher and its HTTP transport. Not the gRPC and Kafka cases: Debian's gRPC, abseil and
  # librdkafka are not instrumented, and TSan reports their internals (epoll, absl's deadlock
  # graph) as races.
  in_tmp build-tsan build-tsan/tests/unit/push_test --gtest_brief=1 --gtest_filter='HttpPushTest.*:PushCallTest.*'
  in_tmp build-tsan build-tsan/tests/integration/connection_test --gtest_brief=1 --gtest_filter="-*$OUT_OF_FDS"
  # The camellia endpoints' bad-input table (BadInputTableTest, the largest) is left to ASan: one
  # thread, and its many 200,000-parameter rows take minutes at TSan's speed. The other bad-input
  # tables run here, each row's bound scaled for TSan (tests/integration/bad_input_table.h).
  in_tmp build-tsan ctest --test-dir build-tsan --output-on-failure -j"$JOBS" -R '^(memory|embedded)\.' \
    -E 'BadInputTableTest'
}

for which in "${@:-asan tsan}"; do
  for w in $which; do
    echo "sanitize: $w"
    "run_$w"
  done
done
