#!/usr/bin/env bash
# tools/bench-table on two hand-written `smla bench` logs: rows joined by shape across the
# logs, "-" for a row one log lacks, FAIL and "not run" instead of a ratio, the geometric
# mean over the passing rows only (all, prefill, decode), the count of rows whose outputs
# digests differ, the host seconds line, the SM clocks table where a log has `sm-clock` lines,
# the repetitions table where a log has `reps` lines, the energy table where a log has `energy`
# lines, the power table where a log has `power` lines, and exit code 2 for a bad argument.
# Run by ctest (tests/CMakeLists.txt).
#
# Usage: test_bench_table.sh BENCH_TABLE
set -u
table=$1
# shellcheck source=checks.sh
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"

header='workload shape format path time us tokens/s TFLOP/s GB/s %gemm %copy FlashMLA us ratio  check'
cat >"$dir/a.log" <<EOF
backend: cuda:0 NVIDIA H200 (cc 9.0, 132 SMs; SMLA_BACKEND=hopper)
ceilings: device-to-device copy 4252 GB/s, cuBLAS bf16 GEMM 8192^3 892 TFLOP/s
$header
prefill  T=4096 h_q=128 d_qk=576 topk=2048 s_kv=8192  bf16/64  hopper  7000.0  1.0  350.0  193  44%  5%  3500.0  0.50  pass (8 tokens x 128 heads vs float64: max |out err| 3.55e-05, outputs 0123abcd)
decode   b=2 s_q=2 h_q=128 d_qk=576 topk=2048 s_kv=32768 sink  fp8_v32/64  hopper  10.0  1.0  1.0  1  5%  3%  20.0  2.00  pass (4 tokens, outputs 00000001)
decode   b=64 s_q=2 h_q=40 d_qk=576 topk=2048 s_kv=32768 sink  fp8_v32/64  hopper  -  -  -  -  -  -  185.6  -  not run: the Hopper path does not cover h_q=40
Repetitions of each row: count, min / median / max us, (max - min) / median
reps | prefill T=4096 h_q=128 d_qk=576 topk=2048 s_kv=8192 | 20 | 6900.0 / 7000.0 / 7210.0 | 4.4%
reps | decode b=2 s_q=2 h_q=128 d_qk=576 topk=2048 s_kv=32768 sink | 20 | 9.9 / 10.0 / 10.2 | 3.0%
host wall time: data and warm-up 31.5 s, checks 4.2 s, timed runs 1.7 s
SM clock in each row's timed runs (NVML every 1 ms): samples, min / mean / max MHz, clock event reasons
sm-clock | prefill T=4096 h_q=128 d_qk=576 topk=2048 s_kv=8192 | 40 | 1695 / 1912 / 1980 | SwPowerCap
sm-clock | decode b=2 s_q=2 h_q=128 d_qk=576 topk=2048 s_kv=32768 sink | 3 | 1980 / 1980 / 1980 | Idle,SwPowerCap
Energy of each row's timed runs (NVML's counter; flushes and gaps included): mJ per repetition, mean W
energy | prefill T=4096 h_q=128 d_qk=576 topk=2048 s_kv=8192 | 2450.5 mJ | 655 W | 9 updates in 86.0 ms
energy | decode b=2 s_q=2 h_q=128 d_qk=576 topk=2048 s_kv=32768 sink | not resolved: 1 counter updates in 1.7 ms (the mean power needs two, 20 ms apart; more --reps give more)
Instant power in each row's timed runs (NVML's field, polled every 1 ms): mean W, readings, changes between them
power | decode b=2 s_q=2 h_q=128 d_qk=576 topk=2048 s_kv=32768 sink | 312 W | 3 readings, 1 changes
EOF
cat >"$dir/b.log" <<EOF
$header
prefill  T=4096 h_q=128 d_qk=576 topk=2048 s_kv=8192  bf16/64  hopper  3500.0  1.0  700.0  193  88%  5%  3500.0  1.00  pass (8 tokens, outputs 0123abce)
decode   b=2 s_q=2 h_q=128 d_qk=576 topk=2048 s_kv=32768 sink  fp8_v32/64  hopper  40.0  1.0  1.0  1  5%  3%  20.0  -  FAIL: max |out err| 2.0e-02
EOF

out=$("$table" new="$dir/a.log" old="$dir/b.log")
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: exit code $rc"; failures=$((failures + 1)); }
expect "heading" '^row .* new +old *$' "$out"
expect "prefill row, both logs" '^prefill T=4096 h_q=128 d_qk=576 topk=2048 s_kv=8192 +0\.50 \(7000\.0\) +1\.00 \(3500\.0\)' "$out"
expect "a failed check" '^decode b=2 .* +2\.00 \(10\.0\) +FAIL *$' "$out"
expect "a row the path does not cover, missing from the second log" '^decode b=64 .*h_q=40.* +not run +- *$' "$out"
# 0.50 and 2.00 in the first log; 1.00 alone in the second (its FAIL row does not count).
expect "geometric means" '^geometric mean of the ratios +1\.000 \(2 rows\) +1\.000 \(1 rows\)' "$out"
# Per kind: the first log's prefill row 0.50 and decode row 2.00; the second log has no
# passing decode row.
expect "prefill geometric means" '^geometric mean, prefill rows +0\.500 \(1 rows\) +1\.000 \(1 rows\)' "$out"
expect "decode geometric means" '^geometric mean, decode rows +2\.000 \(1 rows\) +- *$' "$out"
# Digests: the prefill row's differ; the decode row failed in the second log (no digest).
expect "outputs digests" '^outputs digests unlike column 1 +- +1 of 1 rows *$' "$out"
same=$("$table" new="$dir/a.log" again="$dir/a.log")
expect "outputs digests of one log twice" '^outputs digests unlike column 1 +- +0 of 2 rows *$' \
  "$same"
# The second log predates the host-time line.
expect "host seconds" '^host s: data / checks / timed runs +31\.5 / 4\.2 / 1\.7 +- *$' "$out"

# The SM clocks: the first log's rows; the second log has none (an older bench).
expect "clock heading" '^row \(SM MHz in the timed runs: mean \(min\)\) +new +old *$' "$out"
expect "a row's clocks" '^prefill T=4096 h_q=128 d_qk=576 topk=2048 s_kv=8192 +1912 \(1695\) +- *$' \
  "$out"
expect "clock reasons, each once" '^clock event reasons seen +SwPowerCap,Idle +- *$' "$out"
# The repetitions' spread: the first log's rows; the second log has none.
expect "repetitions heading" '^row \(repetitions: \(max - min\) / median \(min us\)\) +new +old *$' \
  "$out"
expect "a row's repetitions" '^decode b=2 .* +3\.0% \(9\.9\) +- *$' "$out"
# The energy: the first log's prefill row only (its decode row's counter did not resolve).
expect "energy heading" '^row \(energy: mJ per repetition \(mean W\)\) +new +old *$' "$out"
expect "a row's energy" '^prefill T=4096 h_q=128 d_qk=576 topk=2048 s_kv=8192 +2450\.5 \(655\) +- *$' \
  "$out"
expect "a row without energy" '^decode b=2 s_q=2 h_q=128 d_qk=576 topk=2048 s_kv=32768 sink +- +- *$' \
  "$out"
# The instant power: the first log's decode row, the only one with a power line.
expect "power heading" '^row \(instant power: mean W \(changes\)\) +new +old *$' "$out"
expect "a row's power" '^decode b=2 s_q=2 h_q=128 d_qk=576 topk=2048 s_kv=32768 sink +312 \(1\) +- *$' \
  "$out"
# A log from before the counter's updates were printed: its energy line ends after the watts.
cat >"$dir/c.log" <<EOF
$header
prefill  T=4096 h_q=128 d_qk=576 topk=2048 s_kv=8192  bf16/64  hopper  3500.0  1.0  700.0  193  88%  5%  3500.0  1.00  pass (8 tokens, outputs 0123abce)
energy | prefill T=4096 h_q=128 d_qk=576 topk=2048 s_kv=8192 | 2400.0 mJ | 690 W
EOF
expect "an older log's energy" \
  '^prefill T=4096 h_q=128 d_qk=576 topk=2048 s_kv=8192 +2400\.0 \(690\) *$' \
  "$("$table" older="$dir/c.log")"
plain=$("$table" old="$dir/b.log")
for table_title in 'SM MHz' 'repetitions:' 'energy:' 'instant power:'; do
  if grep -q "$table_title" <<<"$plain"; then
    echo "FAIL: a '$table_title' table without its lines"
    failures=$((failures + 1))
  fi
done

expect_exit "an unreadable log" 2 "$table" new="$dir/missing.log"
expect_exit "no arguments" 2 "$table"

[ "$failures" -eq 0 ] && echo "PASS: bench-table" || exit 1
