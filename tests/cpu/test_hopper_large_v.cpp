// The Hopper consumers' "large V" test (src/cuda/hopper/large_v.hpp) against the bf16 values it
// stands for, for every bf16 bit pattern in each half beside a set of patterns in the other.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "cuda/hopper/large_v.hpp"
#include "formats/numeric.hpp"

namespace smla::hopper {
namespace {

bool needs_residual(uint16_t bf16) {
  const float v = fmt::bf16_to_float(bf16);
  return std::isnan(v) || std::fabs(v) >= 0.5f;
}

TEST(HopperLargeV, EveryBf16PatternInEitherHalfAgainstItsMagnitude) {
  // The other half: the threshold's neighbours, both signs, zero, the largest magnitudes.
  const uint16_t others[] = {0x0000, 0x8000, 0x3EFF, 0xBEFF, 0x3F00, 0xBF00,
                             0x7F7F, 0x7F80, 0xFF80, 0x7FC0, 0x7FFF, 0xFFFF};
  for (uint32_t a = 0; a <= 0xFFFF; ++a) {
    for (const uint16_t b : others) {
      const uint32_t lo_a = large_v_bits(a | uint32_t{b} << 16);
      const uint32_t hi_a = large_v_bits(b | a << 16);
      const bool a_large = needs_residual(static_cast<uint16_t>(a));
      ASSERT_EQ((lo_a & 0x8000u) != 0, a_large) << std::hex << a;
      ASSERT_EQ((lo_a & 0x80000000u) != 0, needs_residual(b)) << std::hex << a << " " << b;
      ASSERT_EQ((hi_a & 0x80000000u) != 0, a_large) << std::hex << a;
      ASSERT_EQ((hi_a & 0x8000u) != 0, needs_residual(b)) << std::hex << a << " " << b;
      ASSERT_EQ(lo_a & ~0x80008000u, 0u);
    }
  }
}

}  // namespace
}  // namespace smla::hopper
