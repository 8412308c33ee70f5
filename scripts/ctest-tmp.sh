#!/usr/bin/env bash
# Runs a test command with TMPDIR set to a fresh directory inside a build tree, then fails when
# the command passed but left anything there: a passing test removes what it created.
# Temporary files of the tests go under $TMPDIR (tests/testutil/temp_dir.h: TempRoot()).
#
# Usage: scripts/ctest-tmp.sh BUILD_DIR COMMAND [ARGS...]
#   e.g. scripts/ctest-tmp.sh build ctest --test-dir build --output-on-failure -j2
# The directory is BUILD_DIR/test-tmp, emptied first. When the command fails, what it left stays
# there for the failing tests' logs (and the command's status is returned).
set -uo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 BUILD_DIR COMMAND [ARGS...]" >&2
  exit 2
fi
dir="$(cd "$1" && pwd)/test-tmp"
shift
rm -rf "$dir"
mkdir -p "$dir"
TMPDIR="$dir" "$@"
status=$?
if [ "$status" -ne 0 ]; then
  echo "test-tmp: the tests failed (status $status); what they left is in $dir" >&2
  exit "$status"
fi
left=$(find "$dir" -mindepth 1 -maxdepth 2 | sort)
if [ -n "$left" ]; then
  echo "test-tmp: the tests passed but left $(find "$dir" -mindepth 1 -maxdepth 1 | wc -l) entries in $dir (a test must remove what it creates):" >&2
  echo "$left" | sed "s|^$dir/|  |" | head -50 >&2
  exit 1
fi
rmdir "$dir"
echo "test-tmp: nothing left behind"
