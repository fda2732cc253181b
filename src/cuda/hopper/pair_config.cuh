// Tile geometry, shared-memory layout and barrier numbering of the block-pair kernel
// (pair_kernel.cuh), pinned by static_asserts.
#pragma once

#include <cstdint>

#include "cuda/hopper/token_claims.cuh"

namespace smla::hopper {

template <int D>
struct PairConfig {
  static constexpr int DV = 512;
  // A CTA owns 64 query heads of one token and walks its entries in blocks of BN = 64 rows,
  // two blocks per iteration: block 2i in buffer 0 for consumer 0, block 2i + 1 in buffer 1
  // for consumer 1. Consumer c holds O[:, 256c : 256c + 256] (128 f32 registers per thread).
  static constexpr int HT = 64;
  static constexpr int BN = 64;
  static constexpr int THREADS = 3 * 128;
  static constexpr int CONSUMER_THREADS = 2 * 128;
  // The producer only issues copies (72 registers); 128 * 72 + 256 * 216 = 384 * 168, the
  // launch cap.
  static constexpr int PRODUCER_REGS = 72;
  static constexpr int CONSUMER_REGS = 216;
  static_assert(128 * PRODUCER_REGS + 256 * CONSUMER_REGS <= THREADS * 168);

  // Tiles are 128-byte-swizzled blocks of 64 columns (ptx/wgmma.cuh). A KV buffer has two
  // halves with barriers of their own: L = d blocks 0..3 (V columns 0..255, consumer 0's
  // half of d_v) and R = the rest (V columns 256..511 and, for d_qk 576, the RoPE block).
  static constexpr int BLOCK_BYTES = 64 * 128;
  static constexpr int D_BLOCKS = D / 64;
  static constexpr int TILE_BYTES = D_BLOCKS * BLOCK_BYTES;
  static constexpr int CHUNKS = D / 8;  // 16-byte groups per row
  static constexpr int L_BLOCKS = 4;
  static constexpr int V_HALF_BYTES = L_BLOCKS * BLOCK_BYTES;
  static_assert(D % 64 == 0 && D_BLOCKS > L_BLOCKS && 2 * L_BLOCKS * 64 == DV);

  // Shared memory from a 1024-aligned base. P of block 2i (consumer 0's, read by consumer 1)
  // sits in buffer 0's RoPE block for d_qk 576 (S is done with it, and half R of buffer 0 is
  // refilled only after both consumers released it); d_qk 512 has no RoPE block to spare.
  static constexpr int Q_OFF = 0;
  static constexpr int KV_OFF = TILE_BYTES;                  // [2][64][D]
  static constexpr int P1_OFF = KV_OFF + 2 * TILE_BYTES;    // [64][64] bf16
  static constexpr bool P0_IN_ROPE = D_BLOCKS > 2 * L_BLOCKS;
  static constexpr int P0_OFF = P0_IN_ROPE ? KV_OFF + 2 * L_BLOCKS * BLOCK_BYTES
                                           : P1_OFF + BLOCK_BYTES;
  static constexpr int SMALL_OFF = P1_OFF + (P0_IN_ROPE ? 1 : 2) * BLOCK_BYTES;
  static constexpr int ROWMAX_OFF = SMALL_OFF;                 // [2][64] f32
  static constexpr int ROWSUM_OFF = ROWMAX_OFF + 2 * HT * 4;   // [2][64] f32
  static constexpr int ROW_WORDS_OFF = ROWSUM_OFF + 2 * HT * 4;  // [2][64] u32
  static constexpr int V_MAX_OFF = ROW_WORDS_OFF + 2 * BN * 4;   // [2][4 warps][2 halves] u32
  static constexpr int FLAGS_OFF = V_MAX_OFF + 2 * 4 * 2 * 4;  // [2][4 warps] u32
  static constexpr int TILE_SINK_OFF = FLAGS_OFF + 2 * 4 * 4;  // [HT] f32
  static constexpr int BAR_OFF = TILE_SINK_OFF + HT * 4;
  // mbarriers: READY(b, h) producer -> consumers, FREE(b, h) the consumer that last reads
  // half h of buffer b (both consumers for half R of buffer 0) -> producer, and the Q tile's
  // pair.
  static constexpr int BAR_READY = 0;  // + 2 b + h
  static constexpr int BAR_FREE = 4;   // + 2 b + h
  static constexpr int BAR_Q_FULL = 8;
  static constexpr int BAR_Q_EMPTY = 9;
  static constexpr int BARRIERS = 10;
  static constexpr int USED_BYTES = BAR_OFF + BARRIERS * 8;
  static constexpr int SMEM_BYTES = USED_BYTES + 1024;  // room to align the base
  static_assert(BAR_OFF % 8 == 0 && P1_OFF % 1024 == 0 && P0_OFF % 1024 == 0);
  static_assert(SMEM_BYTES + ClaimQueue::kBytes <= 227 * 1024,
                "one CTA per SM within the H100/H200 opt-in limit (ClaimQueue is static)");

  // Named barriers (id 0 is __syncthreads); all but the votes span both consumers.
  // + c: consumer c arrives once its raised row maxima are out, the other one waits (which
  // also orders the waiting consumer's four |V| scans before it reads them).
  static constexpr int BAR_ID_MAX = 1;
  static constexpr int BAR_ID_P = 3;        // both P tiles and their residual flags are out
  static constexpr int BAR_ID_VOTE = 4;     // + c: consumer c's 128 threads
  static constexpr int BAR_ID_FIXUP = 6;    // the residual products
  static constexpr int BAR_ID_RESULTS = 7;  // the item's row sums
};

}  // namespace smla::hopper
