// Explicit shared-memory accesses. nvcc splits a uint4 dereference of a pointer into the swizzled
// tiles into four 4-byte LDS (each 4-way bank-conflicted when the lanes read consecutive
// 16-byte chunks); the PTX vector load is one 16-byte LDS per lane.
#pragma once

#include <cstdint>

#include "cuda/ptx/ldmatrix.cuh"  // smem_u32

namespace smla::ptx {

// ld.shared.v4.u32: 16 bytes at a 16-byte-aligned shared address. volatile keeps it after the
// mbarrier wait that makes the bytes valid.
__device__ __forceinline__ uint4 ld_shared_u4(const void* p) {
  uint4 v;
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "r"(smem_u32(p)));
  return v;
}

// The value, unknown to the compiler from here on: an address computed where it is used
// instead of hoisted out of a loop, where a kernel near its register limit would spill it.
__device__ __forceinline__ uint32_t opaque(uint32_t v) {
  asm volatile("" : "+r"(v));
  return v;
}

}  // namespace smla::ptx
