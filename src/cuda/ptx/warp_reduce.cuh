// Reductions across the 32 lanes of a warp by xor butterflies: every lane ends with the same
// bits, combined in the same order on every run (deterministic).
#pragma once

namespace smla::ptx {

__device__ __forceinline__ float warp_max(float x) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) {
    x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, offset));
  }
  return x;
}

__device__ __forceinline__ float warp_sum(float x) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) x += __shfl_xor_sync(0xffffffffu, x, offset);
  return x;
}

}  // namespace smla::ptx
