// Scalar conversions of the KV-cache formats (SPEC §2): bf16, e4m3 (OCP FP8, "fn" variant:
// no infinities, one NaN code per sign), UE8M0 power-of-two scales and int8 with a row scale.
//
// Every function here is usable on the host and on the device and is written with integer
// and bit operations plus plain IEEE float arithmetic only, so the CPU reference and the GPU
// kernels produce the same bytes without depending on rounding modes, libm or fast-math
// flags. Divisions go through div_rn, which pins round-to-nearest on the device even under
// --use_fast_math.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define SMLA_HD __host__ __device__ __forceinline__
#else
#define SMLA_HD inline
#endif

namespace smla::fmt {

// ---- bit access --------------------------------------------------------------------------
// __builtin_bit_cast (GCC, Clang and nvcc) keeps these constexpr on both sides; std::bit_cast
// would need --expt-relaxed-constexpr in device code.

SMLA_HD constexpr uint32_t float_bits(float f) { return __builtin_bit_cast(uint32_t, f); }
SMLA_HD constexpr float float_from_bits(uint32_t u) { return __builtin_bit_cast(float, u); }

inline constexpr uint32_t kF32SignMask = 0x80000000u;
inline constexpr uint32_t kF32AbsMask = 0x7FFFFFFFu;
inline constexpr uint32_t kF32InfBits = 0x7F800000u;
inline constexpr uint32_t kF32QuietNanBits = 0x7FC00000u;

SMLA_HD constexpr bool is_finite(float x) { return (float_bits(x) & kF32AbsMask) < kF32InfBits; }

// a / b rounded to nearest even. nvcc's --use_fast_math would turn `/` into an approximate
// reciprocal; the int8 row scale and the int8 quantizer must not change with build flags.
SMLA_HD float div_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}

// Rounds the unsigned integer significand `sig` shifted right by `shift` bits (1..31) to the
// nearest integer, ties to even. The common core of every narrowing conversion below.
SMLA_HD constexpr uint32_t shift_right_rne(uint32_t sig, int shift) {
  const uint32_t q = sig >> shift;
  const uint32_t rem = sig & ((1u << shift) - 1u);
  const uint32_t half = 1u << (shift - 1);
  return q + ((rem > half || (rem == half && (q & 1u))) ? 1u : 0u);
}

// ---- bf16 --------------------------------------------------------------------------------

SMLA_HD constexpr float bf16_to_float(uint16_t b) {
  return float_from_bits(static_cast<uint32_t>(b) << 16);
}

// Round to nearest even; a NaN stays a NaN of the same sign with its quiet bit set (a plain
// truncation could turn a NaN whose payload sits in the low 16 bits into an infinity).
SMLA_HD constexpr uint16_t float_to_bf16_rne(float x) {
  const uint32_t u = float_bits(x);
  if ((u & kF32AbsMask) > kF32InfBits) return static_cast<uint16_t>((u >> 16) | 0x0040u);
  const uint32_t rounding = 0x7FFFu + ((u >> 16) & 1u);
  return static_cast<uint16_t>((u + rounding) >> 16);
}

// Dequantization's bf16(value * scale) with one NaN: a NaN product (a NaN e4m3 code, or a
// NaN scale read from a poisoned cache row) becomes the canonical bf16 NaN 0x7FC0. Hardware
// disagrees on which NaN a product yields (x86 keeps an operand's payload and sign, NVIDIA
// GPUs return 0x7FFFFFFF), so without this the CPU and GPU bytes of a NaN would differ.
SMLA_HD constexpr uint16_t dequantized_bf16(float product) {
  if ((float_bits(product) & kF32AbsMask) > kF32InfBits) return 0x7FC0u;
  return float_to_bf16_rne(product);
}

// ---- e4m3 (OCP FP8 E4M3FN): 1 sign, 4 exponent bits (bias 7), 3 mantissa bits ------------
// Largest finite value 448 (0x7E), smallest normal 2^-6 (0x08), subnormal step 2^-9;
// S.1111.111 is NaN; there is no infinity.

inline constexpr float kE4m3Max = 448.0f;
inline constexpr uint8_t kE4m3MaxCode = 0x7E;
inline constexpr uint8_t kE4m3NanCode = 0x7F;

SMLA_HD constexpr float e4m3_to_float(uint8_t b) {
  const uint32_t sign = static_cast<uint32_t>(b & 0x80u) << 24;
  const uint32_t exp = (b >> 3) & 0xFu;
  const uint32_t man = b & 0x7u;
  if (exp == 0xFu && man == 0x7u) return float_from_bits(sign | kF32QuietNanBits);
  if (exp == 0) {
    // Subnormal: man * 2^-9, exact in f32.
    return float_from_bits(sign | float_bits(static_cast<float>(man) * 0x1p-9f));
  }
  // Normal: rebias the exponent (7 -> 127) and widen the mantissa (3 -> 23 bits).
  return float_from_bits(sign | ((exp + 120u) << 23) | (man << 20));
}

// Round to nearest even with saturation to the finite range (PTX cvt.rn.satfinite.e4m3x2):
// |x| >= 448 and +-inf give +-448, NaN gives 0x7F with the sign of x, zero keeps its sign.
SMLA_HD constexpr uint8_t float_to_e4m3_satfinite_rne(float x) {
  const uint32_t u = float_bits(x);
  const uint8_t sign = static_cast<uint8_t>((u >> 24) & 0x80u);
  const uint32_t abs = u & kF32AbsMask;
  if (abs > kF32InfBits) return sign | kE4m3NanCode;
  // 448 itself and everything above it (where RNE would reach 480, not representable).
  if (abs >= float_bits(kE4m3Max)) return sign | kE4m3MaxCode;
  const int exp = static_cast<int>(abs >> 23);  // biased f32 exponent
  // f32 subnormals (< 2^-126) are far below half the smallest e4m3 subnormal (2^-10).
  if (exp == 0) return sign;
  const uint32_t sig = (abs & 0x7FFFFFu) | 0x800000u;  // 24-bit significand, value sig*2^(exp-150)
  if (exp >= 127 - 6) {
    // e4m3 normal: keep 1+3 significand bits. A rounding carry out of the mantissa (q == 16)
    // lands on the next exponent with mantissa 0, which the addition below encodes directly.
    const uint32_t q = shift_right_rne(sig, 20);  // 8..16
    return sign | static_cast<uint8_t>((static_cast<uint32_t>(exp - 120) << 3) + (q - 8u));
  }
  // e4m3 subnormal: count multiples of 2^-9, i.e. sig * 2^(exp - 141). A result of 8 is the
  // smallest normal, whose code 0x08 is that same integer.
  const int shift = 141 - exp;  // >= 21
  if (shift > 25) return sign;  // below 2^-10 (half the smallest subnormal): rounds to 0
  return sign | static_cast<uint8_t>(shift_right_rne(sig, shift));
}

// ---- UE8M0 power-of-two scales -----------------------------------------------------------

// 2^(b - 127). b = 0 is the f32 subnormal 2^-127; b = 255 is the OCP NaN encoding.
// Selects, not early returns: GPU producers decode one per quantized piece, and the
// returns compiled to a branch of about ten instructions there.
SMLA_HD constexpr float ue8m0_to_float(uint8_t b) {
  const uint32_t normal = static_cast<uint32_t>(b) << 23;
  const uint32_t bits = b == 0 ? 0x00400000u : (b == 0xFF ? kF32QuietNanBits : normal);
  return float_from_bits(bits);
}

// The UE8M0 byte 127 + log2(s) of a normal power of two `s` (every fp8_tile_scale result).
SMLA_HD constexpr uint8_t ue8m0_from_pow2(float s) {
  return static_cast<uint8_t>((float_bits(s) >> 23) & 0xFFu);
}

// ---- fp8 tile scale ----------------------------------------------------------------------

// log2 of the smallest tile scale: max(., 1e-4) with 2^-14 < 1e-4 <= 2^-13.
inline constexpr int kFp8MinScaleLog2 = -13;

// s = 2^ceil(log2(max(amax / 448, 1e-4))) for a tile amax >= 0, in exact arithmetic.
// Write amax = m * 2^e with m in [1, 2). amax / 448 = (m / 1.75) * 2^(e - 8), and m / 1.75 lies
// in (0.5, 8/7), so ceil(log2(amax / 448)) is e - 8 when m <= 1.75 and e - 7 above. No log2f,
// no division: the same exponent on every machine. NaN, zero and f32 subnormal amax give the
// minimum scale; +inf behaves like FLT_MAX (2^120).
SMLA_HD constexpr float fp8_tile_scale(float amax) {
  int log2_scale = kFp8MinScaleLog2;
  if (amax >= 0x1p-126f) {
    const uint32_t u = float_bits(amax);
    const int e = static_cast<int>(u >> 23) - 127;
    constexpr uint32_t kMan1_75 = 0x600000u;  // mantissa bits of 1.75
    const int ceil_log2 = e - 8 + (((u & 0x7FFFFFu) > kMan1_75) ? 1 : 0);
    if (ceil_log2 > log2_scale) log2_scale = ceil_log2;
  }
  return float_from_bits(static_cast<uint32_t>(log2_scale + 127) << 23);
}

// ---- int8 with one f32 row scale ---------------------------------------------------------

inline constexpr float kInt8Max = 127.0f;

// s = max(amax, 1e-12) / 127 in f32 (SPEC §2, int8_ds_mla).
SMLA_HD float int8_row_scale(float amax) {
  const float floor = 1e-12f;
  return div_rn(amax > floor ? amax : floor, kInt8Max);
}

// clamp(rne(v), -127, 127); NaN gives 0 (there is no int8 NaN), +-inf clamps to +-127.
SMLA_HD constexpr int8_t float_to_int8_rne_clamped(float v) {
  const uint32_t u = float_bits(v);
  // A bit test, not v != v: fast-math builds may fold self-comparisons away.
  if ((u & kF32AbsMask) > kF32InfBits) return 0;
  if (v >= kInt8Max) return 127;
  if (v <= -kInt8Max) return -127;
  const int exp = static_cast<int>((u >> 23) & 0xFFu);
  if (exp < 126) return 0;  // |v| < 0.5
  const uint32_t sig = (u & 0x7FFFFFu) | 0x800000u;  // value sig * 2^(exp - 150), exp <= 133
  const int magnitude = static_cast<int>(shift_right_rne(sig, 150 - exp));
  return static_cast<int8_t>((u & kF32SignMask) ? -magnitude : magnitude);
}

// ---- amax policy -------------------------------------------------------------------------

// A value's contribution to its tile's (or row's) amax: |x| when finite, 0 for NaN and +-inf,
// so one non-finite element does not destroy the scale of its whole tile (docs/formats.md).
SMLA_HD constexpr float amax_term(float x) {
  const uint32_t abs = float_bits(x) & kF32AbsMask;
  return abs < kF32InfBits ? float_from_bits(abs) : 0.0f;
}

}  // namespace smla::fmt
