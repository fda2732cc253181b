// wgmma wrappers (sm_90a): warpgroup matrix multiply-accumulate, B (and A, unless A comes from
// registers) in shared memory, described by 64-bit matrix descriptors (PTX ISA, "Matrix
// Descriptor Format"). Every operand tile smla feeds to wgmma uses the 128-byte swizzle: rows
// of 64 bf16 (128 B), eight rows (1024 B) per swizzle atom, 16-byte chunk c of row r stored at
// chunk c ^ (r % 8). Tiles start on 1024-byte boundaries, so the swizzle phase of a row is its
// index mod 8.
//
// Accumulator fragments (m64nN, f32, N/2 registers per thread): warp w of the warpgroup owns
// rows 16w + lane/4 (registers 4j, 4j+1) and 16w + lane/4 + 8 (registers 4j+2, 4j+3), at
// columns 8j + 2 * (lane % 4) + {0, 1}.
//
// Only compiled for sm_90a (the callers guard with __CUDA_ARCH_FEAT_SM90_ALL).
#pragma once

#include <cstdint>

#include "cuda/ptx/ldmatrix.cuh"      // smem_u32
#include "cuda/ptx/shared_load.cuh"  // opaque

namespace smla::ptx {

// Byte offset of bf16 element (row, col) inside a 128-byte-swizzled tile of 64-column rows.
__device__ __forceinline__ uint32_t sw128_offset(int row, int col) {
  return static_cast<uint32_t>(row * 128 + ((((col >> 3) ^ row) & 7) << 4) + (col & 7) * 2);
}

// A matrix descriptor of a 128-byte-swizzled operand at `smem`.
//   K-major operand (rows of the M/N dimension, K contiguous): sbo_bytes = 1024, the step
//     between 8-row groups; lbo is unused by the hardware for this layout (pass 0).
//   MN-major operand (rows of the K dimension, M/N contiguous, as V is for O = P·V):
//     lbo_bytes = the step between 64-column blocks of M/N, sbo_bytes = 1024, the step
//     between 8-row groups of K.
__device__ __forceinline__ uint64_t sw128_desc(const void* smem, uint32_t lbo_bytes,
                                               uint32_t sbo_bytes) {
  const uint64_t addr = smem_u32(smem);
  return ((addr & 0x3FFFF) >> 4) | (uint64_t{(lbo_bytes >> 4) & 0x3FFF} << 16) |
         (uint64_t{(sbo_bytes >> 4) & 0x3FFF} << 32) | (uint64_t{1} << 62);
}

// The descriptor of the operand `bytes` further on in shared memory: the start address is the
// low 14-bit field in 16-byte units, and every shared-memory address fits it, so the step is
// one 32-bit add of a constant to the low word (no carry can reach the high word, and no
// field arithmetic per wgmma).
// `high` is the high word of the result: desc's own, or opaque_desc_high's copy of it.
__device__ __forceinline__ uint64_t desc_step(uint64_t desc, int bytes, uint32_t high) {
  const uint32_t lo = static_cast<uint32_t>(desc) + static_cast<uint32_t>(bytes >> 4);
  return (uint64_t{high} << 32) | lo;
}
__device__ __forceinline__ uint64_t desc_step(uint64_t desc, int bytes) {
  return desc_step(desc, bytes, static_cast<uint32_t>(desc >> 32));
}

// desc's high word (sbo and swizzle mode, one constant for every descriptor smla builds) as a
// value ptxas cannot fold, for desc_step: a constant high word is written into each wgmma's
// operand registers again before every wgmma (a UMOV per descriptor), a value stays in them.
// It is ORed with the dynamic shared-memory size shifted past its range (under 2^30 bytes, so
// 0). `operand` (0 for A, 1 for B) makes the two words distinct values: a wgmma's A and B
// descriptors sit in one register quad, and one value would be copied into both slots.
__device__ __forceinline__ uint32_t opaque_desc_high(uint64_t desc, int operand) {
  uint32_t smem_bytes;
  asm volatile("mov.u32 %0, %%dynamic_smem_size;" : "=r"(smem_bytes));
  return static_cast<uint32_t>(desc >> 32) | (smem_bytes >> (30 + operand));
}

// The descriptor, unknown to the compiler from here on (ptx::opaque on its address word):
// descriptors stepped from it are computed where they are used instead of hoisted out of a
// loop, where a kernel near its register limit would spill them.
__device__ __forceinline__ uint64_t opaque_desc(uint64_t desc) {
  return (desc & 0xFFFFFFFF00000000ull) | opaque(static_cast<uint32_t>(desc));
}

// wgmma.fence: orders this thread's register accesses to accumulators before the next wgmma.
__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}

// wgmma.commit_group: closes the group of wgmma operations issued since the last commit.
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

// wgmma.wait_group N: waits until at most N committed groups are pending.
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

// Keeps the compiler from moving accumulator reads or writes across a wgmma boundary.
template <int R>
__device__ __forceinline__ void wgmma_fence_operands(float (&d)[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i])::"memory");
}
// The same for A fragments in registers: after the wait, it keeps them alive and unchanged
// until the wgmma that reads them asynchronously is done.
template <int R>
__device__ __forceinline__ void wgmma_fence_operands(uint32_t (&a)[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i) asm volatile("" : "+r"(a[i])::"memory");
}

// The accumulator operands of the wrappers below, written out once: "%0, ..., %N-1" in the
// instruction text and the matching "+f"(d[i]) constraints, in runs that the 16-, 32- and
// 128-register lists share.
#define SMLA_WGMMA_TEXT_0_16 \
  "%0, %1, %2, %3, %4, %5, %6, %7, " \
  "%8, %9, %10, %11, %12, %13, %14, %15"
#define SMLA_WGMMA_OPERANDS_0_16(d) \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), \
  "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
  "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), \
  "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
#define SMLA_WGMMA_TEXT_16_32 \
  "%16, %17, %18, %19, %20, %21, %22, %23, " \
  "%24, %25, %26, %27, %28, %29, %30, %31"
#define SMLA_WGMMA_OPERANDS_16_32(d) \
  "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), \
  "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
  "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), \
  "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
#define SMLA_WGMMA_TEXT_32_128 \
  "%32, %33, %34, %35, %36, %37, %38, %39, " \
  "%40, %41, %42, %43, %44, %45, %46, %47, " \
  "%48, %49, %50, %51, %52, %53, %54, %55, " \
  "%56, %57, %58, %59, %60, %61, %62, %63, " \
  "%64, %65, %66, %67, %68, %69, %70, %71, " \
  "%72, %73, %74, %75, %76, %77, %78, %79, " \
  "%80, %81, %82, %83, %84, %85, %86, %87, " \
  "%88, %89, %90, %91, %92, %93, %94, %95, " \
  "%96, %97, %98, %99, %100, %101, %102, %103, " \
  "%104, %105, %106, %107, %108, %109, %110, %111, " \
  "%112, %113, %114, %115, %116, %117, %118, %119, " \
  "%120, %121, %122, %123, %124, %125, %126, %127"
#define SMLA_WGMMA_OPERANDS_32_128(d) \
  "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), \
  "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
  "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), \
  "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
  "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), \
  "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
  "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), \
  "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), \
  "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), \
  "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), \
  "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), \
  "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), \
  "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), \
  "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), \
  "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), \
  "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), \
  "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), \
  "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), \
  "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), \
  "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), \
  "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), \
  "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), \
  "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), \
  "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
#define SMLA_WGMMA_D16_TEXT SMLA_WGMMA_TEXT_0_16 " "
#define SMLA_WGMMA_D16_OPERANDS(d) SMLA_WGMMA_OPERANDS_0_16(d)
#define SMLA_WGMMA_D32_TEXT SMLA_WGMMA_TEXT_0_16 ", " SMLA_WGMMA_TEXT_16_32 " "
#define SMLA_WGMMA_D32_OPERANDS(d) SMLA_WGMMA_OPERANDS_0_16(d), SMLA_WGMMA_OPERANDS_16_32(d)
#define SMLA_WGMMA_D128_TEXT \
  SMLA_WGMMA_TEXT_0_16 ", " SMLA_WGMMA_TEXT_16_32 ", " SMLA_WGMMA_TEXT_32_128 " "
#define SMLA_WGMMA_D128_OPERANDS(d) \
  SMLA_WGMMA_OPERANDS_0_16(d), SMLA_WGMMA_OPERANDS_16_32(d), SMLA_WGMMA_OPERANDS_32_128(d)

// D[64x32] (+)= A[64x16] * B[16x32]: A and B K-major in shared memory. accumulate = false
// overwrites D.
__device__ __forceinline__ void wgmma_m64n32k16_ss(float (&d)[16], uint64_t desc_a,
                                                   uint64_t desc_b, bool accumulate) {
  asm volatile(
      "{\n.reg .pred p;\n"
      "setp.ne.b32 p, %18, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 {" SMLA_WGMMA_D16_TEXT
      "}, %16, %17, p, 1, 1, 0, 0;\n}\n"
      : SMLA_WGMMA_D16_OPERANDS(d)
      : "l"(desc_a), "l"(desc_b), "r"(static_cast<int>(accumulate)));
}

// D[64x64] (+)= A[64x16] * B[16x64]: A and B K-major in shared memory. accumulate = false
// overwrites D.
__device__ __forceinline__ void wgmma_m64n64k16_ss(float (&d)[32], uint64_t desc_a,
                                                   uint64_t desc_b, bool accumulate) {
  asm volatile(
      "{\n.reg .pred p;\n"
      "setp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {" SMLA_WGMMA_D32_TEXT
      "}, %32, %33, p, 1, 1, 0, 0;\n}\n"
      : SMLA_WGMMA_D32_OPERANDS(d)
      : "l"(desc_a), "l"(desc_b), "r"(static_cast<int>(accumulate)));
}

// D[64x256] (+)= A[64x16] * B[16x256]: A K-major, B MN-major (the transpose flag), both in
// shared memory. accumulate = false overwrites D.
__device__ __forceinline__ void wgmma_m64n256k16_ss_bt(float (&d)[128], uint64_t desc_a,
                                                       uint64_t desc_b, bool accumulate) {
  asm volatile(
      "{\n.reg .pred p;\n"
      "setp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {" SMLA_WGMMA_D128_TEXT
      "}, %128, %129, p, 1, 1, 0, 1;\n}\n"
      : SMLA_WGMMA_D128_OPERANDS(d)
      : "l"(desc_a), "l"(desc_b), "r"(static_cast<int>(accumulate)));
}

// D[64x256] += A[64x16] * B[16x256]: A from registers, B MN-major in shared memory. A is the
// m64k16 bf16 fragment: a[0] holds row lane/4 + 16 warp, columns 2 (lane % 4) + {0, 1}
// (the lower column in the low half), a[1] the same columns eight rows down, a[2] and a[3]
// the same rows eight columns right: the layout of two adjacent 8-column blocks of an f32
// accumulator (registers 4j .. 4j + 7), so S becomes P in place.
__device__ __forceinline__ void wgmma_m64n256k16_rs_bt(float (&d)[128], const uint32_t (&a)[4],
                                                       uint64_t desc_b) {
  asm volatile(
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {" SMLA_WGMMA_D128_TEXT
      "}, {%128, %129, %130, %131}, %132, 1, 1, 1, 1;\n"
      : SMLA_WGMMA_D128_OPERANDS(d)
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b));
}

#undef SMLA_WGMMA_TEXT_0_16
#undef SMLA_WGMMA_TEXT_16_32
#undef SMLA_WGMMA_TEXT_32_128
#undef SMLA_WGMMA_OPERANDS_0_16
#undef SMLA_WGMMA_OPERANDS_16_32
#undef SMLA_WGMMA_OPERANDS_32_128
#undef SMLA_WGMMA_D16_TEXT
#undef SMLA_WGMMA_D16_OPERANDS
#undef SMLA_WGMMA_D32_TEXT
#undef SMLA_WGMMA_D32_OPERANDS
#undef SMLA_WGMMA_D128_TEXT
#undef SMLA_WGMMA_D128_OPERANDS

}  // namespace smla::ptx
