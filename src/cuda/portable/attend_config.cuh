// Tile geometry and shared-memory layout of the portable attention kernel, derived from the
// two pools' row loaders and the head tile. Everything the kernel and its launcher need to
// agree on lives here, pinned by static_asserts.
#pragma once

#include <cstdint>

namespace smla::portable {

template <class MainRows, class ExtraRows, int MT>
struct AttendConfig {
  static constexpr int D = MainRows::kDqk;  // d_qk
  static_assert(ExtraRows::kDqk == D, "both pools of a call hold rows of the same d_qk");
  static constexpr int DV = 512;

  // A CTA owns HT query heads of one token: MT MMA m-tiles of 16 rows. Head counts that are
  // not a multiple of HT leave tail rows that are computed on zero queries and never stored.
  // MT = 0 is the transposed small-head tile: KV rows form the MMA M dimension and 8 heads
  // the N dimension (S^T = K·Q^T, O^T += V^T·P^T), so h_q <= 8 computes no padded rows.
  static constexpr bool TRANSPOSED = MT == 0;
  static constexpr int HT = TRANSPOSED ? 8 : 16 * MT;
  // KV rows per pipeline step: one k16 slice of P·V. With two stages, Q and the dequantized
  // tile, every pair of formats fits the 99 KB of sm_86/89/120 at HT <= 32 (the largest,
  // d_qk 576 bf16 main with a quantized extra pool at HT = 32, takes 100,992 B). The
  // transposed tile takes 32 rows (two m16 tiles of S^T): its softmax gives one column to
  // each lane of a head's warp, and its Q is 8 rows, so every same-format pair still fits
  // 99 KB (the largest, fp8_v32, 94,400 B); the mixed pairs of the `all` preset do not.
  static constexpr int BN = TRANSPOSED ? 32 : 16;
  static constexpr int STAGES = 2;
  static constexpr int WARPS = 8;
  static constexpr int THREADS = WARPS * 32;

  // Q·K^T: the S tile [HT, BN] has S_TILES 16x8 MMA tiles. Warp w computes tile
  // (w % S_TILES) over the 1/KSPLIT slice (w / S_TILES) of d_qk; the KSPLIT partial sums meet
  // in shared memory, so a warp holds no Q fragments across steps.
  // Transposed: the S^T tile [BN, 8] has BN / 16 m16n8 tiles.
  static constexpr int S_TILES = TRANSPOSED ? BN / 16 : MT * (BN / 8);
  static constexpr int KSPLIT = WARPS / S_TILES;
  static constexpr int K_CHUNKS = D / 16 / KSPLIT;  // k16 chunks per warp
  static_assert(WARPS % S_TILES == 0, "every warp gets one S tile");
  static_assert((D / 16) % KSPLIT == 0, "d_qk splits evenly over the warps of a tile");

  // P·V: warp w owns d_v columns [w * DV_PER_WARP, (w + 1) * DV_PER_WARP) of all HT rows, so
  // the O accumulator costs MT * 32 f32 registers per thread (128 at HT = 64).
  static constexpr int DV_PER_WARP = DV / WARPS;
  static constexpr int DV_TILES = DV_PER_WARP / 8;  // n8 MMA tiles per warp
  static_assert(DV_TILES % 2 == 0, "V fragments are loaded two n-tiles at a time");
  // O fragments per thread, [O_M][O_N][4] f32: MT m-tiles x DV_TILES n-tiles, or transposed
  // (O^T [d_v, 8]) DV_PER_WARP / 16 m-tiles of d_v x one n8 tile of heads: 16 registers.
  static constexpr int O_M = TRANSPOSED ? DV_PER_WARP / 16 : MT;
  static constexpr int O_N = TRANSPOSED ? 1 : DV_TILES;
  static_assert(!TRANSPOSED || BN % 16 == 0, "P^T·V^T steps over k16 slices of the rows");

  // Online softmax: row r is owned by TPR consecutive lanes, CPT columns each.
  static constexpr int TPR = THREADS / HT;
  static constexpr int CPT = BN / TPR;
  static_assert(TPR <= 32 && 32 % TPR == 0 && CPT >= 1, "a row's owners share one warp");

  // Row strides in bf16 elements. The +8 (16 B) pad makes the 8 rows an ldmatrix reads
  // start in 8 different 16 B bank groups (a 1152 B or 1024 B stride alone maps every row to
  // the same banks: an 8-way conflict).
  static constexpr int QS = D + 8;
  static constexpr int KS = D + 8;
  static constexpr int PS = BN + 8;

  // The staging ring: bf16 rows are staged at the padded stride and read there directly;
  // quantized rows are staged raw and dequantized into a separate bf16 tile.
  static constexpr bool ANY_DIRECT = MainRows::kDirect || ExtraRows::kDirect;
  static constexpr bool ANY_CONVERT = !MainRows::kDirect || !ExtraRows::kDirect;
  static constexpr int RAW_STRIDE = MainRows::kRawStride > ExtraRows::kRawStride
                                        ? MainRows::kRawStride
                                        : ExtraRows::kRawStride;
  static constexpr int RING_ROW_BYTES = ANY_DIRECT ? 2 * KS : RAW_STRIDE;
  static_assert(RING_ROW_BYTES >= RAW_STRIDE && RING_ROW_BYTES % 16 == 0);

  // Shared memory, in bytes, each region 16 B-aligned:
  static constexpr int Q_OFF = 0;                                // [HT][QS] bf16
  static constexpr int RING_OFF = Q_OFF + HT * QS * 2;           // [STAGES][BN] rows
  static constexpr int TILE_OFF = RING_OFF + STAGES * BN * RING_ROW_BYTES;  // [BN][KS] bf16
  // [KSPLIT][HT][BN] f32
  static constexpr int SPART_OFF = TILE_OFF + (ANY_CONVERT ? BN * KS * 2 : 0);
  static constexpr int P_OFF = SPART_OFF + KSPLIT * HT * BN * 4;  // [HT][PS] bf16
  static constexpr int P_LO_OFF = P_OFF + HT * PS * 2;           // [HT][PS] bf16 (P - P_hi)
  static constexpr int ALPHA_OFF = P_LO_OFF + HT * PS * 2;        // [HT] f32 rescale of O rows
  static constexpr int ROWSCALE_OFF = ALPHA_OFF + HT * 4;         // [HT] f32 final O scale
  static constexpr int VALID_OFF = ROWSCALE_OFF + HT * 4;         // [STAGES][BN] i32
  static constexpr int SMEM_BYTES = VALID_OFF + STAGES * BN * 4;
  static_assert(RING_OFF % 16 == 0 && TILE_OFF % 16 == 0 && SPART_OFF % 16 == 0 &&
                P_OFF % 16 == 0 && P_LO_OFF % 16 == 0);
  static_assert(MT == 4 || (TRANSPOSED && ANY_DIRECT && ANY_CONVERT) ||
                    SMEM_BYTES <= 99 * 1024,
                "HT <= 32 (and the transposed tile of a same-format pair) must fit sm_86/89/120");
};

}  // namespace smla::portable
