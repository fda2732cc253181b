#!/usr/bin/env bash
# tools/build-device-probe builds every device probe that tools/gpu-suite runs on a GPU machine
# (tools/*.cu) here too, so that a change to a header they include shows in CI rather than as
# a failed step of a device run (they are not run: they need a GPU); it refuses an unknown
# probe and a wrong argument count. Run by ctest (tests/CMakeLists.txt) in builds with CUDA.
#
# Usage: test_device_probes.sh NVCC BUILD_DEVICE_PROBE
set -u
nvcc=$1 build_probe=$2
# shellcheck source=checks.sh
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"

for probe in cluster-occupancy dsmem-stores l2-gather-reps; do
  if ! log=$(NVCC=$nvcc "$build_probe" "$probe" "$dir" 2>&1); then
    echo "FAIL: tools/$probe.cu does not build:"
    echo "$log"
    failures=$((failures + 1))
  fi
  expect "tools/$probe.cu built as OUT_DIR/$probe" '^yes$' "$([ -x "$dir/$probe" ] && echo yes)"
done
expect_exit "an unknown probe" 2 "$build_probe" nope "$dir"
expect_exit "one argument" 2 "$build_probe" l2-gather-reps

[ "$failures" -eq 0 ] && echo "PASS: device probes build" || exit 1
