// Tensor memory accelerator (sm_90): tiled copies from global memory into shared memory that
// complete an mbarrier's transaction count, described by a CUtensorMap made on the host
// (src/cuda/hopper/q_tile_map.hpp). Thin names over CCCL's cuda::ptx.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <cuda/ptx>

#include "cuda/ptx/ldmatrix.cuh"  // smem_u32

namespace smla::ptx {

// Arrives once on `bar` (release) and raises the phase's expected transaction bytes by
// `bytes`: the phase completes when its arrivals are in and that many bytes have landed.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
  (void)cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta,
                                             cuda::ptx::space_shared, bar, bytes);
}

// The box of `map` at coordinates (c0, c1, c2), innermost first, into shared memory at
// `dst` (aligned as the map's swizzle needs: 1024 bytes for 128-byte swizzling); its bytes
// complete `bar`. Coordinates past the tensor's extent read as zeros.
__device__ __forceinline__ void tma_load_3d(void* dst, const CUtensorMap* map, int c0, int c1,
                                            int c2, uint64_t* bar) {
  const int32_t coords[3] = {c0, c1, c2};
  cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_cluster, cuda::ptx::space_global, dst, map,
                                  coords, bar);
}

// tma_load_3d with an L2 eviction policy (l2_policy.cuh) for the box's lines. CCCL's
// cuda::ptx has no `.L2::cache_hint` form of the tensor copy, hence the asm.
__device__ __forceinline__ void tma_load_3d_with_policy(void* dst, const CUtensorMap* map,
                                                        int c0, int c1, int c2, uint64_t* bar,
                                                        uint64_t policy) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      ".L2::cache_hint [%0], [%1, {%2, %3, %4}], [%5], %6;\n" ::"r"(smem_u32(dst)),
      "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(smem_u32(bar)), "l"(policy)
      : "memory");
}

}  // namespace smla::ptx
