// The Hopper consumers' P rounding budget (src/cuda/hopper/p_rounding.hpp): the |V| bound for
// every bf16 magnitude, the budget test, and a crafted step showing why the actual rounding
// (not a |V| threshold alone) has to decide the residual product.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "common/random.hpp"
#include "cuda/hopper/p_rounding.hpp"
#include "formats/numeric.hpp"

namespace smla::hopper {
namespace {

TEST(HopperPRounding, VBoundIsTheMagnitudeOfEveryBf16AndInfiniteForInfOrNan) {
  for (uint32_t bits = 0; bits <= 0x7FFF; ++bits) {
    const float v = fmt::bf16_to_float(static_cast<uint16_t>(bits));
    const float bound = v_magnitude_bound(bits);
    if (std::isfinite(v)) {
      ASSERT_EQ(bound, v) << std::hex << bits;
    } else {
      ASSERT_TRUE(std::isinf(bound) && bound > 0) << std::hex << bits;
    }
  }
}

TEST(HopperPRounding, BudgetRejectsNanAndInfiniteTotals) {
  EXPECT_TRUE(within_rounding_budget(0.0f, 0.0f));
  EXPECT_TRUE(within_rounding_budget(kRoundingBudget, 1.0f));
  EXPECT_FALSE(within_rounding_budget(std::nextafter(kRoundingBudget, 1.0f), 1.0f));
  EXPECT_FALSE(within_rounding_budget(NAN, 1.0f));
  EXPECT_FALSE(within_rounding_budget(INFINITY, 1e30f));
}

float round_bf16(float x) {
  return fmt::bf16_to_float(fmt::float_to_bf16_rne(x));
}

// Weights just below and just above the midpoint 0.5 + 2^-9, which round down and up to the
// neighbouring bf16 values, next to V = +0.499 and -0.499: the reference nearly cancels while
// the rounding errors add. Every |V| is below 0.5, so the old threshold test skipped the
// residual, and out's error exceeds SPEC's bound; the budget takes the residual.
TEST(HopperPRounding, CraftedStepBelowTheOldThresholdNeedsTheResidual) {
  constexpr int n = 64;
  std::vector<float> p(n), v(n);
  for (int j = 0; j < n; ++j) {
    const bool down = j < n / 2;
    p[j] = down ? 0.5f + 0x1p-9f - 0x1p-20f : 0.5f + 0x1p-9f + 0x1p-20f;
    v[j] = down ? 0.4990234375f : -0.4990234375f;
  }
  double ref = 0, got = 0, l = 0;
  float rounding = 0.0f, v_max = 0.0f;
  for (int j = 0; j < n; ++j) {
    ref += double{p[j]} * v[j];
    got += double{round_bf16(p[j])} * v[j];
    l += p[j];
    rounding += std::fabs(p[j] - round_bf16(p[j]));
    v_max = std::fmax(v_max, std::fabs(v[j]));
  }
  ref /= l;
  got /= l;
  ASSERT_LT(v_max, 0.5f);
  EXPECT_GT(std::fabs(got - ref), 1e-3 + std::fabs(ref) / 64) << "the crafted step must break SPEC";
  EXPECT_FALSE(within_rounding_budget(rounding * v_max, static_cast<float>(l)));
}

// Random weights: whenever the budget lets a step skip the residual, out's rounding error is
// within it (the bound holds for every column, whatever V's signs).
TEST(HopperPRounding, SkippedStepsStayWithinTheBudget) {
  test::Rng rng(12345);
  int skipped = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    constexpr int n = 64;
    const auto scale = static_cast<float>(rng.uniform(0.05, 0.55));
    double err = 0, l = 0;
    float rounding = 0.0f, v_max = 0.0f;
    for (int j = 0; j < n; ++j) {
      const float p = std::exp2(static_cast<float>(rng.uniform(-8.0, 0.0)));
      const float v = scale * static_cast<float>(rng.uniform(-1.0, 1.0));
      err += (double{round_bf16(p)} - p) * v;
      l += p;
      rounding += std::fabs(p - round_bf16(p));
      v_max = std::fmax(v_max, std::fabs(v));
    }
    if (within_rounding_budget(rounding * v_max, static_cast<float>(l))) {
      ++skipped;
      ASSERT_LE(std::fabs(err) / l, kRoundingBudget * 1.0001) << trial;
    }
  }
  EXPECT_GT(skipped, 100);  // the budget does let typical steps skip the second product
}

// The producer's bound from scales (scale_bound_bits) covers every dequantized value
// bf16(code * s) of SPEC §2: every e4m3 code (448 at most) and every int8 value (128 at most),
// under f32 scales of every exponent (with random mantissas), every UE8M0 scale, and
// negative scales; an infinite or NaN scale gives +inf.
TEST(HopperPRounding, ScaleBoundCoversEveryDequantizedValue) {
  std::vector<float> scales;
  test::Rng rng(777);
  for (int e = -149; e <= 127; ++e) {
    scales.push_back(std::ldexp(1.0f, e));
    scales.push_back(-std::ldexp(static_cast<float>(rng.uniform(1.0, 2.0)), e));
  }
  for (int b = 0; b < 255; ++b) scales.push_back(fmt::ue8m0_to_float(static_cast<uint8_t>(b)));
  int checked = 0;
  for (const float s : scales) {
    const float e4m3_bound =
        fmt::float_from_bits(scale_bound_bits(fmt::float_bits(std::fabs(s)), 448.0f));
    const float int8_bound =
        fmt::float_from_bits(scale_bound_bits(fmt::float_bits(std::fabs(s)), 128.0f));
    for (int code = 0; code < 256; ++code) {
      const float v = fmt::bf16_to_float(
          fmt::dequantized_bf16(fmt::e4m3_to_float(static_cast<uint8_t>(code)) * s));
      if (std::isfinite(v)) {
        ASSERT_LE(std::fabs(v), e4m3_bound) << "e4m3 code " << code << " scale " << s;
        ++checked;
      }
      const float w = fmt::bf16_to_float(
          fmt::dequantized_bf16(static_cast<float>(static_cast<int8_t>(code)) * s));
      if (std::isfinite(w)) ASSERT_LE(std::fabs(w), int8_bound) << "int8 " << code << " " << s;
    }
  }
  EXPECT_GT(checked, 100000);
  EXPECT_EQ(scale_bound_bits(fmt::kF32InfBits, 448.0f), fmt::kF32InfBits);
  EXPECT_EQ(scale_bound_bits(fmt::kF32QuietNanBits, 448.0f), fmt::kF32InfBits);
  EXPECT_EQ(fmt::float_from_bits(scale_bound_bits(0, 448.0f)), 0x1p-126f);  // invalid rows
}

}  // namespace
}  // namespace smla::hopper
