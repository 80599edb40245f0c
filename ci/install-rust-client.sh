#!/usr/bin/env bash
# Builds the Rust Pulsar client's consumer for `permitcheck conform --client-preset rust`
# (clients/rust: the crate `pulsar` from crates.io, pinned by Cargo.toml (=6.9.1) and
# Cargo.lock) into clients/rust/permitcheck-rust-consumer (gitignored, as is the
# cargo target directory clients/rust/target/).
# Idempotent: a binary whose stamp matches Cargo.toml, Cargo.lock and src/ is left alone (no
# network). Otherwise `cargo fetch --locked` (the only step that reaches crates.io), then
# `cargo build --release --locked --offline`, at most 2 jobs (the machine has 2 cores).
# Needs cargo and rustc (edition 2021) and protoc (the crate's build script runs prost-build;
# Debian protobuf-compiler, from ci/install-deps.sh). Called by ci/install-deps.sh.
set -euo pipefail
cd "$(dirname "$0")/../clients/rust"

if ! command -v cargo >/dev/null 2>&1; then
  echo "ci/install-rust-client.sh: no cargo on the PATH: the Rust client (rust) cannot be built" >&2
  exit 1
fi
if ! command -v protoc >/dev/null 2>&1; then
  echo "ci/install-rust-client.sh: no protoc on the PATH (Debian protobuf-compiler): the crate pulsar's build script needs it" >&2
  exit 1
fi

out=permitcheck-rust-consumer
stamp="$out.sha256"
want=$( (cat Cargo.toml Cargo.lock src/*.rs; cargo --version; rustc --version) | sha256sum | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x "$out" ]; then
  exit 0
fi
echo "ci/install-rust-client.sh: building $PWD/$out (crate pulsar, Cargo.lock)" >&2
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
cargo fetch --locked --quiet
start=$SECONDS
cargo build --release --locked --offline --quiet -j 2
cp "$CARGO_TARGET_DIR/release/permitcheck-rust-consumer" "$out.tmp"
mv "$out.tmp" "$out"
echo "$want" > "$stamp"
echo "ci/install-rust-client.sh: built in $((SECONDS - start)) s" >&2
