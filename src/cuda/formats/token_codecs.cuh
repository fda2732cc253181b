// Device codecs of the KV formats (SPEC §2): one warp encodes a token's d_qk bf16 values
// into its pool bytes, or decodes them back. The byte rules come from src/formats only
// (numeric.hpp for every scalar, kv_layout.hpp for every address), the same helpers the
// CPU reference encodes with, so GPU and CPU write identical bytes.
//
// A codec is a struct with
//   __device__ static void encode(const PoolRef&, int64_t slot, const uint16_t* row, int lane);
//   __device__ static void decode(const PoolRef&, int64_t slot, uint16_t* row, int lane);
// called by all 32 lanes of a warp with the same slot (0 <= slot < slots).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/ptx/warp_reduce.cuh"
#include "formats/kv_layout.hpp"
#include "formats/numeric.hpp"

namespace smla::cuda_backend::formats {

inline constexpr int WARP = 32;

// A KvPool as the kernels see it: the device-side fields only.
struct PoolRef {
  uint8_t* data;               // block b at data + b * block_stride
  int64_t block_stride;        // bytes
  int32_t block_size;          // slots per block
  uint8_t* scales;             // int8_ds_mla split scales; nullptr otherwise
  int64_t scale_block_stride;  // bytes
};

// N consecutive elements moved as one vector access. Rows are 16 B-aligned (src/api checks
// rows16), and so is every token of a CUDA pool (16 B-aligned data and block stride, token
// sizes that are multiples of 16) and every part read with vectors (codes, RoPE; scales
// are read one at a time), so an access of up to 16 B at a lane's N-aligned offset is
// naturally aligned.
template <typename T, int N>
struct alignas(sizeof(T) * N < 16 ? sizeof(T) * N : 16) Vec {
  T v[N];
};

template <typename T, int N>
__device__ __forceinline__ Vec<T, N> load_vec(const T* p) {
  return *reinterpret_cast<const Vec<T, N>*>(p);
}
template <typename T, int N>
__device__ __forceinline__ void store_vec(T* p, const Vec<T, N>& v) {
  *reinterpret_cast<Vec<T, N>*>(p) = v;
}

// Copies `n` bf16 values bit-exactly (bf16 pools and the RoPE tails), 2 per lane per step.
__device__ __forceinline__ void copy_bf16(uint16_t* dst, const uint16_t* src, int n, int lane) {
  for (int i = 2 * lane; i < n; i += 2 * WARP) {
    store_vec<uint16_t, 2>(dst + i, load_vec<uint16_t, 2>(src + i));
  }
}

// ---- quantizers: the scale of a tile from its amax, and one value's code ------------------

struct Fp8Quant {
  using Code = uint8_t;
  __device__ static float scale(float amax) { return fmt::fp8_tile_scale(amax); }
  // x / s with s a power of two: exact (or correctly rounded), whatever the division flags.
  __device__ static Code code(float x, float s) {
    return fmt::float_to_e4m3_satfinite_rne(fmt::div_rn(x, s));
  }
  __device__ static float value(Code c) { return fmt::e4m3_to_float(c); }
};

struct Int8Quant {
  using Code = int8_t;
  __device__ static float scale(float amax) { return fmt::int8_row_scale(amax); }
  __device__ static Code code(float x, float s) {
    return fmt::float_to_int8_rne_clamped(fmt::div_rn(x, s));
  }
  __device__ static float value(Code c) { return static_cast<float>(c); }
};

// ---- bf16: a plain copy --------------------------------------------------------------------

template <int DQK>
struct Bf16Codec {
  __device__ static void encode(const PoolRef& pool, int64_t slot, const uint16_t* row, int lane) {
    uint8_t* token =
        fmt::Bf16Layout::token(pool.data, pool.block_stride, pool.block_size, slot, DQK);
    copy_bf16(reinterpret_cast<uint16_t*>(token), row, DQK, lane);
  }
  __device__ static void decode(const PoolRef& pool, int64_t slot, uint16_t* row, int lane) {
    const uint8_t* token = fmt::Bf16Layout::token(static_cast<const uint8_t*>(pool.data),
                                                  pool.block_stride, pool.block_size, slot, DQK);
    copy_bf16(row, reinterpret_cast<const uint16_t*>(token), DQK, lane);
  }
};

// ---- tiled formats: quantized values in tiles with one scale each, then a bf16 RoPE tail ----
//
// F describes the format:
//   using Quant;                        Fp8Quant or Int8Quant
//   kDqk, kQuantDim, kTileDim           values [0, kQuantDim) are quantized in tiles of
//                                       kTileDim; [kQuantDim, kDqk) is the bf16 RoPE tail
//   struct Parts { uint8_t* codes; uint8_t* rope; ... }  and  Parts locate(pool, slot)
//   store_scale(parts, tile, s) / load_scale(parts, tile)
template <class F>
struct TiledCodec {
  static constexpr int kDqk = F::kDqk;
  static constexpr int kPerLane = F::kTileDim / WARP;  // values of a tile one lane handles
  static constexpr int kNumTiles = F::kQuantDim / F::kTileDim;
  static_assert(F::kTileDim % WARP == 0, "a tile spreads evenly over the lanes of a warp");
  static_assert(F::kQuantDim % F::kTileDim == 0, "the quantized part is whole tiles");
  using Code = typename F::Quant::Code;

  // Per tile: the lanes' amax meet in a warp reduction, then each lane encodes its own
  // values with the tile's scale; lane 0 stores the scale.
  __device__ static void encode(const PoolRef& pool, int64_t slot, const uint16_t* row, int lane) {
    const typename F::Parts parts = F::locate(pool, slot);
    Code* codes = reinterpret_cast<Code*>(parts.codes);
    for (int tile = 0; tile < kNumTiles; ++tile) {
      const int first = tile * F::kTileDim + lane * kPerLane;
      const Vec<uint16_t, kPerLane> in = load_vec<uint16_t, kPerLane>(row + first);
      float x[kPerLane];
      float amax = 0.0f;
      for (int i = 0; i < kPerLane; ++i) {
        x[i] = fmt::bf16_to_float(in.v[i]);
        amax = fmaxf(amax, fmt::amax_term(x[i]));
      }
      const float s = F::Quant::scale(ptx::warp_max(amax));
      Vec<Code, kPerLane> out;
      for (int i = 0; i < kPerLane; ++i) out.v[i] = F::Quant::code(x[i], s);
      store_vec<Code, kPerLane>(codes + first, out);
      if (lane == 0) F::store_scale(parts, tile, s);
    }
    copy_bf16(reinterpret_cast<uint16_t*>(parts.rope), row + F::kQuantDim, kDqk - F::kQuantDim,
              lane);
  }

  // bf16(value * scale) per element: e4m3 and int8 values are exact in f32, and one
  // multiplication rounded once to f32 then to bf16 is what the CPU reference computes.
  __device__ static void decode(const PoolRef& pool, int64_t slot, uint16_t* row, int lane) {
    const typename F::Parts parts = F::locate(pool, slot);
    const Code* codes = reinterpret_cast<const Code*>(parts.codes);
    for (int tile = 0; tile < kNumTiles; ++tile) {
      const int first = tile * F::kTileDim + lane * kPerLane;
      const float s = F::load_scale(parts, tile);
      const Vec<Code, kPerLane> in = load_vec<Code, kPerLane>(codes + first);
      Vec<uint16_t, kPerLane> out;
      for (int i = 0; i < kPerLane; ++i) {
        out.v[i] = fmt::dequantized_bf16(__fmul_rn(F::Quant::value(in.v[i]), s));
      }
      store_vec<uint16_t, kPerLane>(row + first, out);
    }
    copy_bf16(row + F::kQuantDim, reinterpret_cast<const uint16_t*>(parts.rope),
              kDqk - F::kQuantDim, lane);
  }
};

// fp8_v32: [512 e4m3][4 f32 scales][64 bf16] per token.
struct Fp8V32Format {
  using L = fmt::Fp8V32Layout;
  using Quant = Fp8Quant;
  static constexpr int kDqk = L::kDqk, kQuantDim = L::kNopeDim, kTileDim = L::kTileDim;
  struct Parts {
    uint8_t* codes;  // [512] e4m3
    float* scales;   // [4] f32
    uint8_t* rope;   // [64] bf16
  };
  __device__ static Parts locate(const PoolRef& pool, int64_t slot) {
    uint8_t* token = L::token(pool.data, pool.block_stride, pool.block_size, slot);
    return {token + L::kNopeOffset, reinterpret_cast<float*>(token + L::kScaleOffset),
            token + L::kRopeOffset};
  }
  __device__ static void store_scale(const Parts& p, int tile, float s) { p.scales[tile] = s; }
  __device__ static float load_scale(const Parts& p, int tile) { return p.scales[tile]; }
};

// fp8_ds_mla: per block [block_size x (448 e4m3, 64 bf16)] then [block_size x 8 UE8M0 bytes].
struct Fp8DsMlaFormat {
  using L = fmt::Fp8DsMlaLayout;
  using Quant = Fp8Quant;
  static constexpr int kDqk = L::kDqk, kQuantDim = L::kNopeDim, kTileDim = L::kTileDim;
  struct Parts {
    uint8_t* codes;   // [448] e4m3
    uint8_t* scales;  // [7] UE8M0 (the pad byte is never written)
    uint8_t* rope;    // [64] bf16
  };
  __device__ static Parts locate(const PoolRef& pool, int64_t slot) {
    uint8_t* data = L::token_data(pool.data, pool.block_stride, pool.block_size, slot);
    return {data + L::kNopeOffset,
            L::token_scales(pool.data, pool.block_stride, pool.block_size, slot),
            data + L::kRopeOffset};
  }
  __device__ static void store_scale(const Parts& p, int tile, float s) {
    p.scales[tile] = fmt::ue8m0_from_pow2(s);
  }
  __device__ static float load_scale(const Parts& p, int tile) {
    return fmt::ue8m0_to_float(p.scales[tile]);
  }
};

// int8_ds_mla: 512 int8 values and one f32 scale, interleaved or as two tensors (decided per
// pool at run time: the branch is uniform over the whole launch).
struct Int8DsMlaFormat {
  using L = fmt::Int8DsMlaLayout;
  using Quant = Int8Quant;
  static constexpr int kDqk = L::kDqk, kQuantDim = L::kValues, kTileDim = L::kValues;
  struct Parts {
    uint8_t* codes;  // [512] int8
    float* scale;    // [1] f32
    uint8_t* rope;   // empty: RoPE is quantized with the rest
  };
  __device__ static Parts locate(const PoolRef& pool, int64_t slot) {
    if (pool.scales != nullptr) {
      return {L::split_values(pool.data, pool.block_stride, pool.block_size, slot),
              reinterpret_cast<float*>(
                  L::split_scale(pool.scales, pool.scale_block_stride, pool.block_size, slot)),
              nullptr};
    }
    uint8_t* values = L::interleaved_values(pool.data, pool.block_stride, pool.block_size, slot);
    return {values, reinterpret_cast<float*>(values + L::kInterleavedScaleOffset), nullptr};
  }
  __device__ static void store_scale(const Parts& p, int, float s) { *p.scale = s; }
  __device__ static float load_scale(const Parts& p, int) { return *p.scale; }
};

}  // namespace smla::cuda_backend::formats
