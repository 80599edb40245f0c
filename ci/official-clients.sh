# Sourced by ci/main: the sections of the official Pulsar clients (java, cpp, go) and of the
# bug catalogue. Only build/cli/permitcheck runs the clients.
#
#   expect_client NAME      # every scenario's fixed cases against the preset NAME
#   expect_catalogue        # permitcheck conform --catalogue: every row both ways
#
# A client is run by `permitcheck conform --client-preset NAME`, judged as what it is: an old
# client (it does not know message_permits) with its real Flow threshold, as
# tests/conformance/ judge it. Its known findings (conformance/README.md, each with the source
# lines) are pinned below as one line per scenario, "SCENARIO STATUS rules=R deviations=D": the
# section passes only when the report shows exactly them, so it fails when a known deviation
# disappears, a new one shows, or the client's runtime is missing (the reason is printed). A
# finding that depends on a race shows in some runs only: its line lists both outcomes,
# separated by " | ", and either passes.

# stale_epoch is NOT-APPLICABLE for all three, as the run says: they subscribe Shared, where a
# negative ack does not raise the consumer epoch (Java names epoch 0 in its Subscribe; the C++
# and Go clients name none), so no message can become stale; NOT-APPLICABLE never fails a run.
# Java's flow_around_close race (conformance/README.md, "Java client 4.2.4"): the old
# incarnation's Flow is written after the client re-sent SUBSCRIBE for the replacement and
# before its SUCCESS. It was pinned as N4; under the rulebook's section 12, item 12 an old Flow
# arriving after the replacement's Subscribe is N6 (one arriving before it, after the
# CLOSE_CONSUMER, is no violation and passes), so the racy alternative is now N6.
# The pinned findings, per client. conform exits 1 for a client with a finding, 0 without.
official_client_expected() {
  case $1 in
    java)  # org.apache.pulsar:pulsar-client 4.2.4
      cat <<'EOF'
complete_batches PASS rules= deviations=
partial_batches PASS rules= deviations=
corrupt_checksum PASS rules= deviations=X1
unreadable_metadata PASS rules= deviations=X1
decompression_failure PASS rules= deviations=
truncated_batch PASS rules= deviations=
partial_batch_failure PASS rules= deviations=
inconsistent_batch PASS rules= deviations=
close_consumer PASS rules= deviations=
reconnect PASS rules= deviations=
held_close_consumer PASS rules= deviations=
held_reconnect PASS rules= deviations=
flow_around_close PASS rules= deviations= | flow_around_close FAIL rules=N6 deviations=
start_message_id PASS rules= deviations=
stale_epoch NOT-APPLICABLE rules= deviations=
unknown_consumer PASS rules= deviations=
negative_ack PASS rules= deviations=
slow_consumer PASS rules= deviations=
duplicate_redelivery PASS rules= deviations=
EOF
      ;;
    cpp)  # PyPI pulsar-client 3.13.0 (C++ client 4.2.0)
      cat <<'EOF'
complete_batches PASS rules= deviations=
partial_batches FAIL rules=E2,E5 deviations=
corrupt_checksum PASS rules= deviations=X1
unreadable_metadata PASS rules= deviations=
decompression_failure FAIL rules=E5 deviations=
truncated_batch FAIL rules=C7 deviations=
partial_batch_failure FAIL rules=E2,E5,K7 deviations=
inconsistent_batch PASS rules= deviations=
close_consumer PASS rules= deviations=
reconnect PASS rules= deviations=
held_close_consumer PASS rules= deviations=
held_reconnect PASS rules= deviations=
flow_around_close PASS rules= deviations=
start_message_id PASS rules= deviations=
stale_epoch NOT-APPLICABLE rules= deviations=
unknown_consumer PASS rules= deviations=
negative_ack PASS rules= deviations=
slow_consumer PASS rules= deviations=
duplicate_redelivery PASS rules= deviations=
EOF
      ;;
    go)  # github.com/apache/pulsar-client-go v0.21.0
      cat <<'EOF'
complete_batches PASS rules= deviations=
partial_batches FAIL rules=E2,E5 deviations=
corrupt_checksum PASS rules= deviations=X1
unreadable_metadata PASS rules= deviations=X1
decompression_failure FAIL rules=E5 deviations=
truncated_batch FAIL rules=C7 deviations=
partial_batch_failure FAIL rules=K7 deviations=
inconsistent_batch PASS rules= deviations=
close_consumer PASS rules= deviations=
reconnect PASS rules= deviations=
held_close_consumer PASS rules= deviations=
held_reconnect PASS rules= deviations=
flow_around_close PASS rules= deviations=
start_message_id PASS rules= deviations=
stale_epoch NOT-APPLICABLE rules= deviations=
unknown_consumer PASS rules= deviations=
negative_ack PASS rules= deviations=
slow_consumer PASS rules= deviations=
duplicate_redelivery PASS rules= deviations=
EOF
      ;;
    rust)  # crates.io pulsar 6.9.1 (docs/findings/rust-*.md). corrupt_checksum and
      # unreadable_metadata: a message of the dropped connection may be counted into the new
      # window (a race; the random draws showed it, docs/findings/rust-corrupt-entry-drops-connection.md).
      cat <<'EOF'
complete_batches PASS rules= deviations=
partial_batches FAIL rules=E2,E5 deviations=
corrupt_checksum PASS rules= deviations= | corrupt_checksum FAIL rules=E2,E5 deviations=
unreadable_metadata PASS rules= deviations= | unreadable_metadata FAIL rules=E2,E5 deviations=
decompression_failure FAIL rules=E2,E5 deviations=
truncated_batch PASS rules= deviations=
partial_batch_failure FAIL rules=E2,E5,K7 deviations=
inconsistent_batch PASS rules= deviations=
close_consumer PASS rules= deviations=
reconnect PASS rules= deviations=
held_close_consumer PASS rules= deviations=
held_reconnect PASS rules= deviations=
flow_around_close PASS rules= deviations=
start_message_id PASS rules= deviations=
stale_epoch NOT-APPLICABLE rules= deviations=
unknown_consumer PASS rules= deviations=
negative_ack FAIL rules=E2,E5 deviations=
slow_consumer PASS rules= deviations=
duplicate_redelivery PASS rules= deviations=
EOF
      ;;
  esac
}

# Empty when NAME's runtime and consumer are installed; else why not.
official_client_missing() {
  case $1 in
    java)
      command -v java >/dev/null 2>&1 || { echo "no java runtime on the PATH"; return; }
      [ -f conformance/clients/java/target/consumer.jar ] ||
        echo "conformance/clients/java/target/consumer.jar is not built (ci/install-java-client.sh)"
      ;;
    cpp)
      [ -x conformance/clients/cpp/.venv/bin/python ] ||
        echo "conformance/clients/cpp/.venv is not installed (ci/install-python-client.sh)"
      ;;
    rust)
      [ -x conformance/clients/rust/permitcheck-rust-consumer ] ||
        echo "conformance/clients/rust/permitcheck-rust-consumer is not built (ci/install-rust-client.sh)"
      ;;
    go)
      [ -x conformance/clients/go/permitcheck-go-consumer ] ||
        echo "conformance/clients/go/permitcheck-go-consumer is not built (ci/install-go-client.sh)"
      ;;
  esac
}

# The signature of a conform text report: one line per scenario (see the top).
official_client_signature() {
  awk '
    /^Scenarios:/ { on = 1; next }
    /^Legacy rows/ { on = 0 }
    function flush() { if (name != "") print name, status, "rules=" rules, "deviations=" devs }
    on && /^  [A-Z-]+ [a-z_]+  \(/ {
      flush()
      status = $1; name = $2; rules = ""; devs = ""
      if (match($0, /rules [A-Z0-9,]+$/)) rules = substr($0, RSTART + 6)
      next
    }
    on && /known deviation \(not a failure\) X[0-9]+:/ {
      match($0, /\) X[0-9]+:/); d = substr($0, RSTART + 2, RLENGTH - 3)
      if (index("," devs ",", "," d ",") == 0) devs = devs == "" ? d : devs "," d
    }
    END { flush() }'
}

# official_client_compare PINNED NOW: prints each scenario whose line in NOW is none of its
# pinned outcomes, and each scenario only one of the two has; nothing when they agree.
official_client_compare() {
  awk '
    NR == FNR { split($0, w, " "); want[w[1]] = $0; order[++n] = w[1]; next }
    { split($0, w, " "); got[w[1]] = $0 }
    END {
      for (i = 1; i <= n; i++) {
        s = order[i]
        if (!(s in got)) { print "  " s ": pinned \"" want[s] "\", not run now"; continue }
        ok = 0; k = split(want[s], alt, / [|] /)
        for (j = 1; j <= k; j++) if (alt[j] == got[s]) ok = 1
        if (!ok) print "  " s ": pinned \"" want[s] "\", now \"" got[s] "\""
        delete got[s]
      }
      for (s in got) print "  " s ": not pinned, now \"" got[s] "\""
    }' "$1" "$2"
}

expect_client() {
  local name=$1 why report rc=0 start=$SECONDS
  why=$(official_client_missing "$name")
  if [ -n "$why" ]; then
    echo "ci/main: the $name client cannot run: $why" >&2
    echo "$name: not run: $why"
    return 1
  fi
  # Fixed cases only (each opens its window deterministically), no shrinking: the findings
  # are pinned, and the whole run stays within two minutes per client.
  report=$(build/cli/permitcheck conform --client-preset "$name" --cases 0 --max-shrinks 0 --timeout 50 \
             --trace-dir "build/counterexamples/conform-$name" 2>/dev/null) || rc=$?
  local took=$((SECONDS - start))
  printf '%s\n' "$report" | sed -n '/^Judged as:/p; /^Scenarios:/,/^Legacy rows/p' | sed '$d'
  printf '%s\n' "$report" | sed -n '/^Rules:/,/^$/p'
  # The numbers of each finding: the minimal case, its drain, wire totals and findings.
  printf '%s\n' "$report" | sed -n '/: minimal counterexample ==$/,/^Counterexample /p' |
    grep -E '^(==|first failing|drain:|wire trace:|client:|  line )'
  echo "$name: all scenarios in $took s (exit $rc)"
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then
    echo "ci/main: $name conform exited $rc: the client could not be driven" >&2
    return 1
  fi
  local wrong
  wrong=$(official_client_compare <(official_client_expected "$name") \
                                  <(printf '%s\n' "$report" | official_client_signature))
  if [ -n "$wrong" ]; then
    echo "ci/main: the $name client's findings differ from the pinned ones:"
    printf '%s\n' "$wrong"
    return 1
  fi
  echo "ci/main: $name shows exactly its pinned findings (conformance/README.md)"
}

expect_catalogue() {
  build/cli/permitcheck conform --catalogue 2>/dev/null
}
