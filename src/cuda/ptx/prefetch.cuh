// L2 prefetch (sm_80+): asks L2 for global bytes that a later load will read, so that load
// waits for L2 rather than HBM. A hint only: nothing is loaded into registers or shared
// memory, and a prefetch never faults.
#pragma once

#include <cstdint>

namespace smla::ptx {

// prefetch.global.L2 [p]: the 128-byte line holding p.
__device__ __forceinline__ void prefetch_l2_line(const void* p) {
  asm volatile("prefetch.global.L2 [%0];\n" ::"l"(p));
}

// Every line of [p, p + bytes).
__device__ __forceinline__ void prefetch_l2(const void* p, int bytes) {
  const auto* b = static_cast<const uint8_t*>(p);
  for (int off = 0; off < bytes; off += 128) prefetch_l2_line(b + off);
  prefetch_l2_line(b + bytes - 1);  // the last line when p is not line-aligned
}

}  // namespace smla::ptx
