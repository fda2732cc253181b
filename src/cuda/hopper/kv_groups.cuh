// KV row readers of the Hopper producer: one struct per cache format, the only place where the
// Hopper kernel meets a byte layout. A row lands in the swizzled bf16 tile as 8-value groups
// (16 bytes): the groups a format stores as bf16 (all of a bf16 row, the RoPE tail of the fp8
// rows) are copied by cp.async as they are; quantized 16-byte pieces (two groups each) are
// loaded into registers with the row's scales and dequantized. A few lanes share a row, each
// taking every kLanesPerRow-th piece, so a format's scales are indexed by a lane's piece
// number alone (kPiecesPerScale is a multiple of the lanes per row).
//
//   kDqk             d_qk of the rows the format holds
//   kCopyPieces      16-byte pieces stored as bf16, copied by cp.async: piece i from byte
//                    kCopyOffset + 16 i of the row's data to group kCopyGroup0 + i of the row
//   kQuantPieces     quantized 16-byte pieces (0: nothing to dequantize); piece i holds the
//                    values of groups 2 i and 2 i + 1
//   kPiecesPerScale  consecutive quantized pieces under one scale
//   row(pool, slot) -> RowAddr        the row's base addresses (the block division, once a row)
//   load_piece(row, i) -> uint4       quantized piece i, from global memory
//   load_scales(row) -> Scales        the raw bits of all of the row's scales: loads only, the
//                                     decode waits for them, so it happens in scale()
//   scale(scales, s) -> float         scale s, the one of pieces from s kPiecesPerScale on
//   convert(bits, scale, i, put)      calls put(g, bits) for piece i's groups 2 i, 2 i + 1
//   prefetch(row)                     asks L2 for the row's bytes: the producer does it a step
//                                     ahead of the loads
//   kScalesBoundV    the producer bounds V's magnitudes from the row's scales (the two
//                    members below), so the consumers need not scan V (p_rounding.hpp); false
//                    for bf16, whose values only a scan bounds, and for fp8_ds_mla (below)
//   kMaxCode         the largest magnitude of a quantized code
//   half_scale_bits(scales, h) -> uint32_t   the largest |scale| over the quantized groups of
//                                     d_v half h (columns 256 h .. 256 h + 255) as f32 bits, a
//                                     NaN's above every other: with kMaxCode, a bound on those
//                                     groups' |V| (scale_bound_bits)
//
// An invalid row's pieces and scales are zero bits: every format converts them to +0 (a zero
// value times a zero, or UE8M0 2^-127, scale), the zero row an invalid entry must be.
// Byte layouts and scalar conversions come from src/formats, and the dequantization helpers
// from the portable path, so the bf16 values are bit-identical to the reference's (a NaN's
// payload aside: tests/gpu/test_gpu_dequant.cu).
#pragma once

#include <cstdint>

#include "cuda/portable/attend_params.hpp"
#include "cuda/portable/kv_rows.cuh"
#include "cuda/ptx/global_load.cuh"
#include "cuda/ptx/prefetch.cuh"
#include "formats/kv_layout.hpp"
#include "formats/numeric.hpp"

namespace smla::hopper {

using portable::Bf16x8;
using portable::PoolView;

struct RowAddr {
  const uint8_t* data = nullptr;
  const uint8_t* scale = nullptr;  // formats whose scales live apart from the values
};

// A quantized piece or a row's scales. With the 256-byte L2 fetch the decode rows measured
// 0.5-1.3% faster in geometric mean than with a plain __ldg (three rounds of one run), and
// L1::evict_last added nothing (perf-notes ledger, s50).
__device__ __forceinline__ uint4 load_u4(const uint8_t* p) { return ptx::load_nc_l2_256b(p); }

__device__ __forceinline__ uint4 as_u4(const Bf16x8& v) {
  return make_uint4(v.w[0], v.w[1], v.w[2], v.w[3]);
}

// Groups 2 piece and 2 piece + 1: the 16 quantized bytes of a piece, dequantized.
template <class Dequant, class Put>
__device__ __forceinline__ void put_quantized_piece(const uint4& bits, float scale, int piece,
                                                    Dequant dequant, Put& put) {
  put(2 * piece, as_u4(dequant(make_uint2(bits.x, bits.y), scale)));
  put(2 * piece + 1, as_u4(dequant(make_uint2(bits.z, bits.w), scale)));
}

// ---- bf16: copied as is ---------------------------------------------------------------------
template <int D>
struct Bf16Groups {
  static constexpr int kDqk = D;
  static constexpr int kCopyPieces = D / 8;
  static constexpr int kCopyOffset = 0;
  static constexpr int kCopyGroup0 = 0;
  static constexpr int kQuantPieces = 0;
  static constexpr bool kScalesBoundV = false;
  __device__ static RowAddr row(const PoolView& p, int64_t slot) {
    return {fmt::Bf16Layout::token(p.data, p.block_stride, p.block_size, slot, D), nullptr};
  }
};

// ---- fp8_v32 (d_qk 576): [512 e4m3][4 f32 scales][64 bf16 RoPE] ------------------------------
// Pieces 0-31: NoPE, scale i / 8; the RoPE (groups 64-71) is copied.
struct Fp8V32Groups {
  using L = fmt::Fp8V32Layout;
  static constexpr int kDqk = L::kDqk;
  static constexpr int kCopyPieces = fmt::kRopeBytes / 16;
  static constexpr int kCopyOffset = L::kRopeOffset;
  static constexpr int kCopyGroup0 = L::kNopeDim / 8;
  static constexpr int kQuantPieces = L::kNopeDim / 16;
  static constexpr int kPiecesPerScale = L::kTileDim / 16;
  static_assert(L::kNumTiles == 4 && L::kScaleOffset % 16 == 0 && L::kRopeOffset % 16 == 0);
  static_assert(L::kTileDim == 128, "two scales per d_v half");
  using Scales = uint4;  // the four f32 scales, 16-byte aligned in every token
  static constexpr bool kScalesBoundV = true;  // V is the NoPE (the RoPE is d block 8)
  static constexpr float kMaxCode = 448.0f;

  __device__ static RowAddr row(const PoolView& p, int64_t slot) {
    return {L::token(p.data, p.block_stride, p.block_size, slot), nullptr};
  }
  __device__ static uint4 load_piece(const RowAddr& r, int piece) {
    return load_u4(r.data + L::kNopeOffset + 16 * piece);
  }
  __device__ static Scales load_scales(const RowAddr& r) {
    return load_u4(r.data + L::kScaleOffset);
  }
  __device__ static float scale(const Scales& s, int i) {
    return __uint_as_float(i == 0 ? s.x : i == 1 ? s.y : i == 2 ? s.z : s.w);
  }
  __device__ static uint32_t half_scale_bits(const Scales& s, int h) {
    return h == 0 ? max(s.x & fmt::kF32AbsMask, s.y & fmt::kF32AbsMask)
                  : max(s.z & fmt::kF32AbsMask, s.w & fmt::kF32AbsMask);
  }
  template <class Put>
  __device__ static void convert(const uint4& bits, float scale, int piece, Put&& put) {
    put_quantized_piece(bits, scale, piece, portable::dequant_e4m3x8, put);
  }
  __device__ static void prefetch(const RowAddr& r) { ptx::prefetch_l2(r.data, L::kTokenBytes); }
};

// ---- fp8_ds_mla (d_qk 512): data [448 e4m3][64 bf16], scales [7 UE8M0][pad] apart -----------
// Pieces 0-27: NoPE, scale i / 4; the RoPE (groups 56-63) is copied.
struct Fp8DsMlaGroups {
  using L = fmt::Fp8DsMlaLayout;
  static constexpr int kDqk = L::kDqk;
  static constexpr int kCopyPieces = fmt::kRopeBytes / 16;
  static constexpr int kCopyOffset = L::kRopeOffset;
  static constexpr int kCopyGroup0 = L::kNopeDim / 8;
  static constexpr int kQuantPieces = L::kNopeDim / 16;
  static constexpr int kPiecesPerScale = L::kTileDim / 16;
  static_assert(L::kNopeDim % 16 == 0 && L::kRopeOffset % 16 == 0 && L::kScaleBytes == 8);
  // The 8 scale bytes (7 UE8M0 and the pad) as one load: a token's scales are 8-byte aligned
  // (a 16-byte aligned block, then block_size x 576 B of data, then 8 B per token).
  using Scales = uint2;
  // Scanned: UE8M0 (power-of-two) scales bound |V| only within 2x, and the residual steps
  // that loose a bound adds cost more than the scan (docs/perf-notes.md: V4 decode rows 1-5%
  // slower with the bound from scales); the producer measuring the values it stores spilled
  // (6-23% slower, s43); and V ends with the RoPE block, which is copied.
  static constexpr bool kScalesBoundV = false;

  __device__ static RowAddr row(const PoolView& p, int64_t slot) {
    return {L::token_data(p.data, p.block_stride, p.block_size, slot),
            L::token_scales(p.data, p.block_stride, p.block_size, slot)};
  }
  __device__ static uint4 load_piece(const RowAddr& r, int piece) {
    return load_u4(r.data + L::kNopeOffset + 16 * piece);
  }
  __device__ static Scales load_scales(const RowAddr& r) {
    return __ldg(reinterpret_cast<const uint2*>(r.scale));
  }
  __device__ static float scale(const Scales& s, int i) {
    const uint32_t word = i < 4 ? s.x : s.y;
    return fmt::ue8m0_to_float(static_cast<uint8_t>(word >> (8 * (i % 4))));
  }
  template <class Put>
  __device__ static void convert(const uint4& bits, float scale, int piece, Put&& put) {
    put_quantized_piece(bits, scale, piece, portable::dequant_e4m3x8, put);
  }
  __device__ static void prefetch(const RowAddr& r) {
    ptx::prefetch_l2(r.data, L::kDataBytes);
    ptx::prefetch_l2_line(r.scale);
  }
};

// ---- int8_ds_mla (d_qk 512): [512 int8] x one f32 scale, interleaved or split ---------------
// Pieces 0-31: all under the row's scale.
struct Int8DsMlaGroups {
  using L = fmt::Int8DsMlaLayout;
  static constexpr int kDqk = L::kDqk;
  static constexpr int kCopyPieces = 0;
  static constexpr int kCopyOffset = 0;
  static constexpr int kCopyGroup0 = 0;
  static constexpr int kQuantPieces = L::kValues / 16;
  static constexpr int kPiecesPerScale = kQuantPieces;
  using Scales = uint32_t;  // the f32 scale's bits
  static constexpr bool kScalesBoundV = true;
  static constexpr float kMaxCode = 128.0f;  // -128 is an int8 value too

  __device__ static RowAddr row(const PoolView& p, int64_t slot) {
    if (p.scales != nullptr) {
      return {L::split_values(p.data, p.block_stride, p.block_size, slot),
              L::split_scale(p.scales, p.scale_block_stride, p.block_size, slot)};
    }
    const uint8_t* values = L::interleaved_values(p.data, p.block_stride, p.block_size, slot);
    return {values, values + L::kInterleavedScaleOffset};
  }
  __device__ static uint4 load_piece(const RowAddr& r, int piece) {
    return load_u4(r.data + 16 * piece);
  }
  __device__ static Scales load_scales(const RowAddr& r) {
    return __ldg(reinterpret_cast<const uint32_t*>(r.scale));
  }
  __device__ static float scale(const Scales& s, int /*i*/) { return __uint_as_float(s); }
  __device__ static uint32_t half_scale_bits(const Scales& s, int /*h*/) {
    return s & fmt::kF32AbsMask;
  }
  template <class Put>
  __device__ static void convert(const uint4& bits, float scale, int piece, Put&& put) {
    put_quantized_piece(bits, scale, piece, portable::dequant_int8x8, put);
  }
  __device__ static void prefetch(const RowAddr& r) {
    ptx::prefetch_l2(r.data, L::kValues);
    ptx::prefetch_l2_line(r.scale);
  }
};

}  // namespace smla::hopper
