#!/usr/bin/env bash
# usage: example_traces.sh PERMITCHECK SOURCE_DIR
# Each docs/examples/*.jsonl validates as its first line says: `# permitcheck-expect: pass`
# (exit 0, no violation) or `# permitcheck-expect: violation R1 R2 ...` (exit 1, and exactly
# those rule IDs among the violations). The violation docs/instrumenting.md quotes for
# client-late-return.jsonl is the one validate reports (its line and rule).
set -u
bin=$1
src=$2
fail=0 count=0
for trace in "$src"/docs/examples/*.jsonl; do
  count=$((count + 1))
  name=${trace#"$src"/}
  expect=$(head -n 1 "$trace")
  case "$expect" in
    "# permitcheck-expect: pass") want_rc=0 want_rules="" ;;
    "# permitcheck-expect: violation "*) want_rc=1 want_rules=$(printf '%s\n' ${expect#"# permitcheck-expect: violation "} | sort -u | tr '\n' ' ') ;;
    *) echo "$name: first line is not '# permitcheck-expect: pass|violation RULE...'"; fail=1; continue ;;
  esac
  rc=0
  out=$("$bin" validate --no-progress "$trace" 2>&1) || rc=$?
  rules=$(printf '%s\n' "$out" | sed -n 's/^line [0-9]*: \([A-Z][0-9]*\) .*/\1/p' | sort -u | tr '\n' ' ')
  if [ "$rc" -ne "$want_rc" ] || [ "$rules" != "$want_rules" ]; then
    echo "$name: exit $rc with rules '$rules', expected exit $want_rc with '$want_rules':"
    printf '%s\n' "$out"
    fail=1
  fi
  if [ "$name" = docs/examples/client-late-return.jsonl ]; then
    first=$(printf '%s\n' "$out" | grep -m1 -o '^line [0-9]*: [A-Z][0-9]*')
    if ! grep -q -F "$first " "$src/docs/instrumenting.md"; then
      echo "docs/instrumenting.md does not quote '$first' for $name"
      fail=1
    fi
  fi
done
if [ "$count" -lt 4 ]; then echo "only $count example traces in docs/examples"; fail=1; fi
[ "$fail" -eq 0 ] && echo "PASS $count example traces"
exit "$fail"
