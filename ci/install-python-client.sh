#!/usr/bin/env bash
# Installs the official Pulsar C++ client for `permitcheck conform` (PyPI pulsar-client, whose
# wheel bundles libpulsar) into virtual environments under clients/cpp/, with
# pip --require-hashes from the lock files there: requirements.txt into .venv/, and each
# requirements-VERSION.txt (an older release the bug catalogue needs) into .venv-VERSION/.
# Idempotent: an environment whose stamp matches its lock file is left alone (no network).
# Called by ci/install-deps.sh.
set -euo pipefail
cd "$(dirname "$0")/../clients/cpp"

# The locked wheel is built for CPython 3.11 (cp311, manylinux_2_28 x86_64).
PYTHON=${PERMITCHECK_PYTHON:-}
if [ -z "$PYTHON" ]; then
  if command -v python3.11 >/dev/null 2>&1; then PYTHON=python3.11; else PYTHON=python3; fi
fi
if ! command -v "$PYTHON" >/dev/null 2>&1; then
  echo "ci/install-python-client.sh: no $PYTHON on the PATH: the C++ client (cpp) cannot be installed" >&2
  exit 1
fi
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
  echo "ci/install-python-client.sh: $PYTHON is not Python 3.11, which the locked pulsar-client wheel needs (set PERMITCHECK_PYTHON)" >&2
  exit 1
fi
if ! "$PYTHON" -c 'import venv, sys; assert sys.version_info >= (3, 8)' 2>/dev/null; then
  echo "ci/install-python-client.sh: $PYTHON has no venv module (Debian: apt-get install python3-venv)" >&2
  exit 1
fi

install_lock() {  # LOCK VENV
  local lock=$1 venv=$2
  local stamp="$venv/.permitcheck-lock.sha256"
  local want
  want=$(sha256sum "$lock" | cut -d' ' -f1)
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x "$venv/bin/python" ]; then
    return 0
  fi
  echo "ci/install-python-client.sh: installing $lock into clients/cpp/$venv" >&2
  rm -rf "$venv"
  "$PYTHON" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps \
    --require-hashes --only-binary=:all: -r "$lock"
  "$venv/bin/python" -c 'import pulsar' >/dev/null
  echo "$want" > "$stamp"
}

install_lock requirements.txt .venv
for lock in requirements-*.txt; do
  [ -e "$lock" ] || continue
  version=${lock#requirements-}
  install_lock "$lock" ".venv-${version%.txt}"
done
