#!/usr/bin/env bash
# tools/profile-stalls on a hand-written ncu source page (gzipped, as tools/profile-row writes
# it): the regions cut at USETMAXREG, each region's samples, executed instructions and stall
# shares, its hottest instructions first with their main reasons, --top, a plain CSV read as
# well, one region for a kernel without USETMAXREG, and exit code 1 for a file without the
# header; with ncu's memory columns, each region's L1 line (shared wavefronts by instruction
# kind, largest first, --kinds, and global tag requests; none for a region without either).
# Run by ctest (tests/CMakeLists.txt).
#
# Usage: test_profile_stalls.sh PROFILE_STALLS
set -u
stalls=$1
# shellcheck source=checks.sh
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"

columns='"Address","Source","Warp Stall Sampling (All Samples)","Instructions Executed"'
columns+=',"stall_long_sb","stall_wait","stall_long_sb (Not Issued)"'
columns+=',"L1 Wavefronts Shared","L1 Tag Requests Global"'
{
  echo '"Kernel Name","void k(int)",'
  echo "$columns"
  echo '"0x1000","      LDC R1, c[0x0][0x28]","2","10","0","2","9","0","0"'
  echo '"0x1010","      USETMAXREG.TRY_ALLOC.CTAPOOL UP0, 0xc8","0","10","0","0","0","0","0"'
  echo '"0x1020","      FMUL R9, R166, UR28","10","40","2","8","0","0","0"'
  echo '"0x1030","      @!P0  BRA 0x2000","30","40","30","0","0","0","0"'
  echo '"0x1032","      HGMMA.64x32x16.F32.BF16 R1, gdesc[UR2]","0","4","0","0","0","3,000,000","0"'
  echo '"0x1034","      LDS.128 R12, [R3]","0","4","0","0","0","1,000,000","0"'
  echo '"0x1036","      @P1 LDS.128 R16, [R3+0x10]","0","4","0","0","0","1,000,000","0"'
  echo '"0x1038","      STS [R5], R9","0","4","0","0","0","500,000","0"'
  echo '"0x1040","      USETMAXREG.DEALLOC.CTAPOOL 0x68","0","5","0","0","0","0","0"'
  echo '"0x1050","      LDG.E.128 R8, desc[UR26][R2.64]","5","20","0","5","0","0","2,500,000"'
  echo '"0x1060","      SHF.R.U32.HI R50, RZ, 0x10, R8","15","20","12","3","0","0","0"'
  echo '"0x1070","      STS.128 [R4], R8","0","20","0","0","0","1,500,000","0"'
} >"$dir/page.csv"
gzip -c "$dir/page.csv" >"$dir/page.sass.csv.gz"

out=$("$stalls" "$dir/page.sass.csv.gz")
expect "the kernel's name" '^void k\(int\)$' "$out"
expect "the prologue" '^== prologue \(before any USETMAXREG\), from \+0: 2 samples \(3\.2% of the kernel.s\), 10 warp instructions$' "$out"
expect "the consumers' region" '^== after USETMAXREG.TRY_ALLOC \(consumers\), from \+10: 40 samples \(64\.5% of the kernel.s\), 106 warp instructions$' "$out"
expect "the producer's region" '^== after USETMAXREG.DEALLOC \(producer\), from \+40: 20 samples \(32\.3% of the kernel.s\), 65 warp instructions$' "$out"
l1_consumers='^   L1: 5\.5M shared wavefronts \(78\.6% of the kernel.s\): HGMMA\.64x32x16 3\.0M, '
l1_consumers+='LDS\.128 2\.0M, STS 0\.5M; 0\.0M global tag requests$'
expect "the consumers' L1 line, predicated loads counted by kind" "$l1_consumers" "$out"
l1_producer='^   L1: 1\.5M shared wavefronts \(21\.4% of the kernel.s\): STS\.128 1\.5M; '
l1_producer+='2\.5M global tag requests$'
expect "the producer's L1 line" "$l1_producer" "$out"
reject "no L1 line for the prologue, which has no memory accesses" 'L1: 0\.0M shared' "$out"
expect "the consumers' shares" '^   long_sb 80\.0%, wait 20\.0%$' "$out"
expect "the producer's shares" '^   long_sb 60\.0%, wait 40\.0%$' "$out"
expect "the hottest consumer instruction with its reason" '^   \+00030  75\.0%  @!P0  BRA 0x2000 +long_sb 30$' "$out"
expect "the next one with both reasons" '^   \+00020  25\.0%  FMUL R9, R166, UR28 +wait 8, long_sb 2$' "$out"
reject "a Not Issued column counted as a reason" 'Not Issued|long_sb 9' "$out"
hottest=$(grep -n 'BRA 0x2000' <<<"$out" | cut -d: -f1)
next=$(grep -n 'FMUL' <<<"$out" | cut -d: -f1)
[ "${hottest:-0}" -lt "${next:-0}" ] || { echo "FAIL: hottest first"; failures=$((failures + 1)); }

out=$("$stalls" "$dir/page.csv" --top 1 --kinds 1)
expect "a plain CSV, --top 1: the producer's hottest" '^   \+00060  75\.0%  SHF\.R\.U32\.HI' "$out"
reject "--top 1: no second instruction" 'LDG\.E\.128' "$out"
expect "--kinds 1: the largest kind alone" \
  '^   L1: 5\.5M shared wavefronts \(78\.6% of the kernel.s\): HGMMA\.64x32x16 3\.0M; ' "$out"

grep -v USETMAXREG "$dir/page.csv" >"$dir/flat.csv"
out=$("$stalls" "$dir/flat.csv")
expect "a kernel without USETMAXREG: one region" '^== the whole kernel, from \+0: 62 samples \(100\.0% of the kernel.s\), 166 warp instructions$' "$out"

echo '"Kernel Name","void k(int)",' >"$dir/bad.csv"
expect_exit "a page without the header" 1 "$stalls" "$dir/bad.csv"

[ "$failures" -eq 0 ] && echo "PASS: profile-stalls" || exit 1
