#!/usr/bin/env bash
# usage: deb_install.sh BUILD_DIR WORK_DIR
# Builds the Debian package from BUILD_DIR (cpack -G DEB, reusing the built binaries), unpacks it
# into a fresh root under WORK_DIR (dpkg-deb -x) and runs the installed permitcheck from there:
# --version, validate on the installed example traces (a pass, exit 0; a violation, exit 1, rule
# K7) and conform --list-clients. Its Depends line must name Debian packages installed on this
# machine (dpkg-shlibdeps computed it from the binaries), and the installed binary must find
# every library it links. Prints the package's size. Exit 0 pass, 1 fail, 77 skipped (no
# cpack or dpkg-deb).
set -u
build=$1
work=$2
for tool in cpack dpkg-deb dpkg-query ldd; do
  command -v "$tool" >/dev/null 2>&1 || { echo "SKIP: no $tool"; exit 77; }
done
rm -rf "$work"
mkdir -p "$work/out" "$work/root"
fail() { echo "FAIL: $*"; exit 1; }

(cd "$build" && cpack -G DEB -B "$work/out") >"$work/cpack.log" 2>&1 ||
  { cat "$work/cpack.log"; fail "cpack -G DEB"; }
debs=("$work"/out/permitcheck_*.deb)
[ -f "${debs[0]}" ] || { cat "$work/cpack.log"; fail "cpack made no permitcheck_*.deb"; }
deb=${debs[0]}

depends=$(dpkg-deb -f "$deb" Depends)
[ -n "$depends" ] || fail "the package declares no Depends"
for dep in $(printf '%s\n' "$depends" | tr ',' '\n' | sed 's/[ (].*//; s/^ *//' | sort -u); do
  [ -z "$dep" ] && continue
  dpkg-query -W -f='${Status}' "$dep" 2>/dev/null | grep -q "install ok installed" ||
    fail "Depends names $dep, which is not an installed Debian package"
done

dpkg-deb -x "$deb" "$work/root"
bin=$work/root/usr/bin/permitcheck
docs=$work/root/usr/share/doc/permitcheck
[ -x "$bin" ] || fail "no usr/bin/permitcheck in the package"
[ -x "$work/root/usr/bin/permitcheck-reference-client" ] || fail "no usr/bin/permitcheck-reference-client"
[ -f "$work/root/usr/share/permitcheck/clients/go/main.go" ] || fail "no shipped consumer sources"
[ -f "$docs/README.md" ] || fail "no README.md in usr/share/doc/permitcheck"
if ldd "$bin" | grep -q 'not found'; then ldd "$bin"; fail "a library of the installed binary is not found"; fi
find "$work/root" \( -name node_modules -o -name '.venv*' -o -name 'target*' \) | grep -q . &&
  fail "installed client builds (node_modules, .venv, target) reached the package"

cd "$work"  # not a source checkout
"$bin" --version | grep -q '^permitcheck ' || fail "permitcheck --version"
"$bin" validate --no-progress "$docs/docs/examples/client-pass.jsonl" >"$work/pass.txt" 2>&1 ||
  { cat "$work/pass.txt"; fail "validate of client-pass.jsonl did not exit 0"; }
rc=0
"$bin" validate --no-progress "$docs/docs/examples/client-over-return.jsonl" >"$work/violation.txt" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || { cat "$work/violation.txt"; fail "validate of client-over-return.jsonl exited $rc, expected 1"; }
grep -q '^line [0-9]*: K7 ' "$work/violation.txt" || { cat "$work/violation.txt"; fail "no K7 violation reported"; }
"$bin" conform --list-clients >"$work/clients.txt" 2>&1 || { cat "$work/clients.txt"; fail "conform --list-clients"; }
for client in java cpp go pulsar-flex reference; do
  grep -q "^$client	" "$work/clients.txt" || { cat "$work/clients.txt"; fail "--list-clients lacks $client"; }
done

size=$(stat -c %s "$deb")
installed=$(dpkg-deb -f "$deb" Installed-Size)
echo "PASS $(basename "$deb"): $size bytes ($((size / 1024)) KiB), installed size $installed KiB"
echo "Depends: $depends"
