#!/usr/bin/env bash
# A client command for `permitcheck conform --advertised-url pulsar://127.0.0.1:PORT --jobs 1`
# that puts `permitcheck tap` on PORT in front of that run's broker:
#   official_tap_client.sh PERMITCHECK PORT LOG_DIR {url} CLIENT ARGS...
# Every ARG equal to the broker's {url} becomes the tap's URL, so the client looks the topic up
# through the tap, is answered with the tap's address, and consumes through it. The tap's
# findings and summary go to LOG_DIR/tap-<pid>.out; conform's SIGTERM to the process group
# ends the tap with its summary. Runs are one at a time (--jobs 1): each binds PORT in turn.
permitcheck=$1 port=$2 logdir=$3 broker=$4
shift 4
. "$(dirname "$0")/tap_client_lib.sh"
tap_url="pulsar://127.0.0.1:$port"
for _ in $(seq 100); do  # the previous run's tap may still hold the port for a moment
  tap_start "$permitcheck" "$port" "$broker" "$logdir" && break
  sleep 0.05
done
args=()
for a in "$@"; do [ "$a" = "$broker" ] && args+=("$tap_url") || args+=("$a"); done
"${args[@]}"
