#!/usr/bin/env bash
# Installs the Debian 12 packages permitcheck builds against. Idempotent: when every
# package is already present it does nothing (no apt-get update, no network). Then
# ci/install-{node-clients,python-client,go-client,java-client}.sh install the clients under
# clients/ from their registries, the four at once.
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
  nlohmann-json3-dev chromium python3-jsonschema  # permitcheck matrix: its JSON; the page and schema tests
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

# The clients under clients/, each from its registry: the Node.js clients
# `permitcheck conform` is tested against (npm ci), the C++ client through PyPI pulsar-client,
# the Go client, and the Java-client consumer (Maven Central). Each installer is idempotent and
# touches only its own tool's cache, so the four run at once; their output is printed in this
# order when all have finished. The Node.js clients are required, and so is the Java client
# when Maven is installed. A missing Python 3.11 or Go toolchain, or Maven, is reported and does
# not stop the build: the tests of that client then skip, saying why.
here="$(dirname "$0")"
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
bash "$here/install-node-clients.sh" >"$logs/node" 2>&1 & node=$!
bash "$here/install-python-client.sh" >"$logs/python" 2>&1 & python=$!
bash "$here/install-go-client.sh" >"$logs/go" 2>&1 & go=$!
if command -v mvn >/dev/null 2>&1; then
  bash "$here/install-java-client.sh" >"$logs/java" 2>&1 & java=$!
else
  echo "ci/install-deps.sh: no mvn on PATH: the Java client (clients/java) is not built" >"$logs/java"
  java=""
fi
if command -v mvn >/dev/null 2>&1; then bash "$here/install-pulsar-broker.sh" >&2 || echo "ci/install-deps.sh: the Pulsar broker (brokers/pulsar) is not installed: the RealBroker tests skip" >&2; fi
node_rc=0; python_rc=0; go_rc=0; java_rc=0
wait "$node" || node_rc=$?
wait "$python" || python_rc=$?
wait "$go" || go_rc=$?
if [ -n "$java" ]; then wait "$java" || java_rc=$?; fi
cat "$logs/node" "$logs/python" "$logs/go" "$logs/java" >&2
[ "$python_rc" -eq 0 ] ||
  echo "ci/install-deps.sh: the C++ client (clients/cpp) is not installed" >&2
[ "$go_rc" -eq 0 ] ||
  echo "ci/install-deps.sh: the Go client (clients/go) is not built" >&2
bash "$here/install-rust-client.sh" || echo "ci/install-deps.sh: the Rust client (clients/rust) is not built" >&2
if [ "$node_rc" -ne 0 ] || [ "$java_rc" -ne 0 ]; then
  echo "ci/install-deps.sh: installing the Node.js clients (npm ci) or building the Java client (mvn) failed" >&2
  exit 1
fi
