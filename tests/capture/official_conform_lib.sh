# Sourced by official_tcpdump_conform.sh and official_tap_conform.sh: an official client's
# (go, cpp, java) conform command line, the rule sets to compare, and the loopback capture
# around a run.
#   . official_conform_lib.sh; official_setup PERMITCHECK ROOT CLIENT pass|fail|bypass DIR
# sets $client_cmd (conform's --client, with {url}), $judge (--old-client --threshold T, as
# the preset judges the client) and $scen (a scenario subset where the client passes, or one
# where its pinned findings show: ci/official-clients.sh), or exits 77 saying what is missing.

skip() { echo "SKIP: $*"; exit 77; }

official_setup() {
  permitcheck=$1 root=$2 client=$3 mode=$4 dir=$5
  command -v tcpdump >/dev/null 2>&1 || skip "tcpdump is not installed"
  command -v unshare >/dev/null 2>&1 || skip "unshare is not installed"
  unshare -n true 2>/dev/null || skip "cannot make a network namespace (needs root): no isolated loopback to capture"
  case $client in
    go)
      [ -x "$root/clients/go/permitcheck-go-consumer" ] ||
        skip "the Go client is not built (ci/install-go-client.sh)"
      # Its pinned findings: complete_batches and close_consumer pass; decompression_failure
      # fails with E5, which its wire trace shows (conform's C7 and K7 findings of
      # truncated_batch and partial_batch_failure are conform's own judging, not on the wire;
      # partial_batches's E5 is at a quiescence conform declares with an entry the client never
      # acknowledged, which a capture never infers: docs/cli.md, "validate on packet captures").
      case $mode in
        pass) scen=(--scenarios complete_batches,close_consumer --cases 0) ;;
        bypass) scen=(--scenarios complete_batches --cases 0) ;;
        *) scen=(--scenarios complete_batches,decompression_failure --cases 0) ;;
      esac ;;
    cpp)
      [ -x "$root/clients/cpp/.venv/bin/python" ] ||
        skip "the C++ client is not installed (ci/install-python-client.sh)"
      # Its pinned findings: complete_batches and close_consumer pass; decompression_failure
      # fails with E5 (partial_batches as for Go, above).
      case $mode in
        pass) scen=(--scenarios complete_batches,close_consumer --cases 0) ;;
        bypass) scen=(--scenarios complete_batches --cases 0) ;;
        *) scen=(--scenarios complete_batches,decompression_failure --cases 0) ;;
      esac ;;
    java)
      command -v java >/dev/null 2>&1 || skip "no java runtime on the PATH"
      [ -f "$root/clients/java/target/consumer.jar" ] ||
        skip "the Java client is not built (ci/install-java-client.sh)"
      # Its pinned findings fail no scenario for sure (flow_around_close's N6 is a race), so
      # only `pass` and `bypass`: complete_batches, kept small (a JVM starts per run).
      [ "$mode" != fail ] || { echo "usage: the Java client has no pinned failing scenario" >&2; exit 2; }
      # A JVM per run: the Java preset's 30 s to the first Flow, not conform's default 10 s.
      scen=(--scenarios complete_batches --cases 0 --startup 30) ;;
    *) echo "usage: unknown client $client" >&2; exit 2 ;;
  esac
  client_cmd="$root/clients/$client/run {url} {topic} {subscription} {q} {delay_ms} {nack_every}"
  judge=(--old-client --threshold 5 --q 10)  # the presets' T = Q/2 at the default Q 10
  rm -rf "$dir" && mkdir -p "$dir"
}

# The monitor's rules on conform's own wire traces (--trace-dir) of its failing runs: what a
# capture or a tap of the same traffic can show (conform's report may add rules of its own
# judging, which no wire trace holds).
monitor_rules() {
  local f
  for f in "$1"/*.jsonl; do
    [ -e "$f" ] || continue
    "$permitcheck" validate "$f" --format json 2>/dev/null | violation_rules
  done | sort -u | paste -sd, -
}
# 1 when the monitor finds a violation in any of conform's traces in DIR, else 0.
monitor_verdict() {
  local f
  for f in "$1"/*.jsonl; do
    [ -e "$f" ] || continue
    "$permitcheck" validate "$f" >/dev/null 2>&1 || { echo 1; return; }
  done
  echo 0
}
# The violations' rule IDs of one `validate --format json` report on stdin, one a line.
violation_rules() {
  tr -d '\n' | sed -n 's/.*"violations":\[\(.*\)\],"deviations".*/\1/p' |
    grep -o '"rule":"[A-Z][0-9]*"' | sed 's/.*:"//; s/"$//'
}
# The rules of conform's JSON report.
report_rules() {  # the distinct rule IDs of a conform JSON report, comma-separated
  python3 -c 'import json, sys
rules = set()
for s in json.load(open(sys.argv[1])).get("scenarios", []):
    rules.update(s.get("rules", []))
print(",".join(sorted(rules)))' "$1"
}

# In the current (private) network namespace: tcpdump on lo into FILE until capture_stop.
capture_start() {
  ip link set lo up 2>/dev/null || ifconfig lo up 2>/dev/null
  tcpdump -i lo --immediate-mode -B 32768 -U -s 0 -w "$1" tcp 2>"$1.log" &
  tcpdump_pid=$!
  for _ in $(seq 50); do grep -q "listening on" "$1.log" 2>/dev/null && break; sleep 0.1; done
  grep -q "listening on" "$1.log" || { kill "$tcpdump_pid" 2>/dev/null; return 77; }
}
capture_stop() {
  sleep 0.5
  kill -INT "$tcpdump_pid"; wait "$tcpdump_pid" 2>/dev/null
  # A capture that lost packets cannot be compared byte for byte.
  if grep -q '[1-9][0-9]* packets dropped by kernel' "$1.log"; then return 1; fi
  return 0
}
