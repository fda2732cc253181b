// smla::reference quantize / dequantize / write_cache over every format: round trips within
// the quantization step, edge rows, the NaN/Inf policy, padded block strides (padding never
// written), write_cache's skipped and duplicated slot ids, and the format facts.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "common/random.hpp"
#include "formats/numeric.hpp"
#include "formats/token_codec.hpp"
#include "reference/reference.hpp"
#include "test_formats_util.hpp"

namespace smla::test {
namespace {

using fmt::bf16_to_float;

const float kInf = std::numeric_limits<float>::infinity();
const float kNan = std::numeric_limits<float>::quiet_NaN();

// A format with the layout variant and the d_qk it is tested at.
struct Case {
  KvFormat format;
  int d_qk;
  bool split;
  std::string name;
};

const std::vector<Case>& all_cases() {
  static const std::vector<Case> cases = {
      {KvFormat::bf16, 576, false, "bf16_576"},
      {KvFormat::bf16, 512, false, "bf16_512"},
      {KvFormat::fp8_v32, 576, false, "fp8_v32"},
      {KvFormat::fp8_ds_mla, 512, false, "fp8_ds_mla"},
      {KvFormat::int8_ds_mla, 512, false, "int8_interleaved"},
      {KvFormat::int8_ds_mla, 512, true, "int8_split"},
  };
  return cases;
}

// NoPE values sharing one scale: fp8_v32 128, fp8_ds_mla 64, int8 the whole row.
int tile_dim(KvFormat format) {
  switch (format) {
    case KvFormat::fp8_v32: return 128;
    case KvFormat::fp8_ds_mla: return 64;
    default: return 512;
  }
}

// Quantized prefix of a row (the rest is the bf16 RoPE tail, copied).
int quantized_dim(KvFormat format) {
  switch (format) {
    case KvFormat::fp8_v32: return 512;
    case KvFormat::fp8_ds_mla: return 448;
    case KvFormat::int8_ds_mla: return 512;
    default: return 0;
  }
}

float finite_amax(const uint16_t* x, int n) {
  float m = 0.0f;
  for (int i = 0; i < n; ++i) {
    const float v = bf16_to_float(x[i]);
    if (std::isfinite(v)) m = std::fmax(m, std::fabs(v));
  }
  return m;
}

// The largest error SPEC §2 allows for x dequantized from its tile (finite x only): half a
// quantization step of the format at x, plus the final rounding to bf16 (2^-9 relative).
double allowed_error(KvFormat format, float x, float tile_amax) {
  const double ax = std::fabs(static_cast<double>(x));
  const double bf16_rounding = ax * 0x1p-8;  // covers |deq| slightly above |x|
  if (format == KvFormat::int8_ds_mla) {
    // x / s is itself rounded to f32 (relative 2^-24 of up to 127 steps) before rne.
    const double s = std::fmax(tile_amax, 1e-12f) / 127.0;
    return s * (0.5 + 1e-4) + bf16_rounding;
  }
  // e4m3: 3 mantissa bits -> half step 2^-4 relative for normals; s * 2^-10 for subnormals.
  const double s = fmt::fp8_tile_scale(tile_amax);
  return std::fmax(ax * 0x1p-4, s * 0x1p-10) + bf16_rounding;
}

// Quantizes rows into a fresh packed pool and dequantizes them back.
Rows round_trip(const Case& c, Rows& rows) {
  PoolBuffer buf(c.format, c.d_qk, rows.n, 1, 0, c.split);
  EXPECT_TRUE(reference::quantize(rows.view(), buf.pool).ok());
  Rows back(rows.n, c.d_qk);
  EXPECT_TRUE(reference::dequantize(buf.pool, back.view()).ok());
  return back;
}

void expect_within_step(const Case& c, Rows& rows, Rows& back) {
  const int qdim = quantized_dim(c.format);
  const int tile = tile_dim(c.format);
  for (int64_t r = 0; r < rows.n; ++r) {
    const uint16_t* x = rows.row(r);
    const uint16_t* y = back.row(r);
    for (int i = 0; i < c.d_qk; ++i) {
      if (i >= qdim) {  // bf16 pools and RoPE tails: bit-exact
        ASSERT_EQ(y[i], x[i]) << c.name << " row " << r << " elem " << i;
        continue;
      }
      const int first = i / tile * tile;
      const float amax = finite_amax(x + first, std::min(tile, qdim - first));
      const float xv = bf16_to_float(x[i]);
      const float yv = bf16_to_float(y[i]);
      ASSERT_LE(std::fabs(static_cast<double>(yv) - xv), allowed_error(c.format, xv, amax))
          << c.name << " row " << r << " elem " << i << " x " << xv << " got " << yv;
    }
  }
}

TEST(FormatOps, RoundTripWithinQuantizationStep) {
  Rng rng(2024);
  for (const Case& c : all_cases()) {
    Rows rows(16, c.d_qk);
    for (int64_t r = 0; r < rows.n; ++r) {
      // Rows of very different magnitudes, with a few outliers per row.
      const double stddev = std::exp2(rng.uniform(-20.0, 20.0));
      for (int i = 0; i < c.d_qk; ++i) rows.row(r)[i] = bf16(rng.normal(stddev));
      for (int k = 0; k < 3; ++k) {
        rows.row(r)[rng.uniform_int(0, c.d_qk - 1)] = bf16(rng.normal(stddev * 50));
      }
    }
    Rows back = round_trip(c, rows);
    expect_within_step(c, rows, back);
  }
}

TEST(FormatOps, EdgeRows) {
  const float edge_values[][4] = {
      {0.0f, 0.0f, 0.0f, 0.0f},           // all zero
      {1e-40f, -1e-39f, 0x1p-133f, 0.0f},  // subnormal inputs
      {448.0f, -448.0f, 1.0f, -0.25f},     // the e4m3 range exactly
      {1e30f, -1.0f, 3e29f, 0.5f},         // huge amax
      {1e-30f, -2e-30f, 5e-31f, 0.0f},     // tiny amax
  };
  for (const Case& c : all_cases()) {
    Rows rows(std::size(edge_values), c.d_qk);
    for (size_t r = 0; r < std::size(edge_values); ++r) {
      // The 4 values repeated over the whole row, RoPE included.
      for (int i = 0; i < c.d_qk; ++i) rows.row(r)[i] = bf16(edge_values[r][i % 4]);
    }
    Rows back = round_trip(c, rows);
    expect_within_step(c, rows, back);
  }
}

TEST(FormatOps, Fp8TopOfBf16RangeDequantizesToInfinity) {
  // docs/formats.md, known edges: amax 1.9375 * 2^127 -> s = 2^120, x / s = 248, a tie that
  // rounds to the even 256 = 2^8, and 2^8 * 2^120 overflows f32. One bf16 step below
  // (1.9296875 * 2^127 -> 247 -> 240) stays finite.
  for (const Case& c : all_cases()) {
    if (c.format != KvFormat::fp8_v32 && c.format != KvFormat::fp8_ds_mla) continue;
    Rows rows(2, c.d_qk);
    rows.row(0)[0] = bf16(0x1.fp127f);
    rows.row(1)[0] = bf16(0x1.edp127f);
    Rows back = round_trip(c, rows);
    EXPECT_EQ(bf16_to_float(back.row(0)[0]), kInf) << c.name;
    EXPECT_EQ(bf16_to_float(back.row(1)[0]), 240.0f * 0x1p120f) << c.name;
  }
}

TEST(FormatOps, ZeroRowsGiveMinimumScalesAndZeroValues) {
  for (const Case& c : all_cases()) {
    Rows rows(1, c.d_qk);
    PoolBuffer buf(c.format, c.d_qk, 1, 1, 0, c.split);
    ASSERT_TRUE(reference::quantize(rows.view(), buf.pool).ok());
    const std::vector<uint8_t> bytes = token_bytes(buf, c.d_qk, 0);
    switch (c.format) {
      case KvFormat::fp8_ds_mla:
        for (size_t i = 576; i < 583; ++i) EXPECT_EQ(bytes[i], 114) << "2^-13 as UE8M0";
        break;
      case KvFormat::fp8_v32:
        for (int k = 0; k < 4; ++k) {
          EXPECT_EQ(bytes[512 + 4 * k + 3], 0x39) << "2^-13 as f32, tile " << k;
        }
        break;
      case KvFormat::int8_ds_mla: {
        float s;
        std::memcpy(&s, bytes.data() + 512, 4);
        EXPECT_EQ(s, 1e-12f / 127.0f);
        break;
      }
      case KvFormat::bf16: break;
    }
    Rows back(1, c.d_qk);
    ASSERT_TRUE(reference::dequantize(buf.pool, back.view()).ok());
    for (int i = 0; i < c.d_qk; ++i) ASSERT_EQ(back.row(0)[i], 0) << c.name << " elem " << i;
  }
}

// ---- NaN/Inf policy (docs/formats.md) ------------------------------------------------------

TEST(FormatOps, Fp8NanInfPolicy) {
  for (const Case& c : all_cases()) {
    if (c.format != KvFormat::fp8_v32 && c.format != KvFormat::fp8_ds_mla) continue;
    Rows rows(1, c.d_qk);
    uint16_t* x = rows.row(0);
    // Tile 0: finite amax 2 -> s = 2^-7 whatever the non-finite elements.
    x[0] = bf16(kNan);
    x[1] = bf16(kInf);
    x[2] = bf16(-kInf);
    x[3] = bf16(2.0f);
    x[4] = 0xFFC0;  // -NaN
    // Tile 1: nothing finite but zeros -> amax 0 -> minimum scale 2^-13.
    const int t1 = tile_dim(c.format);
    x[t1] = bf16(kInf);
    x[t1 + 1] = bf16(kNan);
    // RoPE NaN payload is copied bit-exactly.
    x[c.d_qk - 1] = 0x7FA1;

    PoolBuffer buf(c.format, c.d_qk, 1, 1);
    ASSERT_TRUE(reference::quantize(rows.view(), buf.pool).ok());
    const std::vector<uint8_t> b = token_bytes(buf, c.d_qk, 0);
    EXPECT_EQ(b[0], 0x7F) << c.name << ": NaN stays NaN";
    EXPECT_EQ(b[1], 0x7E) << c.name << ": +inf saturates";
    EXPECT_EQ(b[2], 0xFE) << c.name << ": -inf saturates";
    EXPECT_EQ(b[3], 0x78) << c.name << ": 2 / 2^-7 = 256";
    EXPECT_EQ(b[4], 0xFF) << c.name << ": -NaN keeps its sign";
    EXPECT_EQ(b[t1], 0x7E);
    EXPECT_EQ(b[t1 + 1], 0x7F);

    Rows back(1, c.d_qk);
    ASSERT_TRUE(reference::dequantize(buf.pool, back.view()).ok());
    const uint16_t* y = back.row(0);
    EXPECT_TRUE(std::isnan(bf16_to_float(y[0])));
    EXPECT_EQ(bf16_to_float(y[1]), 448.0f * 0x1p-7f);
    EXPECT_EQ(bf16_to_float(y[2]), -448.0f * 0x1p-7f);
    EXPECT_EQ(bf16_to_float(y[3]), 2.0f);
    EXPECT_EQ(bf16_to_float(y[t1]), 448.0f * 0x1p-13f);
    EXPECT_TRUE(std::isnan(bf16_to_float(y[t1 + 1])));
    EXPECT_EQ(y[c.d_qk - 1], 0x7FA1);
  }
}

TEST(FormatOps, Int8NanInfPolicy) {
  for (bool split : {false, true}) {
    Rows rows(2, 512);
    uint16_t* x = rows.row(0);
    x[0] = bf16(kNan);
    x[1] = bf16(kInf);
    x[2] = bf16(-kInf);
    x[3] = bf16(254.0f);  // the finite amax: s = 2
    x[4] = bf16(-3.0f);
    uint16_t* z = rows.row(1);  // nothing finite but zeros: s = 1e-12 / 127
    z[0] = bf16(kInf);
    z[1] = bf16(kNan);

    PoolBuffer buf(KvFormat::int8_ds_mla, 512, 1, 2, 0, split);
    ASSERT_TRUE(reference::quantize(rows.view(), buf.pool).ok());
    const std::vector<uint8_t> b = token_bytes(buf, 512, 0);
    EXPECT_EQ(b[0], 0x00) << "NaN becomes 0";
    EXPECT_EQ(b[1], 0x7F) << "+inf clamps to 127";
    EXPECT_EQ(b[2], 0x81) << "-inf clamps to -127";
    EXPECT_EQ(b[3], 0x7F);
    EXPECT_EQ(b[4], 0xFE) << "-1.5 rounds to -2";
    const std::vector<uint8_t> s2 = {0x00, 0x00, 0x00, 0x40};  // f32 2.0
    EXPECT_EQ(std::vector<uint8_t>(b.begin() + 512, b.end()), s2);

    const std::vector<uint8_t> bz = token_bytes(buf, 512, 1);
    EXPECT_EQ(bz[0], 0x7F);
    EXPECT_EQ(bz[1], 0x00);
    float s;
    std::memcpy(&s, bz.data() + 512, 4);
    EXPECT_EQ(s, 1e-12f / 127.0f);
  }
}

// ---- layouts: block sizes, padded strides, untouched padding --------------------------------

TEST(FormatOps, BlockSizesWithPaddedStridesLeavePaddingUntouched) {
  Rng rng(99);
  for (const Case& c : all_cases()) {
    // The token bytes a row quantizes to, from a packed block-size-1 pool.
    const int64_t n_rows = 5;
    Rows rows(n_rows, c.d_qk);
    for (uint16_t& v : rows.values) v = bf16(rng.normal(3.0));
    PoolBuffer packed(c.format, c.d_qk, n_rows, 1, 0, c.split);
    ASSERT_TRUE(reference::quantize(rows.view(), packed.pool).ok());

    for (int32_t block_size : {1, 64, 256}) {
      // Rows go to slots spread over every block, first and last offsets included.
      const int64_t bs = block_size;
      const std::vector<int64_t> slot_list =
          bs == 1 ? std::vector<int64_t>{4, 0, 2, 1, 3}
                  : std::vector<int64_t>{0, bs - 1, bs, 2 * bs + bs / 2, 3 * bs - 1};
      const int64_t num_blocks = bs == 1 ? 5 : 3;
      PoolBuffer buf(c.format, c.d_qk, num_blocks, block_size, /*pad=*/48, c.split);
      std::vector<int32_t> slot_ids(slot_list.begin(), slot_list.end());
      const TensorView slots = TensorView::contiguous(slot_ids.data(), DType::i32, {n_rows});
      ASSERT_TRUE(reference::write_cache(rows.view(), slots, buf.pool).ok());

      const std::string where = c.name + " block_size " + std::to_string(block_size);
      for (int64_t r = 0; r < n_rows; ++r) {
        ASSERT_EQ(token_bytes(buf, c.d_qk, slot_list[r]), token_bytes(packed, c.d_qk, r))
            << where << " row " << r;
      }
      const std::vector<bool> owned = owned_data_bytes(buf.pool, c.d_qk, slot_list,
                                                       buf.data.size());
      for (size_t i = 0; i < buf.data.size(); ++i) {
        if (!owned[i]) ASSERT_EQ(buf.data[i], kPoison) << where << " data byte " << i;
      }
      if (c.split) {
        std::vector<bool> owned_scale(buf.scales.size(), false);
        for (int64_t slot : slot_list) {
          const ByteRange sr = split_scale_range(buf.pool, slot);
          for (int64_t i = sr.first; i < sr.second; ++i) owned_scale[i] = true;
        }
        for (size_t i = 0; i < buf.scales.size(); ++i) {
          if (!owned_scale[i]) ASSERT_EQ(buf.scales[i], kPoison) << where << " scale byte " << i;
        }
      }

      // Reading the slots back gives what the packed pool gives.
      std::vector<uint16_t> got(c.d_qk), want(c.d_qk);
      for (int64_t r = 0; r < n_rows; ++r) {
        fmt::decode_token(buf.pool, slot_list[r], c.d_qk, got.data());
        fmt::decode_token(packed.pool, r, c.d_qk, want.data());
        ASSERT_EQ(got, want) << where << " row " << r;
      }
    }
  }
}

TEST(FormatOps, StridedRowsAreReadAndWrittenInPlace) {
  // Rows with a row stride larger than d_qk: the gap columns are neither read nor written.
  Rng rng(5);
  for (const Case& c : all_cases()) {
    const int64_t n = 3, row_stride = c.d_qk + 40;
    std::vector<uint16_t> src(n * row_stride, 0xDEAD);
    Rows dense(n, c.d_qk);
    for (int64_t r = 0; r < n; ++r) {
      for (int i = 0; i < c.d_qk; ++i) {
        dense.row(r)[i] = src[r * row_stride + i] = bf16(rng.normal(1.0));
      }
    }
    const TensorView src_view =
        TensorView::strided(src.data(), DType::bf16, {n, c.d_qk}, {row_stride, 1});
    PoolBuffer strided_pool(c.format, c.d_qk, n, 1, 0, c.split);
    PoolBuffer dense_pool(c.format, c.d_qk, n, 1, 0, c.split);
    ASSERT_TRUE(reference::quantize(src_view, strided_pool.pool).ok());
    ASSERT_TRUE(reference::quantize(dense.view(), dense_pool.pool).ok());
    ASSERT_EQ(strided_pool.data, dense_pool.data) << c.name;
    ASSERT_EQ(strided_pool.scales, dense_pool.scales) << c.name;

    std::vector<uint16_t> dst(n * row_stride, 0xBEEF);
    const TensorView dst_view =
        TensorView::strided(dst.data(), DType::bf16, {n, c.d_qk}, {row_stride, 1});
    ASSERT_TRUE(reference::dequantize(dense_pool.pool, dst_view).ok());
    Rows back(n, c.d_qk);
    ASSERT_TRUE(reference::dequantize(dense_pool.pool, back.view()).ok());
    for (int64_t r = 0; r < n; ++r) {
      for (int64_t i = 0; i < row_stride; ++i) {
        const uint16_t want = i < c.d_qk ? back.row(r)[i] : uint16_t{0xBEEF};
        ASSERT_EQ(dst[r * row_stride + i], want) << c.name << " row " << r << " col " << i;
      }
    }
  }
}

// ---- write_cache -----------------------------------------------------------------------------

TEST(FormatOps, WriteCacheSkipsInvalidSlotsAndKeepsOneOfDuplicates) {
  Rng rng(31);
  for (const Case& c : all_cases()) {
    const int32_t block_size = 4;
    const int64_t num_blocks = 2;  // 8 slots
    Rows rows(7, c.d_qk);
    for (uint16_t& v : rows.values) v = bf16(rng.normal(2.0));
    std::vector<int32_t> slot_ids = {3, -1, 8, 0, 3, -7, 1 << 30};
    const TensorView slots = TensorView::contiguous(slot_ids.data(), DType::i32, {7});

    PoolBuffer buf(c.format, c.d_qk, num_blocks, block_size, 16, c.split);
    ASSERT_TRUE(reference::write_cache(rows.view(), slots, buf.pool).ok());

    // Only slots 0 and 3 were written; every other byte (other slots, padding) is poison.
    const std::vector<bool> owned = owned_data_bytes(buf.pool, c.d_qk, {0, 3}, buf.data.size());
    for (size_t i = 0; i < buf.data.size(); ++i) {
      if (!owned[i]) ASSERT_EQ(buf.data[i], kPoison) << c.name << " byte " << i;
    }

    // The token bytes each row alone would produce.
    PoolBuffer single(c.format, c.d_qk, 7, 1, 0, c.split);
    ASSERT_TRUE(reference::quantize(rows.view(), single.pool).ok());
    EXPECT_EQ(token_bytes(buf, c.d_qk, 0), token_bytes(single, c.d_qk, 3)) << c.name;
    const std::vector<uint8_t> slot3 = token_bytes(buf, c.d_qk, 3);
    EXPECT_TRUE(slot3 == token_bytes(single, c.d_qk, 0) || slot3 == token_bytes(single, c.d_qk, 4))
        << c.name << ": slot 3 must hold one whole row of the two written to it";
  }
}

TEST(FormatOps, Int8LayoutsHoldTheSameValuesAndScales) {
  Rng rng(77);
  Rows rows(6, 512);
  for (uint16_t& v : rows.values) v = bf16(rng.normal(10.0));
  PoolBuffer interleaved(KvFormat::int8_ds_mla, 512, 3, 2, 32, false);
  PoolBuffer split(KvFormat::int8_ds_mla, 512, 3, 2, 32, true);
  ASSERT_TRUE(reference::quantize(rows.view(), interleaved.pool).ok());
  ASSERT_TRUE(reference::quantize(rows.view(), split.pool).ok());
  for (int64_t slot = 0; slot < 6; ++slot) {
    EXPECT_EQ(token_bytes(interleaved, 512, slot), token_bytes(split, 512, slot)) << slot;
  }
  Rows a(6, 512), b(6, 512);
  ASSERT_TRUE(reference::dequantize(interleaved.pool, a.view()).ok());
  ASSERT_TRUE(reference::dequantize(split.pool, b.view()).ok());
  EXPECT_EQ(a.values, b.values);
}

// ---- format facts ----------------------------------------------------------------------------

TEST(FormatInfo, NamesParseAndSizes) {
  for (KvFormat f : {KvFormat::bf16, KvFormat::fp8_v32, KvFormat::fp8_ds_mla,
                     KvFormat::int8_ds_mla}) {
    KvFormat parsed = KvFormat::bf16;
    ASSERT_TRUE(parse_format(format_name(f), &parsed)) << format_name(f);
    EXPECT_EQ(parsed, f);
  }
  KvFormat untouched = KvFormat::fp8_v32;
  EXPECT_FALSE(parse_format("fp8", &untouched));
  EXPECT_FALSE(parse_format(nullptr, &untouched));
  EXPECT_EQ(untouched, KvFormat::fp8_v32);
  EXPECT_STREQ(format_name(static_cast<KvFormat>(42)), "unknown");

  EXPECT_TRUE(is_model_d_qk(576));
  EXPECT_TRUE(is_model_d_qk(512));
  EXPECT_FALSE(is_model_d_qk(128));
  EXPECT_FALSE(is_model_d_qk(int64_t{576} + (int64_t{1} << 32)));  // no narrowing to 576
  EXPECT_TRUE(format_supports_d_qk(KvFormat::bf16, 576));
  EXPECT_TRUE(format_supports_d_qk(KvFormat::bf16, 512));
  EXPECT_FALSE(format_supports_d_qk(KvFormat::bf16, 128));
  EXPECT_TRUE(format_supports_d_qk(KvFormat::fp8_v32, 576));
  EXPECT_FALSE(format_supports_d_qk(KvFormat::fp8_v32, 512));
  EXPECT_TRUE(format_supports_d_qk(KvFormat::fp8_ds_mla, 512));
  EXPECT_FALSE(format_supports_d_qk(KvFormat::fp8_ds_mla, 576));
  EXPECT_TRUE(format_supports_d_qk(KvFormat::int8_ds_mla, 512));
  EXPECT_FALSE(format_supports_d_qk(KvFormat::int8_ds_mla, 576));

  EXPECT_EQ(format_token_bytes(KvFormat::bf16, 576), 1152);
  EXPECT_EQ(format_token_bytes(KvFormat::bf16, 512), 1024);
  EXPECT_EQ(format_token_bytes(KvFormat::fp8_v32, 576), 656);
  EXPECT_EQ(format_token_bytes(KvFormat::fp8_ds_mla, 512), 584);
  EXPECT_EQ(format_token_bytes(KvFormat::int8_ds_mla, 512), 528);
  EXPECT_EQ(format_token_bytes(KvFormat::int8_ds_mla, 512, true), 512);
  EXPECT_EQ(format_token_bytes(KvFormat::fp8_v32, 512), 0);

  uint8_t byte = 0;
  const KvPool pool = KvPool::packed(KvFormat::fp8_ds_mla, &byte, 10, 64, 512);
  EXPECT_EQ(pool.block_stride, 64 * 584);
  EXPECT_EQ(pool.packed_block_bytes(512), 64 * 584);
  EXPECT_EQ(pool.slots(), 640);
  EXPECT_EQ(pool.data, &byte);
  EXPECT_EQ(pool.scales, nullptr);
  EXPECT_EQ(KvPool::packed(KvFormat::int8_ds_mla, &byte, 1, 16, 512).block_stride, 16 * 528);
  EXPECT_EQ(KvPool::packed(KvFormat::bf16, &byte, 1, 1, 576).block_stride, 1152);
}

}  // namespace
}  // namespace smla::test
