#!/usr/bin/env bash
# tools/failure-excerpt on hand-written logs of each kind of step: a sanitizer report keeps
# its access sites with the C++ parameter lists dropped (file:line in view), ctest's failed
# tests, pytest's FAILED lines, a build's error lines, the last lines of any other step, at most
# FAILURE_EXCERPT_LINES lines, and exit code 2 for a bad argument. Run by ctest
# (tests/CMakeLists.txt).
#
# Usage: test_failure_excerpt.sh FAILURE_EXCERPT
set -u
excerpt=$1
# shellcheck source=checks.sh
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"

cat >"$dir/racecheck.log" <<'EOF'
========= COMPUTE-SANITIZER
[ RUN      ] GpuAttend.TwoStreamsAtOnce
========= Error: Race reported between Write access at smla::hopper::write_results(const smla::Params &, const float (&)[128], int)+0x18ff0 in attend_common.cuh:200
=========     and Read access at smla::hopper::write_results(const smla::Params &, const float (&)[128], int)+0x19030 in attend_common.cuh:206 [32 hazards]
=========
[       OK ] GpuAttend.TwoStreamsAtOnce (3170 ms)
========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)
EOF
out=$("$excerpt" racecheck "$dir/racecheck.log")
expect "racecheck: the write site" '^========= Error: Race reported between Write access at smla::hopper::write_results\+0x18ff0 in attend_common\.cuh:200$' "$out"
expect "racecheck: the read site" '^=========     and Read access at smla::hopper::write_results\+0x19030 in attend_common\.cuh:206 \[32 hazards\]$' "$out"
reject "racecheck: test lines" 'RUN|OK|SUMMARY' "$out"

cat >"$dir/memcheck.log" <<'EOF'
========= COMPUTE-SANITIZER
========= Invalid __global__ read of size 16 bytes
=========     at smla::portable::attend_kernel(smla::portable::AttendParams)+0x2f0 in attend.cu:88
=========     by thread (3,0,0) in block (7,0,0)
=========     Address 0x7f0000000010 is out of bounds
========= ERROR SUMMARY: 1 error
EOF
out=$("$excerpt" memcheck "$dir/memcheck.log")
expect "memcheck: the access" '^========= Invalid __global__ read of size 16 bytes$' "$out"
expect "memcheck: the site" '^=========     at smla::portable::attend_kernel\+0x2f0 in attend\.cu:88$' "$out"

cat >"$dir/ctest.log" <<'EOF'
98% tests passed, 2 tests failed out of 190

Total Test time (real) =  50.12 sec

The following tests FAILED:
	 12 - Sampled/GpuAttendMatrix.Case/3 (Failed)
	 40 - GpuAttend.TwoStreamsAtOnce (Failed)
Errors while running CTest
EOF
out=$("$excerpt" ctest-gpu "$dir/ctest.log")
expect "ctest: heading" '^The following tests FAILED:$' "$out"
expect "ctest: first test" 'Sampled/GpuAttendMatrix\.Case/3 \(Failed\)' "$out"
expect "ctest: second test" 'GpuAttend\.TwoStreamsAtOnce \(Failed\)' "$out"
reject "ctest: the closing line" 'Errors while running' "$out"

cat >"$dir/pytest.log" <<'EOF'
tests/python/test_gpu.py ..F.
FAILED tests/python/test_gpu.py::test_sparse_prefill[bf16] - AssertionError: out
1 failed, 158 passed in 40.64s
EOF
out=$("$excerpt" pytest "$dir/pytest.log")
expect "pytest: the failed test" '^FAILED tests/python/test_gpu\.py::test_sparse_prefill\[bf16\]' "$out"
reject "pytest: the progress line" '\.\.F\.' "$out"

cat >"$dir/build.log" <<'EOF'
[1/3] Building CUDA object src/a.cu.o
FAILED: src/a.cu.o
src/a.cu(12): error: identifier "hi" is undefined
1 error detected in the compilation of "src/a.cu".
[2/3] Building CXX object src/b.cpp.o
ninja: build stopped: subcommand failed.
EOF
out=$("$excerpt" build "$dir/build.log")
expect "build: the compiler's error" 'src/a\.cu\(12\): error: identifier "hi" is undefined' "$out"
reject "build: lines without an error" 'Building CXX' "$out"

seq 1 20 >"$dir/bench.log"
out=$("$excerpt" bench-hopper "$dir/bench.log")
expect "other steps: the last line" '^20$' "$out"
reject "other steps: only the last five lines" '^15$' "$out"

for i in $(seq 1 6); do
  echo "========= Error: Race reported between Write access at f$i+0x1 in a.cuh:$i"
done >"$dir/many.log"
out=$(FAILURE_EXCERPT_LINES=3 "$excerpt" racecheck "$dir/many.log")
expect "line limit: the first report" 'f1\+0x1' "$out"
reject "line limit: the fourth report" 'f4\+0x1' "$out"

expect_exit "a missing log" 2 "$excerpt" racecheck "$dir/missing.log"
expect_exit "a missing argument" 2 "$excerpt" racecheck

[ "$failures" -eq 0 ] && echo "PASS: failure-excerpt" || exit 1
