// Tile geometry and shared-memory layout of the Hopper attention kernel. Everything the
// kernel and its launcher agree on lives here, pinned by static_asserts.
#pragma once

#include <cstdint>

#include "cuda/hopper/token_claims.cuh"

namespace smla::hopper {

template <class MainRows, class ExtraRows>
struct HopperConfig {
  static constexpr int D = MainRows::kDqk;  // d_qk
  static_assert(ExtraRows::kDqk == D, "both pools of a call hold rows of the same d_qk");
  static constexpr int DV = 512;

  // A CTA owns HT = 64 query heads of one token (the M of one wgmma) and walks its entries BN
  // = 64 rows per step. Three warpgroups: warpgroup 0 produces (gathers rows, dequantizes,
  // loads Q), warpgroups 1 and 2 consume. Consumer c computes S for KV columns
  // [32c, 32c + 32) of the step and O for d_v columns [256c, 256c + 256): the O accumulator
  // is 64 x 256 f32 per warpgroup, 128 registers per thread.
  static constexpr int HT = 64;
  static constexpr int BN = 64;
  static constexpr int STAGES = 2;
  static constexpr int CONSUMERS = 2;
  static constexpr int THREADS = 128 * (1 + CONSUMERS);
  static constexpr int S_COLS = BN / CONSUMERS;     // 32: the n of the S wgmma
  static constexpr int DV_COLS = DV / CONSUMERS;    // 256: the n of the P·V wgmma
  // Register split (setmaxnreg; ptxas allocates each role within its own count): the launch
  // cap is 65536 / 384 rounded down to 8 = 168 per thread, and 128 * 104 + 256 * 200 = 384 *
  // 168. The producer's 104 hold a lane's pieces of two quantized rows (2 x 8 x 16 bytes) in
  // flight; the consumers spill below 200.
  static constexpr int PRODUCER_REGS = 104;
  static constexpr int CONSUMER_REGS = 200;
  static_assert(128 * PRODUCER_REGS + 256 * CONSUMER_REGS <= THREADS * 168);

  // Operand tiles are 128-byte-swizzled blocks of 64 columns (ptx/wgmma.cuh): a [64 rows][D]
  // tile is D / 64 blocks of 64 rows x 128 B.
  static constexpr int BLOCK_BYTES = 64 * 128;
  static constexpr int D_BLOCKS = D / 64;
  static constexpr int TILE_BYTES = D_BLOCKS * BLOCK_BYTES;
  static constexpr int CHUNKS = D / 8;      // 16-byte groups of 8 values per row
  static_assert(D % 64 == 0 && HT == 64 && BN == 64);

  // The V scan (scan_and_publish_v, for the bound of p_rounding.hpp): V is d_v blocks 0..7
  // of a stage, its first V_BYTES bytes.
  static constexpr int V_BYTES = (DV / 64) * BLOCK_BYTES;
  static constexpr int CONSUMER_WARPS = 4 * CONSUMERS;
  // The producer bounds |V| from the scales, published per stage, when both pools' formats
  // allow it (kv_groups.cuh kScalesBoundV); otherwise the consumers scan all of V.
  static constexpr bool SCALE_BOUNDS = MainRows::kScalesBoundV && ExtraRows::kScalesBoundV;
  // f32 partials by 16-byte stores (write_item_results' kWidePartials), where they measured
  // faster (perf-notes ledger, s53): the kernels whose producer bounds |V| (decode b = 2 7%
  // faster); not the fp8_ds_mla one, whose step loop ptxas allocated worse with them (top-k
  // 16384 rows 1% slower). The two coincide by measurement, not by any need of the stores.
  static constexpr bool WIDE_PARTIAL_STORES = SCALE_BOUNDS;
  // P into its shared tile by stmatrix (store_p_blocks) rather than 4-byte stores, where it
  // measured faster (perf-notes ledger, s64): the V3.2 decode rows 1-3% faster; the fp8_ds_mla
  // kernel's rows 3-9% slower with it though its step loop lost 72 instructions and its
  // spills (ptxas then keeps fewer of the consumers' |V| scan loads in flight: perf-notes
  // Findings s64). int8_ds_mla, which no bench row measures, goes with the kernels whose
  // producer bounds |V|, as for the partials' stores.
  static constexpr bool P_BY_STMATRIX = SCALE_BOUNDS;

  // Shared memory, bytes from a 1024-aligned base (the swizzle phase is address bits 7-9).
  static constexpr int Q_OFF = 0;                                   // [HT][D] swizzled
  static constexpr int STAGE_OFF = Q_OFF + TILE_BYTES;             // [STAGES][BN][D] swizzled
  static constexpr int P_OFF = STAGE_OFF + STAGES * TILE_BYTES;    // [HT][BN] bf16 swizzled
  static constexpr int ROWMAX_OFF = P_OFF + BLOCK_BYTES;           // [CONSUMERS][HT] f32
  static constexpr int ROWSUM_OFF = ROWMAX_OFF + CONSUMERS * HT * 4;  // [CONSUMERS][HT] f32
  static constexpr int VALID_OFF = ROWSUM_OFF + CONSUMERS * HT * 4;   // [STAGES][BN] u8
  static constexpr int V_MAX_OFF = VALID_OFF + STAGES * BN;  // [CONSUMER_WARPS][2] u32
  static constexpr int PRODUCER_WARPS = 4;
  // Per stage and producer warp, the |V| bound of the quantized groups per d_v half
  // (p_rounding.hpp scale_bound_bits), f32 bits.
  static constexpr int SCALE_BOUND_OFF = V_MAX_OFF + CONSUMER_WARPS * 2 * 4;  // [..][..][2] u32
  static constexpr int TILE_SINK_OFF = SCALE_BOUND_OFF + STAGES * PRODUCER_WARPS * 2 * 4;  // [HT]
  static constexpr int BAR_OFF = TILE_SINK_OFF + HT * 4;  // mbarriers, below
  static constexpr int BAR_FULL = 0;                // [STAGES] producer -> consumers
  static constexpr int BAR_EMPTY = STAGES;          // [STAGES] consumers -> producer
  static constexpr int BAR_Q_FULL = 2 * STAGES;     // Q of the item is in
  static constexpr int BAR_Q_EMPTY = 2 * STAGES + 1;  // the item's last S read Q
  static constexpr int BARRIERS = 2 * STAGES + 2;
  static constexpr int USED_BYTES = BAR_OFF + BARRIERS * 8;
  // The dynamic shared memory base is only 16-byte aligned: ask for room to align it.
  static constexpr int SMEM_BYTES = USED_BYTES + 1024;
  static_assert(BAR_OFF % 8 == 0 && V_MAX_OFF % 4 == 0 && P_OFF % 1024 == 0 &&
                STAGE_OFF % 1024 == 0);
  static_assert(SMEM_BYTES + ClaimQueue::kBytes <= 227 * 1024,
                "one CTA per SM within the H100/H200 opt-in limit (ClaimQueue is static)");

  // Named barriers (id 0 is __syncthreads).
  static constexpr int BAR_ID_CONSUMERS = 1;  // the 256 consumer threads
  static constexpr int CONSUMER_THREADS = 128 * CONSUMERS;
};

}  // namespace smla::hopper
