// The |V| bounds of a bf16 pool, slot by slot, for the block-pair kernel (pair_kernel.cuh):
// with them its producer copies each row's word with the row, and the consumers fold one
// word each instead of scanning V in shared memory, whose reads compete with the wgmma
// operands'.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/portable/attend_params.hpp"
#include "smla/status.hpp"

namespace smla::hopper {

// A slot's word: the largest magnitude over V columns 0..255 as bf16 bits with the sign
// cleared (kBoundBitsL; a NaN's above every number), the same over columns 256..511
// (kBoundBitsR), and kValidRow set, so that the kernel's row words (valid flag and bounds)
// come from one 4-byte copy of it, and an invalid entry's zero-filled word reads as invalid.
inline constexpr uint32_t kBoundBitsL = 0x00007FFFu;
inline constexpr uint32_t kBoundBitsR = 0x7FFF0000u;
inline constexpr uint32_t kValidRow = 0x80000000u;

// Writes every slot's word of `pool` (bf16 rows of d_qk) to bounds[slot]: its bounds are
// exactly the bits the consumers' scan of a tile holding that row alone finds. Rows start
// 16-byte aligned, as the kernels need.
Status launch_v_bounds(const portable::PoolView& pool, int d_qk, uint32_t* bounds,
                       cudaStream_t stream);

}  // namespace smla::hopper
