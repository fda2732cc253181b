// Scalar conversions of src/formats/numeric.hpp against oracles that share no code with it:
// e4m3 values from the OCP bit formula, nearest-code search over the whole e4m3 table,
// tile scales by exact power-of-two comparison.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>

#include "common/random.hpp"
#include "formats/numeric.hpp"

namespace smla::fmt {
namespace {

const float kInf = std::numeric_limits<float>::infinity();
const float kNan = std::numeric_limits<float>::quiet_NaN();

// The OCP E4M3FN value of a code (sign, exponent bias 7, 3 mantissa bits), in double.
double e4m3_oracle(uint8_t code) {
  const int exp = (code >> 3) & 0xF;
  const int man = code & 0x7;
  const double mag = exp == 0 ? std::ldexp(man / 8.0, -6) : std::ldexp(1.0 + man / 8.0, exp - 7);
  return (code & 0x80) ? -mag : mag;
}

bool is_e4m3_nan(uint8_t code) { return (code & 0x7F) == 0x7F; }

// Nearest finite e4m3 code to x by searching all 127 magnitudes (ties to the even code,
// which is the even mantissa), saturating at 448. x must not be NaN.
uint8_t e4m3_nearest_oracle(float x) {
  const double mag = std::fabs(static_cast<double>(x));
  int best = 0;
  for (int c = 1; c <= 0x7E; ++c) {
    const double d = std::fabs(e4m3_oracle(static_cast<uint8_t>(c)) - mag);
    const double d_best = std::fabs(e4m3_oracle(static_cast<uint8_t>(best)) - mag);
    if (d < d_best || (d == d_best && (c & 1) == 0)) best = c;
  }
  return static_cast<uint8_t>(best | (std::signbit(x) ? 0x80 : 0));
}

TEST(FormatNumeric, E4m3DecodesEveryCode) {
  for (int c = 0; c < 256; ++c) {
    const uint8_t code = static_cast<uint8_t>(c);
    const float v = e4m3_to_float(code);
    if (is_e4m3_nan(code)) {
      EXPECT_TRUE(std::isnan(v)) << "code " << c;
      EXPECT_EQ(std::signbit(v), (c & 0x80) != 0) << "code " << c;
    } else {
      EXPECT_EQ(static_cast<double>(v), e4m3_oracle(code)) << "code " << c;
      EXPECT_EQ(std::signbit(v), (c & 0x80) != 0) << "code " << c;  // 0x80 is -0
    }
  }
  EXPECT_EQ(e4m3_to_float(0x7E), 448.0f);
  EXPECT_EQ(e4m3_to_float(0x08), 0x1p-6f);  // smallest normal
  EXPECT_EQ(e4m3_to_float(0x01), 0x1p-9f);  // smallest subnormal
}

TEST(FormatNumeric, E4m3EveryCodeReencodesToItself) {
  // Finite codes round-trip exactly (-0 included); NaN codes come back as 0x7F with their sign.
  for (int c = 0; c < 256; ++c) {
    const uint8_t code = static_cast<uint8_t>(c);
    EXPECT_EQ(float_to_e4m3_satfinite_rne(e4m3_to_float(code)), code) << "code " << c;
  }
}

TEST(FormatNumeric, E4m3TiesRoundToEvenAndNeighboursRoundToNearest) {
  for (int c = 0; c < 0x7E; ++c) {
    const float lo = e4m3_to_float(static_cast<uint8_t>(c));
    const float hi = e4m3_to_float(static_cast<uint8_t>(c + 1));
    const float mid = (lo + hi) / 2;  // exact: both have at most 4 significant bits
    const uint8_t even = static_cast<uint8_t>((c & 1) ? c + 1 : c);
    EXPECT_EQ(float_to_e4m3_satfinite_rne(mid), even) << "tie above code " << c;
    EXPECT_EQ(float_to_e4m3_satfinite_rne(-mid), even | 0x80) << "tie above code " << c;
    EXPECT_EQ(float_to_e4m3_satfinite_rne(std::nextafter(mid, 0.0f)), c) << "below tie " << c;
    EXPECT_EQ(float_to_e4m3_satfinite_rne(std::nextafter(mid, kInf)), c + 1) << "above tie " << c;
  }
}

TEST(FormatNumeric, E4m3MatchesNearestCodeSearch) {
  test::Rng rng(7);
  for (int i = 0; i < 20000; ++i) {
    // Log-uniform magnitudes from far below the subnormals to beyond the saturation point.
    const float mag = static_cast<float>(std::exp2(rng.uniform(-14.0, 10.0)));
    const float x = (rng.next() & 1) ? -mag : mag;
    ASSERT_EQ(float_to_e4m3_satfinite_rne(x), e4m3_nearest_oracle(x)) << "x = " << x;
  }
}

TEST(FormatNumeric, E4m3SaturatesAndKeepsNan) {
  EXPECT_EQ(float_to_e4m3_satfinite_rne(448.0f), 0x7E);
  EXPECT_EQ(float_to_e4m3_satfinite_rne(464.0f), 0x7E);  // halfway to 480, which does not exist
  EXPECT_EQ(float_to_e4m3_satfinite_rne(1e30f), 0x7E);
  EXPECT_EQ(float_to_e4m3_satfinite_rne(FLT_MAX), 0x7E);
  EXPECT_EQ(float_to_e4m3_satfinite_rne(kInf), 0x7E);
  EXPECT_EQ(float_to_e4m3_satfinite_rne(-kInf), 0xFE);
  EXPECT_EQ(float_to_e4m3_satfinite_rne(-500.0f), 0xFE);
  EXPECT_EQ(float_to_e4m3_satfinite_rne(kNan), 0x7F);
  EXPECT_EQ(float_to_e4m3_satfinite_rne(-kNan), 0xFF);
}

TEST(FormatNumeric, E4m3Subnormals) {
  EXPECT_EQ(float_to_e4m3_satfinite_rne(0x1p-9f), 0x01);
  EXPECT_EQ(float_to_e4m3_satfinite_rne(0x1p-10f), 0x00);       // tie between 0 and 2^-9
  EXPECT_EQ(float_to_e4m3_satfinite_rne(0x1.000002p-10f), 0x01);  // just above that tie
  EXPECT_EQ(float_to_e4m3_satfinite_rne(0x3p-10f), 0x02);       // tie between 1 and 2
  EXPECT_EQ(float_to_e4m3_satfinite_rne(0x7p-9f), 0x07);        // largest subnormal
  EXPECT_EQ(float_to_e4m3_satfinite_rne(0xFp-10f), 0x08);       // tie 7|8: the normal 2^-6
  EXPECT_EQ(float_to_e4m3_satfinite_rne(-0x1p-12f), 0x80);      // rounds to -0
  EXPECT_EQ(float_to_e4m3_satfinite_rne(1e-40f), 0x00);         // an f32 subnormal
  EXPECT_EQ(float_to_e4m3_satfinite_rne(-0.0f), 0x80);
}

TEST(FormatNumeric, Bf16RoundsToNearestEven) {
  auto bits = [](uint32_t u) { return float_from_bits(u); };
  EXPECT_EQ(float_to_bf16_rne(1.0f), 0x3F80);
  EXPECT_EQ(float_to_bf16_rne(bits(0x3F808000u)), 0x3F80);  // tie, even below
  EXPECT_EQ(float_to_bf16_rne(bits(0x3F818000u)), 0x3F82);  // tie, even above
  EXPECT_EQ(float_to_bf16_rne(bits(0x3F808001u)), 0x3F81);  // just above the tie
  EXPECT_EQ(float_to_bf16_rne(bits(0x3F807FFFu)), 0x3F80);  // just below the tie
  EXPECT_EQ(float_to_bf16_rne(bits(0xBF818000u)), 0xBF82);  // negative tie
  EXPECT_EQ(float_to_bf16_rne(bits(0x7F7F8000u)), 0x7F80);  // tie above the max: infinity
  EXPECT_EQ(float_to_bf16_rne(kInf), 0x7F80);
  EXPECT_EQ(float_to_bf16_rne(-kInf), 0xFF80);
  EXPECT_EQ(float_to_bf16_rne(bits(0x00000001u)), 0x0000);  // the smallest f32 subnormal
  EXPECT_EQ(bf16_to_float(0x3F80), 1.0f);
  EXPECT_EQ(bf16_to_float(0xC0A0), -5.0f);
  EXPECT_EQ(bf16_to_float(0x0001), 0x1p-133f);  // smallest bf16 subnormal
}

TEST(FormatNumeric, Bf16NanStaysQuietNan) {
  // A NaN whose payload sits only in the low 16 bits must not truncate to infinity.
  for (uint32_t u : {0x7F800001u, 0xFF800001u, 0x7FC00000u, 0x7FFFFFFFu, 0x7F80FFFFu}) {
    const uint16_t b = float_to_bf16_rne(float_from_bits(u));
    EXPECT_TRUE(std::isnan(bf16_to_float(b))) << std::hex << u;
    EXPECT_EQ(b & 0x0040, 0x0040) << "quiet bit, input " << std::hex << u;
    EXPECT_EQ(b & 0x8000, (u >> 16) & 0x8000) << "sign, input " << std::hex << u;
  }
}

TEST(FormatNumeric, Ue8m0) {
  EXPECT_EQ(ue8m0_to_float(127), 1.0f);
  EXPECT_EQ(ue8m0_to_float(120), 0x1p-7f);
  EXPECT_EQ(ue8m0_to_float(254), 0x1p127f);
  EXPECT_EQ(ue8m0_to_float(0), 0x1p-127f);
  EXPECT_TRUE(std::isnan(ue8m0_to_float(255)));
  for (int k = -126; k <= 127; ++k) {
    EXPECT_EQ(ue8m0_from_pow2(std::ldexp(1.0f, k)), 127 + k) << "2^" << k;
    EXPECT_EQ(ue8m0_to_float(static_cast<uint8_t>(127 + k)), std::ldexp(1.0f, k)) << "2^" << k;
  }
}

// The smallest 2^k, k >= -13, with 448 * 2^k >= amax: SPEC's 2^ceil(log2(max(amax/448, 1e-4)))
// in exact arithmetic (448 * 2^k is exact in double, and 2^-14 < 1e-4 <= 2^-13).
float tile_scale_oracle(float amax) {
  int k = -13;
  while (448.0 * std::ldexp(1.0, k) < static_cast<double>(amax)) ++k;
  return std::ldexp(1.0f, k);
}

TEST(FormatNumeric, Fp8TileScale) {
  EXPECT_EQ(fp8_tile_scale(0.0f), 0x1p-13f);
  EXPECT_EQ(fp8_tile_scale(448.0f), 1.0f);
  EXPECT_EQ(fp8_tile_scale(std::nextafter(448.0f, kInf)), 2.0f);
  EXPECT_EQ(fp8_tile_scale(1.0f), 0x1p-8f);  // 1/448 = 2^-8.8
  EXPECT_EQ(fp8_tile_scale(448.0f * 0x1p-13f), 0x1p-13f);
  EXPECT_EQ(fp8_tile_scale(448.0f * 0x1p-14f), 0x1p-13f);  // the 1e-4 floor
  EXPECT_EQ(fp8_tile_scale(1e-30f), 0x1p-13f);
  EXPECT_EQ(fp8_tile_scale(1e-40f), 0x1p-13f);  // f32 subnormal
  EXPECT_EQ(fp8_tile_scale(1e30f), tile_scale_oracle(1e30f));
  EXPECT_EQ(fp8_tile_scale(FLT_MAX), 0x1p120f);
  EXPECT_EQ(fp8_tile_scale(kNan), 0x1p-13f);
  for (int k = -12; k <= 119; ++k) {
    // Exactly at each power-of-two boundary and one f32 step on either side of it.
    const float edge = 448.0f * std::ldexp(1.0f, k);
    for (float amax : {std::nextafter(edge, 0.0f), edge, std::nextafter(edge, kInf)}) {
      EXPECT_EQ(fp8_tile_scale(amax), tile_scale_oracle(amax)) << "amax " << amax;
    }
  }
  test::Rng rng(11);
  for (int i = 0; i < 20000; ++i) {
    const float amax = static_cast<float>(std::exp2(rng.uniform(-40.0, 120.0)));
    ASSERT_EQ(fp8_tile_scale(amax), tile_scale_oracle(amax)) << "amax " << amax;
  }
}

TEST(FormatNumeric, Int8RowScale) {
  EXPECT_EQ(int8_row_scale(127.0f), 1.0f);
  EXPECT_EQ(int8_row_scale(254.0f), 2.0f);
  EXPECT_EQ(int8_row_scale(0.0f), 1e-12f / 127.0f);
  EXPECT_EQ(int8_row_scale(1e-30f), 1e-12f / 127.0f);
  EXPECT_EQ(int8_row_scale(3.0f), 3.0f / 127.0f);
}

TEST(FormatNumeric, Int8RoundsToNearestEvenAndClamps) {
  EXPECT_EQ(float_to_int8_rne_clamped(0.5f), 0);
  EXPECT_EQ(float_to_int8_rne_clamped(1.5f), 2);
  EXPECT_EQ(float_to_int8_rne_clamped(2.5f), 2);
  EXPECT_EQ(float_to_int8_rne_clamped(-0.5f), 0);
  EXPECT_EQ(float_to_int8_rne_clamped(-1.5f), -2);
  EXPECT_EQ(float_to_int8_rne_clamped(-63.5f), -64);
  EXPECT_EQ(float_to_int8_rne_clamped(126.5f), 126);
  EXPECT_EQ(float_to_int8_rne_clamped(std::nextafter(0.5f, 0.0f)), 0);
  EXPECT_EQ(float_to_int8_rne_clamped(std::nextafter(0.5f, 1.0f)), 1);
  EXPECT_EQ(float_to_int8_rne_clamped(127.4f), 127);
  EXPECT_EQ(float_to_int8_rne_clamped(128.0f), 127);
  EXPECT_EQ(float_to_int8_rne_clamped(-1e30f), -127);
  EXPECT_EQ(float_to_int8_rne_clamped(kInf), 127);
  EXPECT_EQ(float_to_int8_rne_clamped(-kInf), -127);
  EXPECT_EQ(float_to_int8_rne_clamped(kNan), 0);
  EXPECT_EQ(float_to_int8_rne_clamped(1e-40f), 0);
  // Every quarter step over the range: the libm rounding (default mode: nearest even).
  for (int q = -130 * 4; q <= 130 * 4; ++q) {
    const float v = q / 4.0f;
    const float expected = std::fmin(127.0f, std::fmax(-127.0f, std::nearbyint(v)));
    EXPECT_EQ(float_to_int8_rne_clamped(v), static_cast<int8_t>(expected)) << "v = " << v;
  }
}

TEST(FormatNumeric, AmaxTermIgnoresNonFinite) {
  EXPECT_EQ(amax_term(-3.0f), 3.0f);
  EXPECT_EQ(amax_term(kInf), 0.0f);
  EXPECT_EQ(amax_term(-kInf), 0.0f);
  EXPECT_EQ(amax_term(kNan), 0.0f);
  EXPECT_EQ(amax_term(-FLT_MAX), FLT_MAX);
}

}  // namespace
}  // namespace smla::fmt
