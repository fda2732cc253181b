// KV row loaders of the portable path: one struct per cache format, the only place where the
// attention kernel meets a byte layout. The kernel is written once against this interface:
//
//   kDqk          d_qk of the rows the format holds
//   kDirect       true when the staged bytes already are the bf16 row (no conversion pass)
//   kRawStride    bytes one row occupies in the staging ring (a multiple of 16)
//   kCopies       cp.async copies per row; copy(pool, slot, valid, c, raw_row) issues copy c
//   convert_group(raw_row, g) -> Bf16x8   values [8g, 8g+8) of a staged row as bf16
//                                         (only formats that are not kDirect)
//
// Invalid rows are copied with a zero source size: cp.async zero-fills them and never reads
// their address. Zero bytes dequantize to +0 in every format (a zero value times any finite
// scale, and the zeroed scale itself is 0 or 2^-127), so an invalid row is all zeros in
// shared memory; the kernel additionally masks its score to -inf.
//
// Byte layouts and scalar conversions come from src/formats (shared with the CPU reference),
// so the dequantized bf16 rows are bit-identical to the reference's: bf16(value * scale).
#pragma once

#include <cstdint>

#include "cuda/portable/attend_params.hpp"
#include "cuda/ptx/convert.cuh"
#include "cuda/ptx/cp_async.cuh"
#include "formats/kv_layout.hpp"
#include "formats/numeric.hpp"

namespace smla::portable {

// 8 dequantized values, packed as the 16 bytes they occupy in a bf16 row.
struct Bf16x8 {
  uint32_t w[4];
};

// bf16(decode(byte) * scale) for the 8 bytes of `packed` (little-endian: byte i is value i),
// where decode_pair gives two bytes' exact f32 values (e4m3 or int8; low byte -> .x). The
// product is one f32 multiply (exact for the power-of-two scales the fp8 writers produce) and
// __fmul_rn keeps it unfused, so any stored scale rounds like the reference's
// bf16(value * scale). The rounding is the hardware's cvt.rn.bf16x2.f32: the reference's bytes
// for every non-NaN value; a NaN product stays a NaN, its payload unspecified (the attention
// kernels only need it to poison its scores).
template <class DecodePair>
__device__ __forceinline__ Bf16x8 dequant_x8(uint2 packed, float scale, DecodePair decode_pair) {
  Bf16x8 r;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const uint32_t word = i < 2 ? packed.x : packed.y;
    const float2 v = decode_pair(static_cast<uint16_t>(word >> ((i % 2) * 16)));
    r.w[i] = ptx::float2_to_bf16x2_rn(__fmul_rn(v.x, scale), __fmul_rn(v.y, scale));
  }
  return r;
}

// From sm_89 the hardware decodes e4m3 pairs (exactly, like fmt::e4m3_to_float): one
// instruction per pair instead of ~20 bit operations and a branch per value.
__device__ __forceinline__ Bf16x8 dequant_e4m3x8(uint2 packed, float scale) {
  return dequant_x8(packed, scale, [](uint16_t pair) {
#if SMLA_PTX_HAS_E4M3_CVT
    return ptx::e4m3x2_to_float2(pair);
#else
    return make_float2(fmt::e4m3_to_float(static_cast<uint8_t>(pair)),
                       fmt::e4m3_to_float(static_cast<uint8_t>(pair >> 8)));
#endif
  });
}

// An int8 b as f32 without the quarter-rate I2F: the f32 2^23 + (b + 128), built in the
// mantissa bits, minus 2^23 + 128. Exact: every value is an integer below 2^24.
__device__ __forceinline__ Bf16x8 dequant_int8x8(uint2 packed, float scale) {
  return dequant_x8(packed, scale, [](uint16_t pair) {
    constexpr uint32_t kTwoTo23Bits = 0x4B000000u;
    constexpr float kBias = 8388608.0f + 128.0f;
    const uint32_t biased = pair ^ 0x8080u;  // b + 128 in each byte
    return make_float2(__uint_as_float(kTwoTo23Bits | (biased & 0xFFu)) - kBias,
                       __uint_as_float(kTwoTo23Bits | (biased >> 8)) - kBias);
  });
}

__device__ __forceinline__ void store_bf16x8(uint16_t* dst, const Bf16x8& v) {
  *reinterpret_cast<uint4*>(dst) = make_uint4(v.w[0], v.w[1], v.w[2], v.w[3]);
}

// ---- bf16: rows are copied as they are and read by the MMAs straight from the ring --------
template <int D>
struct Bf16Rows {
  static constexpr int kDqk = D;
  static constexpr bool kDirect = true;
  static constexpr int kRawStride = 2 * D;
  static constexpr int kCopies = 2 * D / 16;

  __device__ static void copy(const PoolView& p, int64_t slot, bool valid, int c,
                              uint8_t* raw_row) {
    const uint8_t* src =
        valid ? fmt::Bf16Layout::token(p.data, p.block_stride, p.block_size, slot, D) + 16 * c
              : p.data;
    ptx::cp_async_cg_16_zfill(raw_row + 16 * c, src, valid);
  }
};

// ---- fp8_v32 (d_qk 576): [512 e4m3][4 f32 scales][64 bf16 RoPE], 656 B staged as is -------
struct Fp8V32Rows {
  using L = fmt::Fp8V32Layout;
  static constexpr int kDqk = L::kDqk;
  static constexpr bool kDirect = false;
  static constexpr int kRawStride = L::kTokenBytes;
  static constexpr int kCopies = L::kTokenBytes / 16;
  static_assert(L::kTokenBytes % 16 == 0);

  __device__ static void copy(const PoolView& p, int64_t slot, bool valid, int c,
                              uint8_t* raw_row) {
    const uint8_t* src =
        valid ? L::token(p.data, p.block_stride, p.block_size, slot) + 16 * c : p.data;
    ptx::cp_async_cg_16_zfill(raw_row + 16 * c, src, valid);
  }

  __device__ static Bf16x8 convert_group(const uint8_t* raw_row, int g) {
    constexpr int kNopeGroups = L::kNopeDim / 8;
    if (g >= kNopeGroups) {
      const uint4 v = *reinterpret_cast<const uint4*>(raw_row + L::kRopeOffset +
                                                      16 * (g - kNopeGroups));
      return {{v.x, v.y, v.z, v.w}};
    }
    const float scale = *reinterpret_cast<const float*>(
        raw_row + L::kScaleOffset + 4 * (8 * g / L::kTileDim));
    return dequant_e4m3x8(*reinterpret_cast<const uint2*>(raw_row + L::kNopeOffset + 8 * g),
                          scale);
  }
};

// ---- fp8_ds_mla (d_qk 512): data [448 e4m3][64 bf16] and the 8 scale bytes, staged as
// [576 B data][8 B scales][8 B pad] so every staged row stays 16 B-aligned ----------------
struct Fp8DsMlaRows {
  using L = fmt::Fp8DsMlaLayout;
  static constexpr int kDqk = L::kDqk;
  static constexpr bool kDirect = false;
  static constexpr int kRawStride = L::kDataBytes + 16;
  static constexpr int kCopies = L::kDataBytes / 16 + 1;  // the last one is the 8 scale bytes
  static_assert(L::kDataBytes % 16 == 0);

  __device__ static void copy(const PoolView& p, int64_t slot, bool valid, int c,
                              uint8_t* raw_row) {
    if (c < kCopies - 1) {
      const uint8_t* src =
          valid ? L::token_data(p.data, p.block_stride, p.block_size, slot) + 16 * c : p.data;
      ptx::cp_async_cg_16_zfill(raw_row + 16 * c, src, valid);
    } else {
      const uint8_t* src =
          valid ? L::token_scales(p.data, p.block_stride, p.block_size, slot) : p.data;
      ptx::cp_async_ca_8_zfill(raw_row + L::kDataBytes, src, valid);
    }
  }

  __device__ static Bf16x8 convert_group(const uint8_t* raw_row, int g) {
    constexpr int kNopeGroups = L::kNopeDim / 8;
    if (g >= kNopeGroups) {
      const uint4 v = *reinterpret_cast<const uint4*>(raw_row + L::kRopeOffset +
                                                      16 * (g - kNopeGroups));
      return {{v.x, v.y, v.z, v.w}};
    }
    const float scale = fmt::ue8m0_to_float(raw_row[L::kDataBytes + 8 * g / L::kTileDim]);
    return dequant_e4m3x8(*reinterpret_cast<const uint2*>(raw_row + L::kNopeOffset + 8 * g),
                          scale);
  }
};

// ---- int8_ds_mla (d_qk 512): [512 int8] and one f32 scale, interleaved (scales == nullptr)
// or split; staged as [512 B values][4 B scale][12 B pad] ---------------------------------
struct Int8DsMlaRows {
  using L = fmt::Int8DsMlaLayout;
  static constexpr int kDqk = L::kDqk;
  static constexpr bool kDirect = false;
  static constexpr int kRawStride = L::kValues + 16;
  static constexpr int kCopies = L::kValues / 16 + 1;  // the last one is the f32 scale

  __device__ static void copy(const PoolView& p, int64_t slot, bool valid, int c,
                              uint8_t* raw_row) {
    const bool split = p.scales != nullptr;
    if (c < kCopies - 1) {
      const uint8_t* src = p.data;
      if (valid) {
        src = split ? L::split_values(p.data, p.block_stride, p.block_size, slot)
                    : L::interleaved_values(p.data, p.block_stride, p.block_size, slot);
        src += 16 * c;
      }
      ptx::cp_async_cg_16_zfill(raw_row + 16 * c, src, valid);
    } else {
      const uint8_t* src = p.data;
      if (valid) {
        src = split ? L::split_scale(p.scales, p.scale_block_stride, p.block_size, slot)
                    : L::interleaved_scale(p.data, p.block_stride, p.block_size, slot);
      }
      ptx::cp_async_ca_4_zfill(raw_row + L::kValues, src, valid);
    }
  }

  __device__ static Bf16x8 convert_group(const uint8_t* raw_row, int g) {
    const float scale = *reinterpret_cast<const float*>(raw_row + L::kValues);
    return dequant_int8x8(*reinterpret_cast<const uint2*>(raw_row + 8 * g), scale);
  }
};

}  // namespace smla::portable
