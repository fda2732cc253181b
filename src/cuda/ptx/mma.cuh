// mma.sync wrappers (sm_80+). One function per instruction form; the fragment layouts are
// the PTX ISA's ("Matrix Fragments for mma.m16n8k16"), which ldmatrix produces directly.
#pragma once

#include <cstdint>

namespace smla::ptx {

// mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32: d[16x8] (+)= a[16x16] * b[16x8].
// a: 4 regs of 2 bf16 (row-major A), b: 2 regs of 2 bf16 (column-major B), c/d: 4 f32.
__device__ __forceinline__ void mma_m16n8k16_bf16_f32(float (&d)[4], const uint32_t (&a)[4],
                                                      const uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

}  // namespace smla::ptx
