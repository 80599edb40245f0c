#!/usr/bin/env bash
# A client command for `permitcheck conform` that puts `permitcheck tap` between the client
# and the conformance broker:
#   tap_client.sh PERMITCHECK URL LOG_DIR CLIENT [ARGS...]   (the client gets --url at the end)
# The tap's findings and summary go to LOG_DIR/tap-<pid>.out; conform's SIGTERM to the process
# group ends the tap cleanly.
permitcheck=$1 url=$2 logdir=$3
shift 3
. "$(dirname "$0")/tap_client_lib.sh"
for attempt in 1 2 3 4 5; do  # a random port may be taken: another one
  port=$((20000 + RANDOM % 30000))
  tap_start "$permitcheck" "$port" "$url" "$logdir" && break
done
"$@" --url "pulsar://127.0.0.1:$port"
