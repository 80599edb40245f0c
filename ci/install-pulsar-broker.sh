#!/usr/bin/env bash
# Resolves the Pulsar standalone broker that `permitcheck real-broker` starts (brokers/pulsar/):
# Apache's published org.apache.pulsar:pulsar-broker (pinned in brokers/pulsar/pom.xml) and its
# dependencies, from Maven Central, into ~/.m2; writes their classpath to
# brokers/pulsar/target/classpath.txt. Nothing is built from source.
#
#   ci/install-pulsar-broker.sh                # resolve, check against brokers/pulsar/lock.txt
#   ci/install-pulsar-broker.sh --update-lock  # resolve and rewrite the lock
#
# The lock lists every resolved jar (its path in the Maven repository: group, artifact,
# version) with its sha256; a resolution that differs from it fails. Idempotent: when the
# stamp matches the pom, the lock and this script and every jar of the classpath is there,
# nothing runs (no network, no JVM). Called by ci/install-deps.sh.
set -euo pipefail
self="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"
cd "$(dirname "$0")/../brokers/pulsar"
update=0
[ "${1:-}" = --update-lock ] && update=1

if ! command -v mvn >/dev/null 2>&1 || ! command -v java >/dev/null 2>&1; then
  echo "ci/install-pulsar-broker.sh: mvn and java (17) are needed for the Pulsar broker" >&2
  exit 1
fi
classpath=target/classpath.txt
stamp=target/.permitcheck-install.sha256
fingerprint() { { cat pom.xml "$self"; cat lock.txt 2>/dev/null || true; } | sha256sum | cut -d" " -f1; }
want=$(fingerprint)
all_there() {
  [ -s "$classpath" ] || return 1
  local jar
  while read -r jar; do [ -f "$jar" ] || return 1; done < <(tr ':' '\n' < "$classpath")
}
if [ "$update" -eq 0 ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && all_there; then
  exit 0
fi
echo "ci/install-pulsar-broker.sh: resolving pulsar-broker (see brokers/pulsar/pom.xml)" >&2
mkdir -p target
mvn -q -B -Dstyle.color=never dependency:build-classpath -Dmdep.outputFile="$PWD/$classpath" >&2
# The local repository's root: what precedes pulsar-broker's own group path.
repo=$(tr ':' '\n' < "$classpath" | grep -m1 '/org/apache/pulsar/pulsar-broker/' | sed 's|/org/apache/pulsar/pulsar-broker/.*||')
# The lock's form: one jar a line, its path under the repository, two spaces, its sha256.
resolved=$(tr ':' '\n' < "$classpath" | sort | while read -r jar; do
  echo "${jar#"$repo"/}  $(sha256sum "$jar" | cut -d" " -f1)"
done)
if [ "$update" -eq 1 ]; then
  { echo "# brokers/pulsar: every jar resolved for pom.xml (path in the Maven repository, sha256)."
    echo "# Written by ci/install-pulsar-broker.sh --update-lock; checked by every install."
    echo "$resolved"; } > lock.txt
  want=$(fingerprint)
elif ! diff <(grep -v '^#' lock.txt) <(echo "$resolved") >target/lock.diff; then
  echo "ci/install-pulsar-broker.sh: the resolved jars differ from brokers/pulsar/lock.txt:" >&2
  head -20 target/lock.diff >&2
  rm -f "$classpath"
  exit 1
fi
echo "$want" > "$stamp"
echo "ci/install-pulsar-broker.sh: $(grep -vc '^#' lock.txt) jars, classpath in brokers/pulsar/$classpath" >&2
