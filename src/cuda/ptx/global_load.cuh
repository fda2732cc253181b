// Global loads with cache hints (sm_80+), for data a kernel reads once and never writes.
#pragma once

#include <cstdint>

namespace smla::ptx {

// ld.global.nc.L2::256B.v4.u32: 16 bytes from p (16-byte aligned) through the read-only path,
// asking L2 to fetch the 256-byte block around them. The hint pays where neighbouring 16-byte
// pieces of one row are read by other lanes or steps shortly after: their L2 misses become
// hits (perf-notes Next 12: the Hopper producer's quantized pieces).
__device__ __forceinline__ uint4 load_nc_l2_256b(const void* p) {
  uint4 v;
  asm("ld.global.nc.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];\n"
      : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
      : "l"(p));
  return v;
}

}  // namespace smla::ptx
