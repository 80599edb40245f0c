#!/usr/bin/env bash
# A real conformance run captured with tcpdump on loopback: `permitcheck validate` of the
# capture must report the same verdict and the same rules as `conform`'s own trace of that run.
#
#   tcpdump_conform.sh PERMITCHECK REFERENCE_CLIENT pass|legacy WORKDIR
#
# The run happens in a network namespace of its own (unshare -n), so no other traffic on the
# machine's loopback enters the capture. Exit 77 (skipped, with the reason) when tcpdump is
# missing or cannot capture here (not root, no unshare).
set -uo pipefail
permitcheck=$1 client=$2 mode=$3 dir=$4

skip() { echo "SKIP: $*" >&2; exit 77; }
command -v tcpdump >/dev/null 2>&1 || skip "tcpdump is not installed"
command -v unshare >/dev/null 2>&1 || skip "unshare is not installed"
unshare -n true 2>/dev/null || skip "cannot make a network namespace (needs root): no isolated loopback to capture"

rm -rf "$dir" && mkdir -p "$dir"
here=$(cd "$(dirname "$0")" && pwd)
. "$here/conform_rules.sh"
ref="$client --url {url} --q {q} --delay-ms {delay_ms} --nack-every {nack_every}"
if [ "$mode" = legacy ]; then
  conform_args=(--client "$ref --ruleset legacy" --scenarios corrupt_checksum,unreadable_metadata --cases 3)
else
  conform_args=(--client "$ref" --scenarios complete_batches,partial_batches,corrupt_checksum,close_consumer --cases 1)
fi

export permitcheck dir
unshare -n bash -c '
  ip link set lo up 2>/dev/null || ifconfig lo up 2>/dev/null
  tcpdump -i lo -U -s 0 -w "$dir/run.pcap" tcp 2>"$dir/tcpdump.log" &
  tp=$!
  for _ in $(seq 50); do grep -q "listening on" "$dir/tcpdump.log" 2>/dev/null && break; sleep 0.1; done
  grep -q "listening on" "$dir/tcpdump.log" || { kill $tp 2>/dev/null; exit 77; }
  "$permitcheck" conform "$@" --idle 0.8 --max-shrinks 0 --reproduce 1 --format json --trace-dir "$dir/traces" >"$dir/conform.json" 2>"$dir/conform.err"
  echo $? >"$dir/conform.rc"
  sleep 0.5
  kill -INT $tp; wait $tp 2>/dev/null
  exit 0
' bash "${conform_args[@]}"
rc=$?
[ "$rc" -eq 77 ] && skip "tcpdump cannot capture on loopback here: $(tail -n 1 "$dir/tcpdump.log")"
[ -s "$dir/run.pcap" ] || skip "tcpdump wrote no capture: $(tail -n 1 "$dir/tcpdump.log")"

conform_rc=$(cat "$dir/conform.rc")
conform_rules=$(monitor_rules "$dir/traces")

# T as the conform run declared it (its trace header), Q from the first Flow.
"$permitcheck" validate "$dir/run.pcap" --idle 0.2 --threshold 5 --format json \
  --trace-out "$dir/run.jsonl" >"$dir/validate.json" 2>"$dir/validate.err"
validate_rc=$?
validate_rules=$(validate_json_rules <"$dir/validate.json")

echo "conform: exit $conform_rc, monitor rules of its traces [$conform_rules]; validate of the capture: exit $validate_rc, rules [$validate_rules]"
cat "$dir/validate.err" >&2
expected=0; [ "$mode" = legacy ] && expected=1
[ "$conform_rc" -eq "$expected" ] || { echo "FAIL: conform exited $conform_rc, expected $expected"; cat "$dir/conform.err"; exit 1; }
[ "$validate_rc" -eq "$conform_rc" ] || { echo "FAIL: verdicts differ"; exit 1; }
[ "$validate_rules" = "$conform_rules" ] || { echo "FAIL: rules differ"; exit 1; }
echo "PASS"
