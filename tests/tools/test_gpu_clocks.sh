#!/usr/bin/env bash
# tools/gpu-clocks-summary on a hand-written nvidia-smi CSV (busy samples only, the clock's
# range, the largest power and temperature, the event reasons by name; all samples, said so,
# where none is busy; a missing CSV), and
# tools/with-gpu-clocks with a stand-in for nvidia-smi (the command's exit status, the
# samples, the older reasons field where the newer one is refused, no sampler left running)
# and without one. Run by ctest (tests/CMakeLists.txt).
#
# Usage: test_gpu_clocks.sh WITH_GPU_CLOCKS GPU_CLOCKS_SUMMARY
set -u
with_clocks=$1
summary=$2
# shellcheck source=checks.sh
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"

cat >"$dir/bench.csv" <<'CSV'
timestamp, clocks.current.sm [MHz], power.draw [W], temperature.gpu, utilization.gpu [%], reasons
2026/12/07 10:00:00.000, 1980, 90.10, 40, 0, 0x0000000000000001
2026/12/07 10:00:00.100, 1755, 690.40, 61, 100, 0x0000000000000004
2026/12/07 10:00:00.200, 1830, 650.00, 63, 97, 0x0000000000000000
2026/12/07 10:00:00.300, 1980, 700.90, 62, 88, 0x0000000000000040
2026/12/07 10:00:00.400, [N/A], [N/A], 62, 100, 0x0000000000000000
CSV
out=$("$summary" bench-hopper="$dir/bench.csv" bench-none="$dir/missing.csv")
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: summary exit code $rc"; failures=$((failures + 1)); }
# Busy: the three samples at >= 50% with a clock; the idle one and the one without a clock out.
expect "busy and all samples, the clock's range" \
  '^bench-hopper +3 / 4 +1755 / 1830 / 1980 +701 +63  SwPowerCap HwThermal$' "$out"
reject "an idle sample's reason" 'Idle' "$out"
expect "a missing CSV" '^bench-none +no samples$' "$out"
# No sample at >= 50%: all samples count, and the line says so.
cat >"$dir/idle.csv" <<'CSV'
timestamp, clocks.current.sm [MHz], power.draw [W], temperature.gpu, utilization.gpu [%], reasons
2026/12/07 10:00:00.000, 1980, 90.10, 40, 0, 0x0000000000000001
2026/12/07 10:00:00.100, 1695, 205.80, 47, 46, 0x0000000000000004
CSV
idle=$("$summary" bench-idle="$dir/idle.csv")
expect "all samples counted where none is busy" \
  '^bench-idle +0 / 2 all +1695 / 1838 / 1980 +206 +47  Idle SwPowerCap$' "$idle"
expect_exit "a spec without '='" 2 "$summary" "$dir/bench.csv"
expect_exit "no spec" 2 "$summary"

# The stand-in for nvidia-smi: refuses the newer reasons field (an older driver), records each
# call, and with -lms prints a header and then a sample every 50 ms until it is killed.
mkdir -p "$dir/bin"
cat >"$dir/bin/nvidia-smi" <<STANDIN
#!/usr/bin/env bash
echo "\$*" >>"$dir/calls"
case "\$*" in
  *-lms*)
    echo \$\$ >"$dir/sampler.pid"
    echo "timestamp, clocks.current.sm [MHz], power.draw [W], temperature.gpu, utilization.gpu [%]"
    while true; do
      echo "2026/12/07 10:00:00.000, 1980, 500.00, 50, 100, 0x0000000000000000"
      sleep 0.05
    done ;;
  *clocks_event_reasons*) exit 6 ;;
  *) echo 0x0000000000000000 ;;
esac
STANDIN
chmod +x "$dir/bin/nvidia-smi"
PATH="$dir/bin:$PATH" "$with_clocks" "$dir/run.csv" bash -c 'sleep 0.4; exit 3'
rc=$?
if [ $rc -ne 3 ]; then
  echo "FAIL: with-gpu-clocks exit code $rc, not the command's 3"
  failures=$((failures + 1))
fi
samples=$(grep -c '^2026' "$dir/run.csv" 2>/dev/null)
if [ "${samples:-0}" -lt 2 ]; then
  echo "FAIL: $samples samples in the CSV"
  failures=$((failures + 1))
fi
sampler_calls=$(grep -- 'clocks_throttle_reasons.active' "$dir/calls")
expect "the older reasons field" '-lms 100' "$sampler_calls"
sleep 0.2
if [ -s "$dir/sampler.pid" ] && kill -0 "$(cat "$dir/sampler.pid")" 2>/dev/null; then
  echo "FAIL: the sampler still runs after the command"
  kill "$(cat "$dir/sampler.pid")"
  failures=$((failures + 1))
fi

# Without nvidia-smi on PATH (only bash there): the command alone, no CSV.
mkdir -p "$dir/nobin"
ln -s "$(command -v bash)" "$dir/nobin/bash"
PATH="$dir/nobin" "$with_clocks" "$dir/none.csv" bash -c 'exit 4'
rc=$?
if [ $rc -ne 4 ]; then
  echo "FAIL: without nvidia-smi, exit code $rc, not 4"
  failures=$((failures + 1))
fi
[ ! -e "$dir/none.csv" ] || { echo "FAIL: a CSV without nvidia-smi"; failures=$((failures + 1)); }
expect_exit "no command" 2 "$with_clocks" "$dir/x.csv"

[ "$failures" -eq 0 ] && echo "PASS: gpu-clocks" || exit 1
