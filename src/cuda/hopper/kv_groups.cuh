// KV row readers of the Hopper producer: one struct per cache format, the only place where the
// Hopper kernel meets a byte layout. A row lands in the swizzled bf16 tile as 8-value groups
// (16 bytes): the groups a format stores as bf16 (all of a bf16 row, the RoPE tail of the fp8
// rows) are copied by cp.async as they are; quantized groups are read by one warp, lane l
// loading the 16-byte piece l (two groups, one scale) into registers, and dequantized.
//
//   kDqk          d_qk of the rows the format holds
//   kCopyPieces   16-byte pieces stored as bf16, copied by cp.async: piece i from byte
//                 kCopyOffset + 16 i of the row's data to group kCopyGroup0 + i of the tile row
//   kQuantLanes   lanes that load a quantized piece (0: nothing to dequantize)
//   kScaleApart   RowAddr::scale is used (the scales live apart from the values)
//   row(pool, slot) -> RowAddr    the row's base addresses (the block division, once a row)
//   load(row, lane) -> RawPieces  lane's quantized piece and raw scale bits, from global
//                                 memory: loads only, nothing that waits for them, so the
//                                 producer has every row of a batch in flight at once
//   convert(raw, lane, put)       decodes the scale and calls put(g, bits) for the lane's two
//                                 groups 2 lane, 2 lane + 1 (as bf16)
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
  uint4 bits = {0, 0, 0, 0};  // quantized piece `lane`
  uint32_t scale = 0;         // the raw bits of its scale, decoded only in convert: a decode
                              // in load would wait for the load before the next row's is issued
};

__device__ __forceinline__ uint4 load_u4(const uint8_t* p) {
  return __ldg(reinterpret_cast<const uint4*>(p));
}

__device__ __forceinline__ uint4 as_u4(const Bf16x8& v) {
  return make_uint4(v.w[0], v.w[1], v.w[2], v.w[3]);
}

// Groups 2 lane and 2 lane + 1: the 16 quantized bytes of lane's piece, dequantized.
template <class Dequant, class Put>
__device__ __forceinline__ void put_quantized_piece(const uint4& bits, float scale, int lane,
                                                    Dequant dequant, Put& put) {
  put(2 * lane, as_u4(dequant(make_uint2(bits.x, bits.y), scale)));
  put(2 * lane + 1, as_u4(dequant(make_uint2(bits.z, bits.w), scale)));
}

// ---- bf16: copied as is ---------------------------------------------------------------------
template <int D>
struct Bf16Groups {
  static constexpr int kDqk = D;
  static constexpr int kCopyPieces = D / 8;
  static constexpr int kCopyOffset = 0;
  static constexpr int kCopyGroup0 = 0;
  static constexpr int kQuantLanes = 0;
  static constexpr bool kScaleApart = false;
  __device__ static RowAddr row(const PoolView& p, int64_t slot) {
    return {fmt::Bf16Layout::token(p.data, p.block_stride, p.block_size, slot, D), nullptr};
  }
};

// ---- fp8_v32 (d_qk 576): [512 e4m3][4 f32 scales][64 bf16 RoPE] ------------------------------
// Pieces 0-31: NoPE (groups 2l, 2l + 1, scale l / 8); the RoPE (groups 64-71) is copied.
struct Fp8V32Groups {
  using L = fmt::Fp8V32Layout;
  static constexpr int kDqk = L::kDqk;
  static constexpr int kCopyPieces = fmt::kRopeBytes / 16;
  static constexpr int kCopyOffset = L::kRopeOffset;
  static constexpr int kCopyGroup0 = L::kNopeDim / 8;
  static constexpr int kQuantLanes = 32;
  static constexpr bool kScaleApart = false;
  static_assert(L::kNopeDim == 32 * 16 && L::kRopeOffset % 16 == 0);

  __device__ static RowAddr row(const PoolView& p, int64_t slot) {
    return {L::token(p.data, p.block_stride, p.block_size, slot), nullptr};
  }
  __device__ static RawPieces load(const RowAddr& r, int lane) {
    RawPieces raw;
    raw.bits = load_u4(r.data + L::kNopeOffset + 16 * lane);
    raw.scale = __ldg(reinterpret_cast<const uint32_t*>(r.data + L::kScaleOffset +
                                                        4 * (16 * lane / L::kTileDim)));
    return raw;
  }
  template <class Put>
  __device__ static void convert(const RawPieces& raw, int lane, Put&& put) {
    put_quantized_piece(raw.bits, __uint_as_float(raw.scale), lane, portable::dequant_e4m3x8,
                        put);
  }
  __device__ static void prefetch(const RowAddr& r) { ptx::prefetch_l2(r.data, L::kTokenBytes); }
};

// ---- fp8_ds_mla (d_qk 512): data [448 e4m3][64 bf16], scales [7 UE8M0][pad] apart -----------
// Pieces 0-27: NoPE (groups 2l, 2l + 1, scale l / 4); the RoPE (groups 56-63) is copied.
struct Fp8DsMlaGroups {
  using L = fmt::Fp8DsMlaLayout;
  static constexpr int kDqk = L::kDqk;
  static constexpr int kCopyPieces = fmt::kRopeBytes / 16;
  static constexpr int kCopyOffset = L::kRopeOffset;
  static constexpr int kCopyGroup0 = L::kNopeDim / 8;
  static constexpr int kQuantLanes = L::kNopeDim / 16;
  static constexpr bool kScaleApart = true;
  static_assert(L::kNopeDim % 16 == 0 && L::kRopeOffset % 16 == 0);

  __device__ static RowAddr row(const PoolView& p, int64_t slot) {
    return {L::token_data(p.data, p.block_stride, p.block_size, slot),
            L::token_scales(p.data, p.block_stride, p.block_size, slot)};
  }
  __device__ static RawPieces load(const RowAddr& r, int lane) {
    RawPieces raw;
    raw.bits = load_u4(r.data + 16 * lane);
    raw.scale = __ldg(r.scale + 16 * lane / L::kTileDim);
    return raw;
  }
  template <class Put>
  __device__ static void convert(const RawPieces& raw, int lane, Put&& put) {
    put_quantized_piece(raw.bits, fmt::ue8m0_to_float(static_cast<uint8_t>(raw.scale)), lane,
                        portable::dequant_e4m3x8, put);
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
  static constexpr int kCopyPieces = 0;
  static constexpr int kCopyOffset = 0;
  static constexpr int kCopyGroup0 = 0;
  static constexpr int kQuantLanes = 32;
  static constexpr bool kScaleApart = true;
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
    raw.bits = load_u4(r.data + 16 * lane);
    raw.scale = __ldg(reinterpret_cast<const uint32_t*>(r.scale));
    return raw;
  }
  template <class Put>
  __device__ static void convert(const RawPieces& raw, int lane, Put&& put) {
    put_quantized_piece(raw.bits, __uint_as_float(raw.scale), lane, portable::dequant_int8x8,
                        put);
  }
  __device__ static void prefetch(const RowAddr& r) {
    ptx::prefetch_l2(r.data, L::kValues);
    ptx::prefetch_l2_line(r.scale);
  }
};

}  // namespace smla::hopper
