#!/usr/bin/env bash
# Builds the Java-client consumer of `permitcheck conform` (clients/java/) against
# Apache's official org.apache.pulsar:pulsar-client from Maven Central, with `mvn -q -B package`.
#
#   ci/install-java-client.sh            # the pinned release (target/) and each release of
#                                        # clients/java/catalogue-versions
#   ci/install-java-client.sh 3.2.0      # one other release, into target-3.2.0/ (before 2.4:
#                                        # the consumer of src/pre-2.4/, without negative acks)
#
# Idempotent: a build whose stamp matches the pom, the sources and the version is left alone
# (no network, no JVM). After one build everything is in ~/.m2 and target*/lib, so later runs
# are offline-safe. Called by ci/install-deps.sh.
set -euo pipefail
self="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"
cd "$(dirname "$0")/../clients/java"

if ! command -v mvn >/dev/null 2>&1 || ! command -v java >/dev/null 2>&1; then
  echo "ci/install-java-client.sh: mvn and java (17) are needed to build the Java client" >&2
  exit 1
fi

if [ $# -eq 0 ]; then
  bash "$self" pinned
  grep -v '^#' catalogue-versions | while read -r v; do [ -z "$v" ] || bash "$self" "$v"; done
  exit 0
fi
version="$1"
if [ "$version" = pinned ]; then version=""; fi
out="target"
args=()
if [ -n "$version" ]; then
  out="target-$version"
  args+=("-Dpulsar.version=$version" "-Dout.dir=$PWD/$out")
  # Releases before 2.4 have no negative acknowledgement: the consumer without it.
  case $version in
    0.*|1.*|2.[0-3].*) args+=("-Dconsumer.src=$PWD/src/pre-2.4/java") ;;
  esac
fi
# The slf4j-simple binding must match the release's slf4j-api, or its logs vanish (NOP logger):
# releases up to 3.2 are on slf4j 1.7 (all four of catalogue-versions), so they get the 1.7
# binding from the start; a guess the resolved slf4j-api contradicts is built again below.
simple=2.0.17
case $version in
  0.*|1.*|2.*|3.[0-2].*) simple=1.7.36 ;;
esac

want=$( (cat pom.xml "$self"; find src -type f | sort | xargs cat; echo "$version") | sha256sum | cut -d" " -f1)
stamp="$out/.permitcheck-build.sha256"
if [ -f "$stamp" ] && [ -f "$out/consumer.jar" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
echo "ci/install-java-client.sh: mvn package (pulsar-client ${version:-as pinned}) into $out" >&2
rm -rf "$out"
mvn -q -B -Dstyle.color=never "${args[@]}" -Dslf4j.simple.version="$simple" package >&2
other=""
if ls "$out"/lib/slf4j-api-1.* >/dev/null 2>&1 && ls "$out"/lib/slf4j-simple-2.* >/dev/null 2>&1; then
  other=1.7.36
elif ls "$out"/lib/slf4j-api-2.* >/dev/null 2>&1 && ls "$out"/lib/slf4j-simple-1.* >/dev/null 2>&1; then
  other=2.0.17
fi
if [ -n "$other" ]; then
  rm -rf "$out"
  mvn -q -B -Dstyle.color=never "${args[@]}" -Dslf4j.simple.version="$other" package >&2
fi
echo "$want" > "$stamp"
