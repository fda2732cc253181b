#!/usr/bin/env bash
# tools/sass-loops on hand-written SASS (as tools/hopper-cubin writes it): the loops of each
# kernel by backward branch, their instructions, HGMMAs, local accesses and shared loads, the
# loads in flight at each first read (a later load of the same registers unread does not count),
# --widths, --kernel, --min-length, and exit code 1 for a kernel that is not there.
# Run by ctest (tests/CMakeLists.txt).
#
# Usage: test_sass_loops.sh SASS_LOOPS
set -u
loops=$1
# shellcheck source=checks.sh
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"

cat >"$dir/k.sass" <<'SASS'
	.target	sm_90a

//--------------------- .text._Z4scanv --------------------------
	.section	.text._Z4scanv,"ax",@progbits
.text._Z4scanv:
                 MOV R1, c[0x0][0x28] ;
.L_x_1:
                 LDS.128 R12, [R3] ;
                 LDS.128 R16, [R3+0x10] ;
                 LDS.64 R20, [R3+0x20] ;
                 LDS.U8 R22, [R3+0x30] ;
                 HGMMA.64x32x16.F32.BF16 R152, gdesc[UR16], R152 ;
                 HMNMX2.BF16_V2.NAN.XORSIGN R12, |R12|, |R16|, !PT ;
                 STL [R1], R13 ;
                 HMNMX2.BF16_V2.NAN.XORSIGN R9, |R21|, |R22|, !PT ;
                 LDL R9, [R1] ;
                 @!PT LDS RZ, [RZ] ;
                 @P0 BRA `(.L_x_1) ;
                 EXIT ;
//--------------------- .text._Z5otherv --------------------------
	.section	.text._Z5otherv,"ax",@progbits
.text._Z5otherv:
.L_x_2:
                 LDS.128 R4, [R3] ;
                 LDS.128 R4, [R3+0x10] ;
                 FADD R8, R4, R5 ;
                 @P0 BRA `(.L_x_2) ;
                 EXIT ;
SASS

out=$("$loops" "$dir/k.sass" --min-length 1)
expect "the first kernel's name" '^_Z4scanv$' "$out"
# The first fold reads two loads while all four are unread (4 loads, 16 + 16 + 8 + 4 = 44
# bytes), the second the other two (2, 12): means 3.0 loads and 28 bytes; the predicated-off
# LDS RZ is listed but never in flight.
expect "the scan loop: its lines, 11 instructions, 1 HGMMA, 2 local, 5 LDS, loads in flight" \
  '^ +7-18 +11 +1 +2 +5 +3\.0 +28$' "$out"
expect "the second kernel" '^_Z5otherv$' "$out"
expect "a load overwritten unread is not in flight" '^ +23-27 +4 +0 +0 +2 +1\.0 +16$' "$out"

out=$("$loops" "$dir/k.sass" --min-length 1 --widths 64,128 --kernel scan)
# Without the U8 load: (3 loads, 40 bytes) twice, then (1, 8): means 2.3 and 29.
expect "--widths 64,128: the U8 load left out" '^ +7-18 +11 +1 +2 +5 +2\.3 +29$' "$out"
reject "--kernel scan: the other kernel left out" '_Z5otherv' "$out"

out=$("$loops" "$dir/k.sass")
reject "--min-length 200 by default: no loop of these" '^ +[0-9]+-[0-9]+ ' "$out"
expect_exit "a kernel that is not there" 1 "$loops" "$dir/k.sass" --kernel missing

[ "$failures" -eq 0 ] && echo "PASS: sass-loops" || exit 1
