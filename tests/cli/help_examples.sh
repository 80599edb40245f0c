#!/usr/bin/env bash
# usage: help_examples.sh PERMITCHECK
# Every subcommand listed by `permitcheck --help` has an example in its --help (and through
# `permitcheck help NAME`, the same text); the user commands are listed before the maintainers'.
set -u
bin=$1
fail=0
top=$("$bin" --help) || { echo "permitcheck --help exited $?"; exit 1; }
mapfile -t names < <(printf '%s\n' "$top" | sed -n 's/^  \([a-z][a-z-]*\)\( .*\)\{0,1\}$/\1/p')
if [ "${#names[@]}" -lt 9 ]; then
  echo "expected at least 9 subcommands in permitcheck --help, found ${#names[@]}: ${names[*]}"
  exit 1
fi
for name in "${names[@]}"; do
  help=$("$bin" "$name" --help 2>&1) || { echo "$name --help exited $?"; fail=1; continue; }
  if ! printf '%s\n' "$help" | grep -A1 -x 'Examples:' | grep -q "^  permitcheck $name"; then
    echo "no example in permitcheck $name --help (an 'Examples:' line, then '  permitcheck $name ...')"
    fail=1
  fi
  via_help=$("$bin" help "$name" 2>&1) || { echo "permitcheck help $name exited $?"; fail=1; continue; }
  [ "$via_help" = "$help" ] || { echo "permitcheck help $name differs from $name --help"; fail=1; }
done
user_line=$(printf '%s\n' "$top" | grep -n '^Commands:' | cut -d: -f1)
maint_line=$(printf '%s\n' "$top" | grep -n "^Commands for the suite's maintainers:" | cut -d: -f1)
if [ -z "$user_line" ] || [ -z "$maint_line" ] || [ "$user_line" -gt "$maint_line" ]; then
  echo "the user commands are not listed before the maintainers' in permitcheck --help"
  fail=1
fi
[ "$fail" -eq 0 ] && echo "PASS ${#names[@]} subcommands, each with an example: ${names[*]}"
exit "$fail"
