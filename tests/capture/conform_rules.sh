# Sourced by tcpdump_conform.sh and tap_conform.sh (needs $permitcheck): the rules a run's
# traces and captures show, sorted and comma-separated, so the scripts compare like with like.

# The violated rules in `permitcheck validate --format json` output on stdin.
validate_json_rules() {
  tr -d '\n' | sed -n 's/.*"violations":\[\(.*\)\],"deviations".*/\1/p' |
    grep -o '"rule":"[A-Z][0-9]*"' | sed 's/.*:"//; s/"$//' | sort -u | paste -sd, -
}

# The monitor's rules on the wire events of conform's own traces of the failing runs
# (--trace-dir DIR): what a capture or a live tap of the same traffic can show. The traces also
# carry the driver's facts (x- events: the drain's exact amounts, the windows it opened), which
# the monitor judges too (C7 from a drain) and no capture holds; they are left out here.
monitor_rules() {
  local f
  for f in "$1"/*.jsonl; do
    [ -e "$f" ] || continue
    grep -v '"ev":"x-' "$f" | "$permitcheck" validate - --format json 2>/dev/null |
      validate_json_rules | tr ',' '\n'
  done | grep . | sort -u | paste -sd, -
}
