// KV row readers of the Hopper producer: one struct per cache format, the only place where the
// Hopper kernel meets a byte layout. The producer warpgroup reads a row as D/8 groups of 8
// values; consecutive lanes take consecutive groups, so a warp's loads are contiguous.
//
//   kDqk      d_qk of the rows the format holds
//   kDirect   true for bf16 rows: the producer copies their 16-byte groups with cp.async
//             straight into the swizzled tile; other formats are dequantized on the way
//   row(pool, slot) -> RowAddr    the row's base addresses (the block division, once a row)
//   load(row, g) -> RawGroup      the raw bytes of group g (and its scale), from global memory
//   convert(raw, g) -> Bf16x8     the group as bf16 (not for kDirect formats)
//
// Byte layouts and scalar conversions come from src/formats, and the dequantization helpers
// from the portable path, so the bf16 values are bit-identical to the reference's.
#pragma once

#include <cstdint>

#include "cuda/portable/attend_params.hpp"
#include "cuda/portable/kv_rows.cuh"
#include "formats/kv_layout.hpp"
#include "formats/numeric.hpp"

namespace smla::hopper {

using portable::Bf16x8;
using portable::PoolView;

struct RowAddr {
  const uint8_t* data = nullptr;
  const uint8_t* scale = nullptr;  // formats whose scales live apart from the values
};

struct RawGroup {
  uint4 bits;   // 8 quantized bytes in .x/.y, or 8 bf16 (RoPE) in all four words
  float scale;  // the group's scale (quantized groups)
};

__device__ __forceinline__ uint4 load_u2_as_u4(const uint8_t* p) {
  const uint2 v = __ldg(reinterpret_cast<const uint2*>(p));
  return make_uint4(v.x, v.y, 0, 0);
}

__device__ __forceinline__ Bf16x8 as_bf16x8(const uint4& v) { return {{v.x, v.y, v.z, v.w}}; }

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
struct Fp8V32Groups {
  using L = fmt::Fp8V32Layout;
  static constexpr int kDqk = L::kDqk;
  static constexpr bool kDirect = false;
  static constexpr int kNopeGroups = L::kNopeDim / 8;

  __device__ static RowAddr row(const PoolView& p, int64_t slot) {
    return {L::token(p.data, p.block_stride, p.block_size, slot), nullptr};
  }
  __device__ static RawGroup load(const RowAddr& r, int g) {
    if (g >= kNopeGroups) {
      return {__ldg(reinterpret_cast<const uint4*>(r.data + L::kRopeOffset +
                                                   16 * (g - kNopeGroups))),
              0.0f};
    }
    return {load_u2_as_u4(r.data + L::kNopeOffset + 8 * g),
            __ldg(reinterpret_cast<const float*>(r.data + L::kScaleOffset +
                                                 4 * (8 * g / L::kTileDim)))};
  }
  __device__ static Bf16x8 convert(const RawGroup& raw, int g) {
    if (g >= kNopeGroups) return as_bf16x8(raw.bits);
    return portable::dequant_e4m3x8(make_uint2(raw.bits.x, raw.bits.y), raw.scale);
  }
};

// ---- fp8_ds_mla (d_qk 512): data [448 e4m3][64 bf16], scales [7 UE8M0][pad] apart -----------
struct Fp8DsMlaGroups {
  using L = fmt::Fp8DsMlaLayout;
  static constexpr int kDqk = L::kDqk;
  static constexpr bool kDirect = false;
  static constexpr int kNopeGroups = L::kNopeDim / 8;

  __device__ static RowAddr row(const PoolView& p, int64_t slot) {
    return {L::token_data(p.data, p.block_stride, p.block_size, slot),
            L::token_scales(p.data, p.block_stride, p.block_size, slot)};
  }
  __device__ static RawGroup load(const RowAddr& r, int g) {
    if (g >= kNopeGroups) {
      return {__ldg(reinterpret_cast<const uint4*>(r.data + L::kRopeOffset +
                                                   16 * (g - kNopeGroups))),
              0.0f};
    }
    return {load_u2_as_u4(r.data + L::kNopeOffset + 8 * g),
            fmt::ue8m0_to_float(__ldg(r.scale + 8 * g / L::kTileDim))};
  }
  __device__ static Bf16x8 convert(const RawGroup& raw, int g) {
    if (g >= kNopeGroups) return as_bf16x8(raw.bits);
    return portable::dequant_e4m3x8(make_uint2(raw.bits.x, raw.bits.y), raw.scale);
  }
};

// ---- int8_ds_mla (d_qk 512): [512 int8] x one f32 scale, interleaved or split ---------------
struct Int8DsMlaGroups {
  using L = fmt::Int8DsMlaLayout;
  static constexpr int kDqk = L::kDqk;
  static constexpr bool kDirect = false;

  __device__ static RowAddr row(const PoolView& p, int64_t slot) {
    if (p.scales != nullptr) {
      return {L::split_values(p.data, p.block_stride, p.block_size, slot),
              L::split_scale(p.scales, p.scale_block_stride, p.block_size, slot)};
    }
    const uint8_t* values = L::interleaved_values(p.data, p.block_stride, p.block_size, slot);
    return {values, values + L::kInterleavedScaleOffset};
  }
  __device__ static RawGroup load(const RowAddr& r, int g) {
    return {load_u2_as_u4(r.data + 8 * g), __ldg(reinterpret_cast<const float*>(r.scale))};
  }
  __device__ static Bf16x8 convert(const RawGroup& raw, int) {
    return portable::dequant_int8x8(make_uint2(raw.bits.x, raw.bits.y), raw.scale);
  }
};

}  // namespace smla::hopper
