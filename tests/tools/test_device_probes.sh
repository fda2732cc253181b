#!/usr/bin/env bash
# The device probes that tools/gpu-suite builds and runs on a GPU machine (tools/*.cu) compile
# here too, with the flags the suite gives them, so that a change to a header they include
# shows in CI rather than as a failed step of a device run. They are not run: they need a GPU.
# Run by ctest (tests/CMakeLists.txt) in builds with CUDA.
#
# Usage: test_device_probes.sh NVCC REPO
set -u
nvcc=$1 repo=$2
# shellcheck source=checks.sh
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"

compiles() {  # compiles PROBE NVCC_FLAGS...: tools/PROBE.cu builds
  local probe=$1 log
  shift
  if ! log=$("$nvcc" -std=c++17 "$@" "$repo/tools/$probe.cu" -o "$dir/$probe" 2>&1); then
    echo "FAIL: tools/$probe.cu does not compile:"
    echo "$log"
    failures=$((failures + 1))
  fi
}

compiles cluster-occupancy -arch=sm_90
compiles dsmem-stores -arch=sm_90a -I "$repo/src"
compiles l2-gather-reps -arch=sm_90
[ "$failures" -eq 0 ] && echo "PASS: device probes compile" || exit 1
