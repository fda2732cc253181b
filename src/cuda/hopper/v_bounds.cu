#include "cuda/hopper/v_bounds.hpp"

#include <algorithm>

#include "cuda/cuda_check.hpp"
#include "formats/kv_layout.hpp"
#if defined(SMLA_HOPPER_PATH)
#include "cuda/ptx/fast_math.cuh"
#endif

namespace smla::hopper {

#if defined(SMLA_HOPPER_PATH)
namespace {

constexpr int kWarpsPerBlock = 8;

// A warp per slot: lanes 0..15 read 32 bytes each of columns 0..255, lanes 16..31 of
// 256..511 (512 contiguous bytes per half), and each half-warp folds its magnitudes with the
// scan's own max.NaN.xorsign.abs (softmax_fragments.cuh max_abs_bf16_bits).
__global__ void v_bounds_kernel(portable::PoolView pool, int d_qk, uint32_t* bounds) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int64_t warps = int64_t{gridDim.x} * kWarpsPerBlock;
  for (int64_t slot = int64_t{blockIdx.x} * kWarpsPerBlock + threadIdx.x / 32; slot < pool.slots;
       slot += warps) {
    const uint8_t* row =
        fmt::Bf16Layout::token(pool.data, pool.block_stride, pool.block_size, slot, d_qk);
    const uint4* v = reinterpret_cast<const uint4*>(row) + 2 * lane;
    const uint4 a = __ldg(v), b = __ldg(v + 1);
    uint32_t m = ptx::max_abs_bf16x2(ptx::max_abs_bf16x2(a.x, a.y), ptx::max_abs_bf16x2(a.z, a.w));
    m = ptx::max_abs_bf16x2(m, ptx::max_abs_bf16x2(ptx::max_abs_bf16x2(b.x, b.y),
                                                   ptx::max_abs_bf16x2(b.z, b.w)));
#pragma unroll
    for (int offset = 8; offset > 0; offset /= 2) {
      m = ptx::max_abs_bf16x2(m, __shfl_xor_sync(0xffffffffu, m, offset));
    }
    const uint32_t bits = ptx::bf16x2_magnitude_bits(m);
    const uint32_t upper = __shfl_sync(0xffffffffu, bits, 16);
    if (lane == 0) bounds[slot] = bits | (upper << 16) | kValidRow;
  }
}

}  // namespace
#endif

Status launch_v_bounds(const portable::PoolView& pool, int d_qk, uint32_t* bounds,
                       cudaStream_t stream) {
#if defined(SMLA_HOPPER_PATH)
  if (pool.slots == 0) return Status::success();
  // Enough warps to keep every SM's loads in flight; each walks its slots in strides.
  constexpr int64_t kMaxBlocks = 4096;
  const auto grid = static_cast<unsigned>(
      std::min<int64_t>(kMaxBlocks, (pool.slots + kWarpsPerBlock - 1) / kWarpsPerBlock));
  v_bounds_kernel<<<grid, 32 * kWarpsPerBlock, 0, stream>>>(pool, d_qk, bounds);
  return cuda_backend::launch_status("smla::attend", "v_bounds_kernel");
#else
  (void)pool, (void)d_qk, (void)bounds, (void)stream;
  return Status(StatusCode::internal, "smla::attend: the Hopper path is not compiled");
#endif
}

}  // namespace smla::hopper
