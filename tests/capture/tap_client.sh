#!/usr/bin/env bash
# A client command for `permitcheck conform` that puts `permitcheck tap` between the client
# and the conformance broker:
#   tap_client.sh PERMITCHECK URL LOG_DIR CLIENT [ARGS...]   (the client gets --url at the end)
# The tap's findings and summary go to LOG_DIR/tap-<pid>.out; conform's SIGTERM to the process
# group ends the tap cleanly.
permitcheck=$1 url=$2 logdir=$3
shift 3
out="$logdir/tap-$$.out"
for attempt in 1 2 3 4 5; do
  port=$((20000 + RANDOM % 30000))
  "$permitcheck" tap --listen "127.0.0.1:$port" --upstream "${url#pulsar://}" --idle 0.2 \
    --threshold 5 --format json --trace "$logdir/tap-$$.jsonl" >"$out" 2>"$out.err" &
  tap=$!
  for _ in $(seq 50); do
    grep -q "listening on" "$out.err" 2>/dev/null && break
    kill -0 $tap 2>/dev/null || break
    sleep 0.05
  done
  grep -q "listening on" "$out.err" && break
done
"$@" --url "pulsar://127.0.0.1:$port"
