#!/usr/bin/env bash
# Installs the Debian 12 packages permitcheck builds against. Idempotent: when every
# package is already present it does nothing (no apt-get update, no network).
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

echo "ci/install-deps.sh: installing ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
