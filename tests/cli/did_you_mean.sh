#!/usr/bin/env bash
# usage: did_you_mean.sh PERMITCHECK
# A mistyped subcommand is a usage error (exit 2) that names the closest command, directly and
# through `permitcheck help`; a word close to none gets the list without a guess.
set -u
bin=$1
fail=0
expect() {  # expect WANT_RC WANT_TEXT ARGS...
  local want_rc=$1 want_text=$2 out rc=0
  shift 2
  out=$("$bin" "$@" 2>&1) || rc=$?
  if [ "$rc" -ne "$want_rc" ]; then echo "permitcheck $*: exit $rc, expected $want_rc: $out"; fail=1; fi
  if ! printf '%s\n' "$out" | grep -q -F -e "$want_text"; then
    echo "permitcheck $*: no '$want_text' in: $out"; fail=1
  fi
}
expect 2 'unknown command "valdate" (did you mean "validate"?)' valdate trace.jsonl
expect 2 'unknown command "confrom" (did you mean "conform"?)' confrom --list
expect 2 'unknown command "valdate" (did you mean "validate"?)' help valdate
expect 2 'unknown command "frobnicate"; the commands:' frobnicate
# ... listed as --help groups them: the user commands first, the maintainers' (review, check,
# prove, selfcheck) after every user command.
expect 2 'the commands: conform tap matrix real-broker validate render replay review' frobnicate
expect 2 'permitcheck validate: unknown option --formt (did you mean --format?)' validate --formt json trace.jsonl
expect 2 'permitcheck conform: unknown option --senarios (did you mean --scenarios?)' conform --senarios=complete_batches --list
expect 2 'permitcheck prove: unknown option --frobnicate' prove --frobnicate
expect 0 'permitcheck help COMMAND' help
expect 0 'Examples:' help validate
expect 0 'rulebook: the final rules of PIP-491 (revision D), ruleset rev-d' --version
[ "$fail" -eq 0 ] && echo "PASS"
exit "$fail"
