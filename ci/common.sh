# Sourced by ci/main, ci/test and ci/fuzz: what their builds share.
#
#   source ci/common.sh
#   permitcheck_install_deps               # ci/install-deps.sh, then the launcher again
#   cmake -S . -B build "${PERMITCHECK_CMAKE_LAUNCHER[@]}" ...
#   phase_begin build; ...; phase_end      # prints "ci/NAME: phase build: 42 s" to stderr
#
# PERMITCHECK_CMAKE_LAUNCHER holds -DCMAKE_CXX_COMPILER_LAUNCHER=ccache when ccache is
# installed (ci/install-deps.sh installs it) and PERMITCHECK_CCACHE is not 0, else nothing.
# ccache keys on paths relative to the checkout (base_dir), so a fresh clone reuses what an
# earlier clone on the same machine compiled; a compiler, flag or source change misses.
permitcheck_find_ccache() {
  PERMITCHECK_CMAKE_LAUNCHER=()
  if [ "${PERMITCHECK_CCACHE:-1}" != 0 ] && command -v ccache >/dev/null 2>&1; then
    PERMITCHECK_CMAKE_LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
    export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}
    export CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
  fi
}
permitcheck_find_ccache
# Installs what is missing, then decides the launcher again: on a fresh machine ccache comes
# with ci/install-deps.sh, and a build configured without it would be configured again (a
# changed compile command rebuilds everything) by the next script that finds it.
permitcheck_install_deps() {
  bash ci/install-deps.sh || return
  permitcheck_find_ccache
}
# Ninja's progress line with the elapsed seconds, so a slow build shows where it is.
export NINJA_STATUS=${NINJA_STATUS:-"[%f/%t %es] "}

# The flags of the plain build: ci/main and ci/test share build/, so they must agree.
# -g1 keeps file and line in backtraces at a fraction of the compile time of full debug info.
PERMITCHECK_PLAIN_FLAGS="-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG"

PERMITCHECK_PHASES=()
_phase_name="" _phase_start=0
phase_begin() { _phase_name=$1; _phase_start=$SECONDS; }
phase_end() {
  local s=$((SECONDS - _phase_start))
  PERMITCHECK_PHASES+=("$_phase_name: $s s")
  echo "$(basename "$0"): phase $_phase_name: $s s" >&2
}
# Prints every phase with its seconds, one line each, on stdout.
phase_summary() {
  local p
  for p in "${PERMITCHECK_PHASES[@]}"; do echo "$(basename "$0"): phase $p"; done
}
