#!/usr/bin/env bash
# Installs the Debian 12 packages permitcheck builds against. Idempotent: when every
# package is already present it does nothing (no apt-get update, no network). Then
# ci/install-node-clients.sh, ci/install-python-client.sh and ci/install-go-client.sh install
# the clients under conformance/clients/ from their registries.
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
  ccache
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

# The official clients: the C++ client through PyPI pulsar-client, and the Go client (each
# idempotent). A missing toolchain is reported and does not stop the build: the tests of that
# client then skip, saying why.
bash "$(dirname "$0")/install-python-client.sh" ||
  echo "ci/install-deps.sh: the C++ client (conformance/clients/cpp) is not installed" >&2
bash "$(dirname "$0")/install-go-client.sh" ||
  echo "ci/install-deps.sh: the Go client (conformance/clients/go) is not built" >&2
# The Java-client consumer (Maven Central; idempotent). Without Maven it is skipped, loudly:
# the Java conformance tests then skip, saying so.
if command -v mvn >/dev/null 2>&1; then bash "$(dirname "$0")/install-java-client.sh"; else echo "ci/install-deps.sh: no mvn on PATH: the Java client (conformance/clients/java) is not built" >&2; fi
