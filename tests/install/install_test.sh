#!/usr/bin/env bash
# Installs the build tree $1 into temporary prefixes and checks the result (ctest: install.*).
set -euo pipefail
build=$1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/chronoq_install_XXXXXX")
trap 'rm -rf "$tmp"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

# 1. A plain prefix.
prefix=$tmp/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
for f in bin/chronoq etc/chronoq/chronoq.toml lib/systemd/system/chronoq.service; do
  [ -f "$prefix/$f" ] || fail "$prefix/$f was not installed"
done
[ -x "$prefix/bin/chronoq" ] || fail "bin/chronoq is not executable"
"$prefix/bin/chronoq" version | grep -Eq '^chronoq [0-9]+\.[0-9]+\.[0-9]+$' ||
  fail "the installed binary does not print its version"

# The installed sample config is accepted and means the defaults.
env -i "$prefix/bin/chronoq" serve --config="$prefix/etc/chronoq/chronoq.toml" --print-config \
  >"$tmp/from-sample" || fail "the installed sample config is refused"
env -i "$prefix/bin/chronoq" serve --print-config >"$tmp/defaults"
cmp -s "$tmp/from-sample" "$tmp/defaults" || fail "the sample config is not the defaults"

# The unit runs the installed binary with the installed config and the state directory.
unit=$prefix/lib/systemd/system/chronoq.service
grep -qx "ExecStart=$prefix/bin/chronoq serve --config=$prefix/etc/chronoq/chronoq.toml --data-dir=/var/lib/chronoq" "$unit" ||
  fail "ExecStart does not point into the prefix: $(grep ExecStart= "$unit")"
# Exit codes 2 and 3 (refused configuration, data directory in use; README "Exit codes") are not
# restarted: a restart cannot help.
for line in DynamicUser=yes StateDirectory=chronoq ProtectSystem=strict ProtectHome=yes \
  PrivateTmp=yes NoNewPrivileges=yes Restart=on-failure LimitNOFILE=65536 \
  "RestartPreventExitStatus=2 3"; do
  grep -qx "$line" "$unit" || fail "the unit lacks $line"
done
command -v systemd-analyze >/dev/null ||
  fail "systemd-analyze is missing (Debian package systemd, in scripts/install-deps.sh)"
# verify prints every problem it finds (unknown keys, bad values, a missing binary) on stderr
# and does not always fail for them: any output naming the unit is a failure.
out=$(systemd-analyze verify "$unit" 2>&1) || fail "systemd-analyze verify failed: $out"
if echo "$out" | grep -q "chronoq.service"; then fail "systemd-analyze verify: $out"; fi

# 2. Installing again keeps an edited config.
echo 'ttl-millis = 1234' >"$prefix/etc/chronoq/chronoq.toml"
cmake --install "$build" --prefix "$prefix" >/dev/null
grep -qx 'ttl-millis = 1234' "$prefix/etc/chronoq/chronoq.toml" ||
  fail "a second install overwrote the edited config"

# 3. DESTDIR (packaging): everything under DESTDIR, the unit naming the final paths.
DESTDIR=$tmp/stage cmake --install "$build" --prefix /usr >/dev/null
for f in usr/bin/chronoq etc/chronoq/chronoq.toml usr/lib/systemd/system/chronoq.service; do
  [ -f "$tmp/stage/$f" ] || fail "DESTDIR install lacks $f"
done
grep -qx "ExecStart=/usr/bin/chronoq serve --config=/etc/chronoq/chronoq.toml --data-dir=/var/lib/chronoq" \
  "$tmp/stage/usr/lib/systemd/system/chronoq.service" || fail "DESTDIR unit has the wrong paths"
echo "install: ok"
