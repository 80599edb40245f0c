# Sourced by tap_client.sh and official_tap_client.sh: `permitcheck tap` started in the
# background in front of a run's conformance broker, and the wait until it listens.
#   . tap_client_lib.sh; tap_start PERMITCHECK PORT BROKER_URL LOG_DIR
# starts the tap on 127.0.0.1:PORT forwarding to BROKER_URL (pulsar://HOST:PORT), its findings
# and summary in LOG_DIR/tap-<pid>.out (--format json), its messages in .out.err and its wire
# trace in LOG_DIR/tap-<pid>.jsonl, and sets $tap to its pid. Returns 0 once it listens; 1
# when it exited first (the port is taken) or did not listen within 2.5 s.
tap_start() {
  local permitcheck=$1 port=$2 broker=$3 logdir=$4 _
  local out="$logdir/tap-$$.out"
  "$permitcheck" tap --listen "127.0.0.1:$port" --upstream "${broker#pulsar://}" --idle 0.2 \
    --threshold 5 --format json --trace "$logdir/tap-$$.jsonl" >"$out" 2>"$out.err" &
  tap=$!
  for _ in $(seq 125); do
    grep -q "listening on" "$out.err" 2>/dev/null && return 0
    kill -0 "$tap" 2>/dev/null || break
    sleep 0.02
  done
  grep -q "listening on" "$out.err" 2>/dev/null
}
