#!/bin/sh
# The Hopper path must run on wgmma: fails unless the SASS of libsmla holds HGMMA (what wgmma
# compiles to) in a function of smla::hopper, whose mangled names contain "hopper". Run by
# ctest in builds with the Hopper path (tests/CMakeLists.txt); exits 77, which ctest reports
# as skipped, when no cuobjdump is found.
#
# Usage: check_hgmma.sh LIBRARY [CUOBJDUMP]   (CUOBJDUMP: the one CMake found, if any)
set -u
lib=$1
tool=${2:-}
if [ ! -x "$tool" ]; then
  tool=$(command -v cuobjdump)
fi
if [ -z "$tool" ] && [ -x /usr/local/cuda/bin/cuobjdump ]; then
  tool=/usr/local/cuda/bin/cuobjdump
fi
if [ -z "$tool" ]; then
  echo "SKIPPED: cuobjdump not found (not at '${2:-}', on PATH or in /usr/local/cuda/bin)"
  exit 77
fi

sass=$(mktemp)
trap 'rm -f "$sass"' EXIT
if ! "$tool" -sass "$lib" >"$sass"; then
  echo "FAIL: $tool -sass $lib failed"
  exit 1
fi
# One line per smla::hopper function: its HGMMA count (summed over the architectures that
# hold it). Succeeds when any has HGMMA.
awk -v lib="$lib" '
  /Function :/ {
    fn = $NF
    if (fn ~ /hopper/ && !(fn in hgmma)) { hgmma[fn] = 0; names[++n] = fn }
  }
  /HGMMA/ && fn ~ /hopper/ { hgmma[fn]++ }
  END {
    found = 0
    for (i = 1; i <= n; i++) {
      printf "%6d HGMMA  %s\n", hgmma[names[i]], names[i]
      if (hgmma[names[i]] > 0) found = 1
    }
    if (n == 0) print "FAIL: no smla::hopper function in the SASS of " lib
    else if (!found) print "FAIL: no HGMMA in the SASS of the smla::hopper functions of " lib
    else print "ok: the Hopper kernels of " lib " run on HGMMA"
    exit found ? 0 : 1
  }' "$sass"
