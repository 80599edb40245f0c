#!/usr/bin/env bash
# Builds the official Pulsar Go client's consumer for `permitcheck conform`
# (clients/go: github.com/apache/pulsar-client-go from the Go module proxy,
# pinned by go.mod and go.sum) into clients/go/permitcheck-go-consumer, and each
# older release the bug catalogue needs (clients/go/versions/VERSION/go.mod and
# go.sum, the same main.go) into permitcheck-go-consumer-VERSION; and the consumer of
# build/bench/tap_client_bench (bench/main.go, the same go.mod) into permitcheck-go-bench.
# Idempotent: a binary whose stamp matches its sources is left alone (no network).
# Called by ci/install-deps.sh.
set -euo pipefail
cd "$(dirname "$0")/../clients/go"

if ! command -v go >/dev/null 2>&1; then
  echo "ci/install-go-client.sh: no go on the PATH: the Go client (go) cannot be built (Go 1.25 or newer)" >&2
  exit 1
fi

build() {  # MODDIR OUTPUT [PACKAGE]
  local moddir=$1 out=$2 pkg=${3:-.}
  local stamp="$out.sha256"
  local want
  want=$(cat "$pkg/main.go" "$moddir/go.mod" "$moddir/go.sum" | sha256sum | cut -d' ' -f1)
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x "$out" ]; then
    return 0
  fi
  echo "ci/install-go-client.sh: building $out from $moddir/go.mod" >&2
  if [ "$moddir" != . ]; then cp main.go "$moddir/main.go"; fi
  (cd "$moddir" && GOFLAGS=-mod=readonly go build -trimpath -o "$OLDPWD/$out" "$pkg")
  if [ "$moddir" != . ]; then rm -f "$moddir/main.go"; fi
  echo "$want" > "$stamp"
}

build . permitcheck-go-consumer
build . permitcheck-go-bench ./bench
for mod in versions/*/go.mod; do
  [ -e "$mod" ] || continue
  dir=$(dirname "$mod")
  build "$dir" "permitcheck-go-consumer-$(basename "$dir")"
done
