// Host codecs of one KV token per format (SPEC §2). The byte positions come from
// kv_layout.hpp and every scalar rule from numeric.hpp, which the GPU kernels share, so the
// reference and the kernels agree byte for byte.
//
// Tile rule shared by all quantized formats: amax over the finite |x| of the tile only
// (numeric.hpp amax_term), then each element through the format's saturating conversion;
// docs/formats.md states the resulting NaN/Inf policy.
#include "formats/token_codec.hpp"

#include <cstring>

#include "formats/kv_layout.hpp"
#include "formats/numeric.hpp"

namespace smla::fmt {

namespace {

// Pool memory as bytes. Scales are read and written with memcpy: the buffers are byte
// arrays and their f32 fields are not guaranteed to be 4 B-aligned in a caller's padded view.
uint8_t* pool_bytes(void* p) { return static_cast<uint8_t*>(p); }

float load_f32(const uint8_t* p) {
  float f;
  std::memcpy(&f, p, sizeof f);
  return f;
}

void store_f32(uint8_t* p, float f) { std::memcpy(p, &f, sizeof f); }

// Largest finite |x| of n bf16 values (0 when none is finite).
float finite_amax(const uint16_t* in, int n) {
  float amax = 0.0f;
  for (int i = 0; i < n; ++i) {
    const float a = amax_term(bf16_to_float(in[i]));
    if (a > amax) amax = a;
  }
  return amax;
}

// ---- fp8: tiles of e4m3 with a power-of-two scale -----------------------------------------

// in [n] bf16 -> out [n] e4m3 with s = fp8_tile_scale(amax); returns s. x / s is exact for a
// power-of-two s except where it underflows below any e4m3 value, so rounding happens once.
float encode_e4m3_tile(const uint16_t* in, int n, uint8_t* out) {
  const float s = fp8_tile_scale(finite_amax(in, n));
  for (int i = 0; i < n; ++i) {
    out[i] = float_to_e4m3_satfinite_rne(div_rn(bf16_to_float(in[i]), s));
  }
  return s;
}

// in [n] e4m3 with scale s -> out [n] bf16 = bf16(value * s).
void decode_e4m3_tile(const uint8_t* in, int n, float s, uint16_t* out) {
  for (int i = 0; i < n; ++i) out[i] = dequantized_bf16(e4m3_to_float(in[i]) * s);
}

void encode_fp8_v32(const KvPool& pool, int64_t slot, const uint16_t* in) {
  using L = Fp8V32Layout;
  uint8_t* token = L::token(pool_bytes(pool.data), pool.block_stride, pool.block_size, slot);
  for (int k = 0; k < L::kNumTiles; ++k) {
    const int first = k * L::kTileDim;
    const float s = encode_e4m3_tile(in + first, L::kTileDim, token + L::kNopeOffset + first);
    store_f32(token + L::kScaleOffset + 4 * k, s);
  }
  std::memcpy(token + L::kRopeOffset, in + L::kNopeDim, kRopeBytes);
}

void decode_fp8_v32(const KvPool& pool, int64_t slot, uint16_t* out) {
  using L = Fp8V32Layout;
  const uint8_t* base = pool_bytes(pool.data);
  const uint8_t* token = L::token(base, pool.block_stride, pool.block_size, slot);
  for (int k = 0; k < L::kNumTiles; ++k) {
    const int first = k * L::kTileDim;
    const float s = load_f32(token + L::kScaleOffset + 4 * k);
    decode_e4m3_tile(token + L::kNopeOffset + first, L::kTileDim, s, out + first);
  }
  std::memcpy(out + L::kNopeDim, token + L::kRopeOffset, kRopeBytes);
}

void encode_fp8_ds_mla(const KvPool& pool, int64_t slot, const uint16_t* in) {
  using L = Fp8DsMlaLayout;
  uint8_t* base = pool_bytes(pool.data);
  uint8_t* data = L::token_data(base, pool.block_stride, pool.block_size, slot);
  uint8_t* scales = L::token_scales(base, pool.block_stride, pool.block_size, slot);
  for (int k = 0; k < L::kNumTiles; ++k) {
    const int first = k * L::kTileDim;
    const float s = encode_e4m3_tile(in + first, L::kTileDim, data + L::kNopeOffset + first);
    scales[k] = ue8m0_from_pow2(s);
  }
  std::memcpy(data + L::kRopeOffset, in + L::kNopeDim, kRopeBytes);
}

void decode_fp8_ds_mla(const KvPool& pool, int64_t slot, uint16_t* out) {
  using L = Fp8DsMlaLayout;
  const uint8_t* base = pool_bytes(pool.data);
  const uint8_t* data = L::token_data(base, pool.block_stride, pool.block_size, slot);
  const uint8_t* scales = L::token_scales(base, pool.block_stride, pool.block_size, slot);
  for (int k = 0; k < L::kNumTiles; ++k) {
    const int first = k * L::kTileDim;
    decode_e4m3_tile(data + L::kNopeOffset + first, L::kTileDim, ue8m0_to_float(scales[k]),
                     out + first);
  }
  std::memcpy(out + L::kNopeDim, data + L::kRopeOffset, kRopeBytes);
}

// ---- int8_ds_mla: one f32 scale per row, interleaved or split ----------------------------

struct Int8TokenPlace {
  uint8_t* values;  // [512] int8
  uint8_t* scale;   // [1] f32
};

Int8TokenPlace int8_token_place(const KvPool& pool, int64_t slot) {
  using L = Int8DsMlaLayout;
  uint8_t* data = pool_bytes(pool.data);
  if (pool.int8_split()) {
    return {L::split_values(data, pool.block_stride, pool.block_size, slot),
            L::split_scale(pool_bytes(pool.scales), pool.scale_block_stride, pool.block_size,
                           slot)};
  }
  return {L::interleaved_values(data, pool.block_stride, pool.block_size, slot),
          L::interleaved_scale(data, pool.block_stride, pool.block_size, slot)};
}

void encode_int8_ds_mla(const KvPool& pool, int64_t slot, const uint16_t* in) {
  using L = Int8DsMlaLayout;
  const Int8TokenPlace place = int8_token_place(pool, slot);
  const float s = int8_row_scale(finite_amax(in, L::kValues));
  for (int i = 0; i < L::kValues; ++i) {
    const int8_t v = float_to_int8_rne_clamped(div_rn(bf16_to_float(in[i]), s));
    place.values[i] = static_cast<uint8_t>(v);
  }
  store_f32(place.scale, s);
}

void decode_int8_ds_mla(const KvPool& pool, int64_t slot, uint16_t* out) {
  using L = Int8DsMlaLayout;
  const Int8TokenPlace place = int8_token_place(pool, slot);
  const float s = load_f32(place.scale);
  for (int i = 0; i < L::kValues; ++i) {
    const float v = static_cast<float>(static_cast<int8_t>(place.values[i]));
    out[i] = dequantized_bf16(v * s);
  }
}

// ---- bf16: the row itself ----------------------------------------------------------------

uint8_t* bf16_token(const KvPool& pool, int64_t slot, int d_qk) {
  return Bf16Layout::token(pool_bytes(pool.data), pool.block_stride, pool.block_size, slot,
                           d_qk);
}

}  // namespace

void decode_token(const KvPool& pool, int64_t slot, int d_qk, uint16_t* out_bf16) {
  switch (pool.format) {
    case KvFormat::bf16:
      std::memcpy(out_bf16, bf16_token(pool, slot, d_qk), Bf16Layout::token_bytes(d_qk));
      return;
    case KvFormat::fp8_v32: decode_fp8_v32(pool, slot, out_bf16); return;
    case KvFormat::fp8_ds_mla: decode_fp8_ds_mla(pool, slot, out_bf16); return;
    case KvFormat::int8_ds_mla: decode_int8_ds_mla(pool, slot, out_bf16); return;
  }
}

void encode_token(const KvPool& pool, int64_t slot, int d_qk, const uint16_t* in_bf16) {
  switch (pool.format) {
    case KvFormat::bf16:
      std::memcpy(bf16_token(pool, slot, d_qk), in_bf16, Bf16Layout::token_bytes(d_qk));
      return;
    case KvFormat::fp8_v32: encode_fp8_v32(pool, slot, in_bf16); return;
    case KvFormat::fp8_ds_mla: encode_fp8_ds_mla(pool, slot, in_bf16); return;
    case KvFormat::int8_ds_mla: encode_int8_ds_mla(pool, slot, in_bf16); return;
  }
}

}  // namespace smla::fmt
