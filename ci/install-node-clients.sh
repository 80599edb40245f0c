#!/usr/bin/env bash
# Installs the third-party Node.js clients that `permitcheck conform` is tested against
# (clients/*/package-lock.json) with `npm ci`. Idempotent: a client whose
# node_modules matches its lock file is left alone (no network). Installs Debian's nodejs and
# npm first when no npm is on the PATH. Called by ci/install-deps.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v npm >/dev/null 2>&1; then
  echo "ci/install-node-clients.sh: installing nodejs npm" >&2
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
fi

for lock in clients/*/package-lock.json; do
  dir=$(dirname "$lock")
  stamp="$dir/node_modules/.permitcheck-lock.sha256"
  want=$(sha256sum "$lock" | cut -d' ' -f1)
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    continue
  fi
  echo "ci/install-node-clients.sh: npm ci in $dir" >&2
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
  echo "$want" > "$stamp"
done
