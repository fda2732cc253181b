// Where a 16-byte group of a row lies in the Hopper kernels' swizzled [rows][D] bf16 tiles
// (Q, the KV stages): 64-column blocks of [64 rows][128 bytes], each row's eight 16-byte chunks
// permuted by the 128-byte swizzle (ptx::sw128_offset). Its own header so that a tool can
// address a tile as the kernels do (tools/dsmem-stores.cu).
#pragma once

#include <cstdint>

#include "cuda/ptx/wgmma.cuh"  // sw128_offset

namespace smla::hopper {

// Byte offset of 16-byte group `chunk` of row `row` in a swizzled [rows][D] tile.
__device__ __forceinline__ uint32_t tile_chunk_offset(int row, int chunk) {
  return static_cast<uint32_t>((chunk >> 3) * (64 * 128)) +
         ptx::sw128_offset(row, (chunk & 7) * 8);
}

}  // namespace smla::hopper
