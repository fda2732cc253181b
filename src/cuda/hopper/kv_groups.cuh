// KV row readers of the Hopper producer: one struct per cache format, the only place where the
// Hopper kernel meets a byte layout. A row is read by one warp as 16-byte pieces: lane l loads
// piece l and, for the first kExtraLanes lanes, piece 32 + l (plus its scale), so a warp's
// loads are contiguous and a row costs each lane one or two 16-byte loads.
//
//   kDqk      d_qk of the rows the format holds
//   kDirect   true for bf16 rows: the producer copies their 16-byte groups with cp.async
//             straight into the swizzled tile; other formats are dequantized on the way
//   row(pool, slot) -> RowAddr    the row's base addresses (the block division, once a row)
//   load(row, lane) -> RawPieces  lane's raw pieces and raw scale bits, from global memory:
//                                 loads only, nothing that waits for them, so the producer
//                                 has every row of a batch in flight at once
//   convert(raw, lane, put)       decodes the scale and calls put(g, bits) for each 8-value
//                                 group g (as bf16) of the lane's pieces
//   prefetch(row)                 asks L2 for the row's bytes: the producer does it a block
//                                 ahead of the loads
//
// Byte layouts and scalar conversions come from src/formats, and the dequantization helpers
// from the portable path, so the bf16 values are bit-identical to the reference's (a NaN's
// payload aside: tests/gpu/test_gpu_dequant.cu).
#pragma once

#include <cstdint>

#include "cuda/portable/attend_params.hpp"
#include "cuda/portable/kv_rows.cuh"
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

struct RawPieces {
  uint4 main;    // piece `lane`
  uint4 extra;   // piece 32 + lane (lanes below kExtraLanes)
  uint32_t scale;  // the raw bits of the main piece's scale, decoded only in convert: a
                   // decode in load would wait for the load before the next row's is issued
};

__device__ __forceinline__ uint4 load_u4(const uint8_t* p) {
  return __ldg(reinterpret_cast<const uint4*>(p));
}

__device__ __forceinline__ uint4 as_u4(const Bf16x8& v) {
  return make_uint4(v.w[0], v.w[1], v.w[2], v.w[3]);
}

// The two 8-value groups of 16 quantized bytes, dequantized.
template <class Dequant, class Put>
__device__ __forceinline__ void put_quantized_piece(const uint4& bits, float scale, int g,
                                                    Dequant dequant, Put& put) {
  put(g, as_u4(dequant(make_uint2(bits.x, bits.y), scale)));
  put(g + 1, as_u4(dequant(make_uint2(bits.z, bits.w), scale)));
}

// ---- bf16: copied as is ---------------------------------------------------------------------
template <int D>
struct Bf16Groups {
  static constexpr int kDqk = D;
  static constexpr bool kDirect = true;
  __device__ static RowAddr row(const PoolView& p, int64_t slot) {
    return {fmt::Bf16Layout::token(p.data, p.block_stride, p.block_size, slot, D), nullptr};
  }
};

// ---- fp8_v32 (d_qk 576): [512 e4m3][4 f32 scales][64 bf16 RoPE] ------------------------------
// Pieces 0-31: NoPE (groups 2l, 2l + 1, scale l / 8); lanes 0-7 also load RoPE piece l
// (group 64 + l) from the bytes after the scales.
struct Fp8V32Groups {
  using L = fmt::Fp8V32Layout;
  static constexpr int kDqk = L::kDqk;
  static constexpr bool kDirect = false;
  static constexpr int kExtraLanes = fmt::kRopeBytes / 16;
  static constexpr int kNopeGroups = L::kNopeDim / 8;
  static_assert(L::kNopeDim == 32 * 16);

  __device__ static RowAddr row(const PoolView& p, int64_t slot) {
    return {L::token(p.data, p.block_stride, p.block_size, slot), nullptr};
  }
  __device__ static RawPieces load(const RowAddr& r, int lane) {
    RawPieces raw;
    raw.main = load_u4(r.data + L::kNopeOffset + 16 * lane);
    raw.scale = __ldg(reinterpret_cast<const uint32_t*>(r.data + L::kScaleOffset +
                                                        4 * (16 * lane / L::kTileDim)));
    if (lane < kExtraLanes) raw.extra = load_u4(r.data + L::kRopeOffset + 16 * lane);
    return raw;
  }
  template <class Put>
  __device__ static void convert(const RawPieces& raw, int lane, Put&& put) {
    put_quantized_piece(raw.main, __uint_as_float(raw.scale), 2 * lane, portable::dequant_e4m3x8,
                        put);
    if (lane < kExtraLanes) put(kNopeGroups + lane, raw.extra);
  }
  __device__ static void prefetch(const RowAddr& r) { ptx::prefetch_l2(r.data, L::kTokenBytes); }
};

// ---- fp8_ds_mla (d_qk 512): data [448 e4m3][64 bf16], scales [7 UE8M0][pad] apart -----------
// Data pieces 0-27: NoPE (groups 2l, 2l + 1, scale l / 4); 28-35: RoPE (group 56 + piece - 28),
// the last four loaded by lanes 0-3 as their extra piece.
struct Fp8DsMlaGroups {
  using L = fmt::Fp8DsMlaLayout;
  static constexpr int kDqk = L::kDqk;
  static constexpr bool kDirect = false;
  static constexpr int kNopePieces = L::kNopeDim / 16;
  static constexpr int kExtraLanes = L::kDataBytes / 16 - 32;
  static constexpr int kNopeGroups = L::kNopeDim / 8;
  static_assert(L::kNopeDim % 16 == 0 && L::kRopeOffset == 16 * kNopePieces);

  __device__ static RowAddr row(const PoolView& p, int64_t slot) {
    return {L::token_data(p.data, p.block_stride, p.block_size, slot),
            L::token_scales(p.data, p.block_stride, p.block_size, slot)};
  }
  __device__ static RawPieces load(const RowAddr& r, int lane) {
    RawPieces raw;
    raw.main = load_u4(r.data + 16 * lane);
    raw.scale = lane < kNopePieces ? __ldg(r.scale + 16 * lane / L::kTileDim) : 0u;
    if (lane < kExtraLanes) raw.extra = load_u4(r.data + 16 * (32 + lane));
    return raw;
  }
  template <class Put>
  __device__ static void convert(const RawPieces& raw, int lane, Put&& put) {
    if (lane < kNopePieces) {
      put_quantized_piece(raw.main, fmt::ue8m0_to_float(static_cast<uint8_t>(raw.scale)),
                          2 * lane, portable::dequant_e4m3x8, put);
    } else {
      put(kNopeGroups + lane - kNopePieces, raw.main);
    }
    if (lane < kExtraLanes) put(kNopeGroups + 32 - kNopePieces + lane, raw.extra);
  }
  __device__ static void prefetch(const RowAddr& r) {
    ptx::prefetch_l2(r.data, L::kDataBytes);
    ptx::prefetch_l2_line(r.scale);
  }
};

// ---- int8_ds_mla (d_qk 512): [512 int8] x one f32 scale, interleaved or split ---------------
// Pieces 0-31: groups 2l, 2l + 1, all with the row's scale.
struct Int8DsMlaGroups {
  using L = fmt::Int8DsMlaLayout;
  static constexpr int kDqk = L::kDqk;
  static constexpr bool kDirect = false;
  static constexpr int kExtraLanes = 0;
  static_assert(L::kValues == 32 * 16);

  __device__ static RowAddr row(const PoolView& p, int64_t slot) {
    if (p.scales != nullptr) {
      return {L::split_values(p.data, p.block_stride, p.block_size, slot),
              L::split_scale(p.scales, p.scale_block_stride, p.block_size, slot)};
    }
    const uint8_t* values = L::interleaved_values(p.data, p.block_stride, p.block_size, slot);
    return {values, values + L::kInterleavedScaleOffset};
  }
  __device__ static RawPieces load(const RowAddr& r, int lane) {
    RawPieces raw;
    raw.main = load_u4(r.data + 16 * lane);
    raw.scale = __ldg(reinterpret_cast<const uint32_t*>(r.scale));
    return raw;
  }
  template <class Put>
  __device__ static void convert(const RawPieces& raw, int lane, Put&& put) {
    put_quantized_piece(raw.main, __uint_as_float(raw.scale), 2 * lane, portable::dequant_int8x8,
                        put);
  }
  __device__ static void prefetch(const RowAddr& r) {
    ptx::prefetch_l2(r.data, L::kValues);
    ptx::prefetch_l2_line(r.scale);
  }
};

}  // namespace smla::hopper
