#!/usr/bin/env bash
# Installs the Debian 12 packages permitcheck builds against. Idempotent: when every
# package is already present it does nothing (no apt-get update, no network). Then
# ci/install-node-clients.sh installs the Node.js clients under conformance/clients/.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config git
  clang libfuzzer-14-dev libclang-rt-14-dev
  libgtest-dev libgmock-dev googletest
  librapidcheck-dev
  libz3-dev
  libabsl-dev
  libsimdjson-dev
  libprotobuf-dev protobuf-compiler
  libasio-dev
  libcli11-dev
  libbenchmark-dev
  libpcap-dev tcpdump
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -ne 0 ]; then
  echo "ci/install-deps.sh: installing ${missing[*]}" >&2
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The Node.js clients `permitcheck conform` is tested against (npm ci; idempotent too).
bash "$(dirname "$0")/install-node-clients.sh"
