#!/usr/bin/env bash
# tools/bench-env-ab with a stand-in for smla that prints a one-row bench log whose time
# depends on the variable: the values alternate round by round, '-' runs with the variable
# unset (not set to '-'), the bench arguments reach smla, every run becomes a column of the
# table, and bad arguments exit 2. Run by ctest (tests/CMakeLists.txt).
#
# Usage: test_bench_env_ab.sh BENCH_ENV_AB
set -u
ab=$1
# shellcheck source=checks.sh
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"

# The stand-in: records each run's value and arguments; the unset run takes 10 us, hopper 5.
cat >"$dir/smla" <<STANDIN
#!/usr/bin/env bash
echo "\${SMLA_BACKEND-unset} \$*" >>"$dir/runs"
us=10.0
ratio=2.00
if [ "\${SMLA_BACKEND-unset}" = hopper ]; then us=5.0; ratio=4.00; fi
echo 'workload shape format path time us tokens/s TFLOP/s GB/s %gemm %copy FlashMLA us ratio  check'
echo "decode   b=2 s_q=2 h_q=128 d_qk=576 topk=2048 s_kv=32768 sink  fp8_v32/64  hopper  \$us  1.0  1.0  1  5%  3%  20.0  \$ratio  pass (4 tokens)"
STANDIN
chmod +x "$dir/smla"

out=$(SMLA_BACKEND=portable OUT="$dir/logs" "$ab" "$dir/smla" SMLA_BACKEND - \
  hopper 2 -- --backend hopper --rows decode)
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: exit code $rc"; failures=$((failures + 1)); }
runs=$(tr '\n' '|' <"$dir/runs")
args="bench --backend hopper --rows decode"
expected="unset $args|hopper $args|unset $args|hopper $args|"
# '-' unsets the variable even where the caller's environment sets it (portable here).
if [ "$runs" != "$expected" ]; then
  echo "FAIL: runs '$runs', expected '$expected'"
  failures=$((failures + 1))
fi
expect "one column per run" '^row .* +unset#1 +hopper#1 +unset#2 +hopper#2 *$' "$out"
expect "each run's time" \
  '^decode b=2 .* +2\.00 \(10\.0\) +4\.00 \(5\.0\) +2\.00 \(10\.0\) +4\.00 \(5\.0\)' "$out"
if [ ! -s "$dir/logs/bench-hopper-2.log" ]; then
  echo "FAIL: no log in OUT"
  failures=$((failures + 1))
fi

expect_exit "too few arguments" 2 "$ab" "$dir/smla" SMLA_BACKEND -
expect_exit "ROUNDS not a number" 2 "$ab" "$dir/smla" SMLA_BACKEND - hopper two

[ "$failures" -eq 0 ] && echo "PASS: bench-env-ab" || exit 1
