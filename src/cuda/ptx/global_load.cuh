// Read-only global loads with an L1 hint. The Hopper producer's quantized pieces are read once
// and pass through L1 into registers (they hit L1 well under 1% of the time), so allocating
// lines for them only evicts what the SM's other accesses keep there.
#pragma once

#include <cstdint>

namespace smla::ptx {

// ld.global.nc.L1::no_allocate.v4.u32: 16 read-only bytes at a 16-byte-aligned global address,
// not kept in L1. Not volatile: an ordinary load the compiler may schedule.
__device__ __forceinline__ uint4 ld_global_nc_no_allocate_u4(const void* p) {
  uint4 v;
  asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];\n"
      : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
      : "l"(p));
  return v;
}

}  // namespace smla::ptx
