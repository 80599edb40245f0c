#!/usr/bin/env bash
# An official client's conformance run captured with tcpdump on loopback: `permitcheck
# validate` of the capture reports the same verdict and the same rules as the monitor on
# conform's own traces of that run (conform itself exits 1 for the pinned findings of `fail`,
# 0 for `pass`).
#
#   official_tcpdump_conform.sh PERMITCHECK ROOT go|cpp|java pass|fail WORKDIR
#
# `pass` runs a scenario subset where the client passes, `fail` one where its pinned findings
# show (ci/official-clients.sh). The run happens in a network namespace of its own (unshare -n),
# so no other traffic enters the capture. Exit 77 (skipped, with the reason) when the client's
# runtime, tcpdump or a namespace is missing.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/official_conform_lib.sh"
official_setup "$@"
[ -n "${PERMITCHECK_IN_NETNS:-}" ] || exec unshare -n env PERMITCHECK_IN_NETNS=1 "$0" "$@"

capture_start "$dir/run.pcap" || skip "tcpdump cannot capture on loopback here: $(tail -n 1 "$dir/run.pcap.log")"
"$permitcheck" conform --client "$client_cmd" "${judge[@]}" "${scen[@]}" --idle 0.8 --max-shrinks 0 --reproduce 1 \
  --format json --trace-dir "$dir/traces" >"$dir/conform.json" 2>"$dir/conform.err"
conform_rc=$?
capture_stop "$dir/run.pcap" || echo "note: tcpdump dropped packets ($(grep dropped "$dir/run.pcap.log"))"
[ -s "$dir/run.pcap" ] || skip "tcpdump wrote no capture: $(tail -n 1 "$dir/run.pcap.log")"

conform_rules=$(monitor_rules "$dir/traces")
trace_rc=$(monitor_verdict "$dir/traces")
# T as conform judged the client; Q from the first Flow.
"$permitcheck" validate "$dir/run.pcap" --idle 0.2 --threshold 5 --format json \
  --trace-out "$dir/run.jsonl" >"$dir/validate.json" 2>"$dir/validate.err"
validate_rc=$?
validate_rules=$(violation_rules <"$dir/validate.json" | sort -u | paste -sd, -)
consumers=$(grep -c '"subscribe_ok"' "$dir/run.jsonl")

echo "conform ($client, $mode): exit $conform_rc, report [$(report_rules "$dir/conform.json")], monitor on its traces: exit $trace_rc, rules [$conform_rules]; validate of the capture: exit $validate_rc, rules [$validate_rules], $consumers consumer(s)"
cat "$dir/validate.err" >&2
expected=0; [ "$mode" = fail ] && expected=1
[ "$conform_rc" -eq "$expected" ] || { echo "FAIL: conform exited $conform_rc, expected $expected"; tail -n 5 "$dir/conform.err"; exit 1; }
[ "$trace_rc" -eq "$expected" ] || { echo "FAIL: the monitor on conform's traces exited $trace_rc, expected $expected"; exit 1; }
[ "$validate_rc" -eq "$trace_rc" ] || { echo "FAIL: verdicts differ"; exit 1; }
[ "$validate_rules" = "$conform_rules" ] || { echo "FAIL: rules differ"; exit 1; }
[ "$consumers" -gt 0 ] || { echo "FAIL: the capture shows no consumer"; exit 1; }
echo "PASS"
