#!/usr/bin/env bash
# tools/hopper-cubin's refusals, which need no compiler: a wrong argument count exits 2; a
# missing folder, a folder that is no configured ninja build and a build without the asked
# Hopper TU exit 1, the last naming the formats and the configure flag. (Its compile itself
# runs where a 90a build exists: docs/testing.md.) Run by ctest (tests/CMakeLists.txt).
#
# Usage: test_hopper_cubin.sh HOPPER_CUBIN
set -u
tool=$1
# shellcheck source=checks.sh
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"

expect_exit "two arguments" 2 "$tool" a b
expect_exit "five arguments" 2 "$tool" a b c d e
expect_exit "a missing build folder" 1 "$tool" "$dir/none" fp8_v32 "$dir/x"
mkdir -p "$dir/plain"
expect_exit "a folder that is no build" 1 "$tool" "$dir/plain" fp8_v32 "$dir/x"
# A configured ninja build whose graph has no Hopper TU (as a build without 90a).
mkdir -p "$dir/build"
printf 'CMAKE_HOME_DIRECTORY:INTERNAL=%s\n' "$dir" >"$dir/build/CMakeCache.txt"
# $out is ninja's, not the shell's.
# shellcheck disable=SC2016
printf 'rule touch\n  command = touch $out\nbuild other: touch\n' >"$dir/build/build.ninja"
if command -v ninja >/dev/null; then
  out=$("$tool" "$dir/build" fp8_v32 "$dir/x" 2>&1)
  rc=$?
  expect "no TU: the exit" '^1$' "$rc"
  expect "no TU: names the flag and the formats" 'SMLA_CUDA_ARCHITECTURES=90a.*fp8_v32' \
    "$(tr '\n' ' ' <<<"$out")"
  # With the TU in the graph (its command is only listed, never run here), a TREE that does
  # not exist is still refused before anything compiles.
  # shellcheck disable=SC2016
  printf 'rule nvcc\n  command = false nvcc -c $out\n' >>"$dir/build/build.ninja"
  printf 'build src/CMakeFiles/smla_hopper.dir/cuda/hopper/attend_fp8_v32.cu.o: nvcc\n' \
    >>"$dir/build/build.ninja"
  out=$("$tool" "$dir/build" fp8_v32 "$dir/x" "$dir/none" 2>&1)
  expect "a missing source tree: named" "no folder $dir/none" "$out"
else
  echo "SKIP: no ninja here; the no-TU case is not checked"
fi
reject "no cubin written" '.' "$(ls "$dir"/x.* 2>/dev/null)"

exit $((failures > 0))
