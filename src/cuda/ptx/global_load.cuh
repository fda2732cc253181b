// Global loads with cache hints (sm_80+), for data the kernel does not write.
#pragma once

#include <vector_types.h>

namespace smla::ptx {

// ld.global.nc.L2::256B.v4.u32: 16 bytes from p (16-byte aligned) through the read-only path,
// asking L2 to fetch the 256-byte block around them on a miss: meant for rows whose other
// 16-byte pieces other lanes read right after (the Hopper producer's quantized pieces,
// perf-notes Next 12).
__device__ __forceinline__ uint4 load_nc_l2_256b(const void* p) {
  uint4 v;
  asm("ld.global.nc.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];\n"
      : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
      : "l"(p));
  return v;
}

}  // namespace smla::ptx
