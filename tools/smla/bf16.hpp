// bf16 <-> f32 on the host. The tool takes and gives float32 files (what every array library
// writes) while smla computes on bf16, so each tensor crosses here once.
#pragma once

#include <bit>
#include <cstdint>

namespace smla::cli {

// Round to nearest even, like a GPU's cvt.rn.bf16.f32; NaN stays a (quiet) NaN.
inline uint16_t bf16_from_float(float x) {
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40);
  const uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

inline float float_from_bf16(uint16_t x) {
  return std::bit_cast<float>(static_cast<uint32_t>(x) << 16);
}

}  // namespace smla::cli
