#!/usr/bin/env bash
# The reference client through `permitcheck tap` in front of the conformance broker gives the
# verdict and the rules it gets without the tap, and the tap itself, checking the same traffic
# live, finds the same rules:
#   tap_conform.sh PERMITCHECK REFERENCE_CLIENT pass|legacy WORKDIR
set -uo pipefail
permitcheck=$1 client=$2 mode=$3 dir=$4
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$dir" && mkdir -p "$dir/direct" "$dir/tap"
args="--q {q} --delay-ms {delay_ms} --nack-every {nack_every}"
scen=(--scenarios complete_batches,partial_batches,corrupt_checksum --cases 1)
if [ "$mode" = legacy ]; then
  args="$args --ruleset legacy"
  scen=(--scenarios corrupt_checksum,unreadable_metadata --cases 3)
fi
. "$here/conform_rules.sh"
rules() { grep -o '"rules": "[^"]*"' "$1" | sed 's/.*: "//; s/"$//' | tr ',' '\n' | sort -u | paste -sd, -; }

"$permitcheck" conform --client "$client $args --url {url}" "${scen[@]}" --idle 0.8 \
  --max-shrinks 0 --reproduce 1 --format json --trace-dir "$dir/direct/traces" >"$dir/direct/conform.json" 2>/dev/null
direct_rc=$?
"$permitcheck" conform --client "$here/tap_client.sh $permitcheck {url} $dir/tap $client $args" \
  "${scen[@]}" --idle 0.8 --max-shrinks 0 --reproduce 1 --format json >"$dir/tap/conform.json" 2>/dev/null
tap_rc=$?
sleep 0.5
direct_rules=$(rules "$dir/direct/conform.json")
direct_monitor_rules=$(monitor_rules "$dir/direct/traces")
tap_rules=$(rules "$dir/tap/conform.json")
live_rules=$(cat "$dir"/tap/tap-*.out 2>/dev/null | grep -o '"finding":"violation","rule":"[A-Z][0-9]*"' |
             sed 's/.*"rule":"//; s/"$//' | sort -u | paste -sd, -)
summaries=$(cat "$dir"/tap/tap-*.out 2>/dev/null | grep -c '"summary"')
runs=$(ls "$dir"/tap/tap-*.out 2>/dev/null | wc -l)
echo "direct: exit $direct_rc [$direct_rules]; through tap: exit $tap_rc [$tap_rules]; tap live: [$live_rules], monitor on the direct traces: [$direct_monitor_rules], $summaries summaries of $runs runs"
expected=0; [ "$mode" = legacy ] && expected=1
[ "$direct_rc" -eq "$expected" ] || { echo "FAIL: direct conform exited $direct_rc"; exit 1; }
[ "$tap_rc" -eq "$direct_rc" ] && [ "$tap_rules" = "$direct_rules" ] || { echo "FAIL: the tap changed the verdict"; exit 1; }
[ "$live_rules" = "$direct_monitor_rules" ] || { echo "FAIL: the tap's live findings differ"; exit 1; }
[ "$runs" -gt 0 ] && [ "$summaries" -eq "$runs" ] || { echo "FAIL: a tap did not end with its summary"; exit 1; }
echo PASS
