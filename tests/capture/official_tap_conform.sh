#!/usr/bin/env bash
# An official client through `permitcheck tap` in front of the conformance broker, the broker
# answering lookups with the tap's address (conform --advertised-url), so the client's consumer
# goes through the tap:
#   official_tap_conform.sh PERMITCHECK ROOT go|cpp|java pass|fail|bypass WORKDIR
# Passes when (1) conform gives the same verdict and rules as without the tap; (2) the tap's
# live findings are the monitor's on conform's direct traces; (3) every tap saw what it checks
# (its summary: a consumer, messages and acks, no lookup sending the client past it); (4) the
# traffic is byte for byte the same on both legs: a tcpdump capture of loopback, each TCP
# stream reassembled (stream_compare.py), the client's bytes to the tap are the tap's to the
# broker and back. `bypass` is the control: the broker answers lookups with its own address
# (conform's default), so the client looks up through the tap and consumes past it; every tap
# must then warn, naming the broker's address, and report NOT-EXERCISED. Runs in a network namespace of its own (unshare -n): the capture holds only
# this run and the tap's port is free. Exit 77 (skipped, with the reason) when the client's
# runtime, tcpdump, a namespace or python3 is missing.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/official_conform_lib.sh"
official_setup "$@"
command -v python3 >/dev/null 2>&1 || skip "python3 is not installed (stream_compare.py)"
[ -n "${PERMITCHECK_IN_NETNS:-}" ] || exec unshare -n env PERMITCHECK_IN_NETNS=1 "$0" "$@"
ip link set lo up 2>/dev/null || ifconfig lo up 2>/dev/null
mkdir -p "$dir/direct" "$dir/tap"
port=6651
advertise=(--advertised-url "pulsar://127.0.0.1:$port")
[ "$mode" = bypass ] && advertise=()

"$permitcheck" conform --client "$client_cmd" "${judge[@]}" "${scen[@]}" --idle 0.8 --max-shrinks 0 --reproduce 1 \
  --jobs 1 --format json --trace-dir "$dir/direct/traces" >"$dir/direct/conform.json" 2>/dev/null
direct_rc=$?
capture_start "$dir/tap.pcap" || skip "tcpdump cannot capture on loopback here: $(tail -n 1 "$dir/tap.pcap.log")"
"$permitcheck" conform --client "$here/official_tap_client.sh $permitcheck $port $dir/tap {url} $client_cmd" \
  "${judge[@]}" "${scen[@]}" --idle 0.8 --max-shrinks 0 --reproduce 1 --jobs 1 \
  "${advertise[@]}" --format json >"$dir/tap/conform.json" 2>/dev/null
tap_rc=$?
capture_stop "$dir/tap.pcap"; dropped=$?

direct_rules=$(report_rules "$dir/direct/conform.json")
direct_monitor_rules=$(monitor_rules "$dir/direct/traces")
tap_rules=$(report_rules "$dir/tap/conform.json")
live_rules=$(cat "$dir"/tap/tap-*.out 2>/dev/null | grep -o '"finding":"violation","rule":"[A-Z][0-9]*"' |
             sed 's/.*"rule":"//; s/"$//' | sort -u | paste -sd, -)
runs=$(ls "$dir"/tap/tap-*.out 2>/dev/null | wc -l)
summaries=$(cat "$dir"/tap/tap-*.out 2>/dev/null | grep '"summary"')
n_summaries=$(printf '%s\n' "$summaries" | grep -c '"summary"')
# Each tap's own counts: a run whose tap checked no consumer, message or ack, or was bypassed.
unexercised=$(printf '%s\n' "$summaries" | grep -c -E '"consumers":0,|"messages":0,|"acks":0,|"bypassed":\["')
bypass_warnings=$(cat "$dir"/tap/tap-*.out 2>/dev/null | grep -c '"warning":"lookup_bypass"')
sum() { printf '%s\n' "$summaries" | grep -o "\"$1\":[0-9]*" | cut -d: -f2 | paste -sd+ - | bc; }
echo "direct: exit $direct_rc [$direct_rules]; through the tap: exit $tap_rc [$tap_rules]; tap live: [$live_rules], monitor on the direct traces: [$direct_monitor_rules]; $n_summaries summaries of $runs runs: $(sum connections) connections, $(sum consumers) consumers, $(sum messages) messages, $(sum acks) acks, $(sum lookups) lookups, $unexercised not exercised, $bypass_warnings bypass warnings"
compare=$(python3 "$here/stream_compare.py" "$dir/tap.pcap" "$port"); compare_rc=$?
echo "$compare"
expected=0; [ "$mode" = fail ] && expected=1
if [ "$mode" = bypass ]; then
  not_exercised=$(printf '%s\n' "$summaries" | grep -c '"verdict":"NOT-EXERCISED"')
  named=$(cat "$dir"/tap/tap-*.out | grep -c '"warning":"lookup_bypass","address":"127.0.0.1:[0-9]*".*bypassing the tap: that traffic is not checked')
  echo "bypass: $not_exercised of $runs taps NOT-EXERCISED, $named warnings naming the broker"
  [ "$tap_rc" -eq "$direct_rc" ] || { echo "FAIL: the tap changed the verdict"; exit 1; }
  [ "$runs" -gt 0 ] && [ "$not_exercised" -eq "$runs" ] && [ "$named" -ge "$runs" ] ||
    { echo "FAIL: a tap the client bypassed did not say so"; exit 1; }
  echo PASS
  exit 0
fi
[ "$direct_rc" -eq "$expected" ] || { echo "FAIL: direct conform exited $direct_rc, expected $expected"; exit 1; }
[ "$tap_rc" -eq "$direct_rc" ] && [ "$tap_rules" = "$direct_rules" ] || { echo "FAIL: the tap changed the verdict"; exit 1; }
[ "$live_rules" = "$direct_monitor_rules" ] || { echo "FAIL: the tap's live findings differ"; exit 1; }
[ "$runs" -gt 0 ] && [ "$n_summaries" -eq "$runs" ] || { echo "FAIL: a tap did not end with its summary"; exit 1; }
[ "$unexercised" -eq 0 ] && [ "$bypass_warnings" -eq 0 ] || { echo "FAIL: a tap did not see the consumer"; exit 1; }
[ "$dropped" -eq 0 ] || { echo "FAIL: tcpdump dropped packets: no byte-for-byte comparison"; exit 1; }
[ "$compare_rc" -eq 0 ] || { echo "FAIL: the bytes through the tap differ (or nothing was compared)"; exit 1; }
echo PASS
