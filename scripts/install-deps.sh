#!/usr/bin/env bash
# Installs the Debian packages chronoq needs to build, run and test. Idempotent: when everything
# is present it does nothing (no network access). Uses apt-get only.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config ccache git clang-format
  libboost1.81-dev libboost-json1.81-dev libboost-url1.81-dev
  librocksdb-dev libhiredis-dev libspdlog-dev libfmt-dev libcli11-dev libtomlplusplus-dev
  libjemalloc-dev
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler librdkafka-dev libssl-dev
  libnghttp2-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  clang-14 libclang-rt-14-dev
  redis-server curl systemd prometheus python3 python3-grpcio
  chromium chromium-driver python3-selenium
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
