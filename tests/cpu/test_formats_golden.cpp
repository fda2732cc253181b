// Golden bytes: one row per format with chosen values, quantized through smla::reference,
// compared with bytes derived by hand from SPEC §2 (derivations in the comments). Multi-byte
// fields are little-endian.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <vector>

#include "formats/token_codec.hpp"
#include "reference/reference.hpp"
#include "test_formats_util.hpp"

namespace smla::test {
namespace {

// Expected token bytes: all zero except the listed offsets.
std::vector<uint8_t> bytes_with(size_t size, const std::map<size_t, uint8_t>& set) {
  std::vector<uint8_t> out(size, 0);
  for (const auto& [at, value] : set) out[at] = value;
  return out;
}

void expect_bytes(const std::vector<uint8_t>& got, const std::vector<uint8_t>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i], want[i]) << "byte " << i;
  }
}

TEST(FormatGolden, Fp8V32) {
  Rows rows(1, 576);
  uint16_t* x = rows.row(0);
  // Tile 0 (NoPE [0,128)): amax 448 -> s = 2^ceil(log2(1)) = 1.
  x[0] = bf16(448.0f);   // 448 = 1.75 * 2^8: exponent field 8+7 = 15, mantissa 110 -> 0x7E
  x[1] = bf16(1.0f);     // 1.0: exponent field 7, mantissa 000 -> 0x38
  x[2] = bf16(-2.5f);    // -1.25 * 2^1: sign, exponent field 8, mantissa 010 -> 0xC2
  x[3] = bf16(0.1f);     // bf16 0x3DCD = 1.6015625 * 2^-4; 0.6015625 * 8 = 4.81 -> mantissa
                         // 101, exponent field 3 -> 0x1D
  // Tile 1: amax 1 -> 1/448 = 2^-8.8 -> s = 2^-8 (f32 0x3B800000).
  x[128] = bf16(1.0f);   // 1 / 2^-8 = 256 = 2^8: exponent field 15, mantissa 000 -> 0x78
  x[129] = bf16(-0.5f);  // -128 = -2^7: sign, exponent field 14 -> 0xF0
  // Tile 2 stays zero: amax 0 -> s = 2^-13, the 1e-4 floor (f32 0x39000000), values 0x00.
  // Tile 3: amax 1000 -> 1000/448 = 2.23 -> s = 4 (f32 0x40800000).
  x[384] = bf16(1000.0f);  // 250: between 240 and 256, nearer 256 = 2^8 -> 0x78
  x[385] = bf16(3.0f);     // 0.75 = 1.5 * 2^-1: exponent field 6, mantissa 100 -> 0x34
  // RoPE, copied as bf16.
  x[512] = 0x3F80;  // 1.0
  x[575] = 0xC000;  // -2.0

  PoolBuffer buf(KvFormat::fp8_v32, 576, 1, 1);
  ASSERT_TRUE(reference::quantize(rows.view(), buf.pool).ok());
  expect_bytes(token_bytes(buf, 576, 0),
               bytes_with(656, {{0, 0x7E}, {1, 0x38}, {2, 0xC2}, {3, 0x1D},
                                {128, 0x78}, {129, 0xF0},
                                {384, 0x78}, {385, 0x34},
                                // scales at 512: 1.0, 2^-8, 2^-13, 4.0 as f32
                                {514, 0x80}, {515, 0x3F},
                                {518, 0x80}, {519, 0x3B},
                                {523, 0x39},
                                {526, 0x80}, {527, 0x40},
                                // RoPE at 528: 0x3F80 at element 0, 0xC000 at element 63
                                {528, 0x80}, {529, 0x3F}, {655, 0xC0}}));
}

TEST(FormatGolden, Fp8DsMlaSecondSlotOfABlock) {
  Rows rows(1, 512);
  uint16_t* x = rows.row(0);
  // Tile 0: amax 3 -> 3/448 = 2^-7.2 -> s = 2^-7 -> UE8M0 127-7 = 120 = 0x78.
  x[0] = bf16(3.0f);    // 384 = 1.5 * 2^8: exponent field 15, mantissa 100 -> 0x7C
  x[1] = bf16(-1.0f);   // -128 = -2^7: sign, exponent field 14 -> 0xF0
  // Tiles 1..5 stay zero: s = 2^-13 -> UE8M0 114 = 0x72.
  // Tile 6 (NoPE [384,448)): amax 448 -> s = 1 -> UE8M0 127 = 0x7F.
  x[446] = bf16(-0.001f);  // bf16 0xBA83 = -1.0234 * 2^-10, above half of the smallest
                           // subnormal 2^-9, so it rounds to -2^-9 -> 0x81
  x[447] = bf16(448.0f);   // 0x7E
  x[448] = 0x3F80;         // RoPE element 0: 1.0

  // Block size 2, written to slot 1: data at 1 * 576, scales at 2 * 576 + 1 * 8.
  PoolBuffer buf(KvFormat::fp8_ds_mla, 512, 1, 2);
  const int32_t slot_ids[] = {1};
  const TensorView slots = TensorView::contiguous(const_cast<int32_t*>(slot_ids), DType::i32, {1});
  ASSERT_TRUE(reference::write_cache(rows.view(), slots, buf.pool).ok());

  const std::vector<uint8_t> data(buf.data.begin() + 576, buf.data.begin() + 1152);
  expect_bytes(data, bytes_with(576, {{0, 0x7C}, {1, 0xF0}, {446, 0x81}, {447, 0x7E},
                                      {448, 0x80}, {449, 0x3F}}));
  const std::vector<uint8_t> scales(buf.data.begin() + 1160, buf.data.begin() + 1168);
  expect_bytes(scales, {0x78, 0x72, 0x72, 0x72, 0x72, 0x72, 0x7F, kPoison /* pad byte */});
  // Slot 0's data and scales are untouched.
  for (size_t i = 0; i < 576; ++i) ASSERT_EQ(buf.data[i], kPoison) << "byte " << i;
  for (size_t i = 1152; i < 1160; ++i) ASSERT_EQ(buf.data[i], kPoison) << "byte " << i;
}

TEST(FormatGolden, Int8Interleaved) {
  Rows rows(1, 512);
  uint16_t* x = rows.row(0);
  // amax 127 -> s = 127 / 127 = 1.0 (f32 0x3F800000); values rne(x), ties to even.
  x[0] = bf16(127.0f);    // 127 -> 0x7F
  x[1] = bf16(-63.5f);    // tie -> -64 -> 0xC0
  x[2] = bf16(0.5f);      // tie -> 0
  x[3] = bf16(1.5f);      // tie -> 2
  x[511] = bf16(-127.0f); // RoPE part is quantized too: -127 -> 0x81

  PoolBuffer buf(KvFormat::int8_ds_mla, 512, 1, 1);
  ASSERT_TRUE(reference::quantize(rows.view(), buf.pool).ok());
  expect_bytes(std::vector<uint8_t>(buf.data.begin(), buf.data.begin() + 516),
               bytes_with(516, {{0, 0x7F}, {1, 0xC0}, {3, 0x02}, {511, 0x81},
                                {514, 0x80}, {515, 0x3F}}));
  for (size_t i = 516; i < 528; ++i) EXPECT_EQ(buf.data[i], kPoison) << "pad byte " << i;
}

TEST(FormatGolden, Int8Split) {
  Rows rows(1, 512);
  uint16_t* x = rows.row(0);
  // amax 254 -> s = 254 / 127 = 2.0 (f32 0x40000000).
  x[0] = bf16(254.0f);  // 127 -> 0x7F
  x[1] = bf16(3.0f);    // 1.5 -> 2
  x[2] = bf16(5.0f);    // 2.5 -> 2
  x[3] = bf16(-1.0f);   // -0.5 -> 0
  x[4] = bf16(-7.0f);   // -3.5 -> -4 -> 0xFC

  PoolBuffer buf(KvFormat::int8_ds_mla, 512, 1, 1, 0, /*split=*/true);
  ASSERT_TRUE(reference::quantize(rows.view(), buf.pool).ok());
  expect_bytes(std::vector<uint8_t>(buf.data.begin(), buf.data.begin() + 512),
               bytes_with(512, {{0, 0x7F}, {1, 0x02}, {2, 0x02}, {4, 0xFC}}));
  expect_bytes(buf.scales, {0x00, 0x00, 0x00, 0x40});
}

TEST(FormatGolden, Bf16IsACopy) {
  Rows rows(1, 576);
  uint16_t* x = rows.row(0);
  x[0] = 0x3F80;    // 1.0
  x[1] = 0x7FA1;    // a signalling-NaN pattern: must not be quieted
  x[575] = 0xFF80;  // -inf
  PoolBuffer buf(KvFormat::bf16, 576, 1, 1);
  ASSERT_TRUE(reference::quantize(rows.view(), buf.pool).ok());
  expect_bytes(buf.data, bytes_with(1152, {{0, 0x80}, {1, 0x3F}, {2, 0xA1}, {3, 0x7F},
                                           {1150, 0x80}, {1151, 0xFF}}));
}

TEST(FormatGolden, DecodeOfTheGoldenFp8V32Token) {
  // Dequantization is bf16(value * scale): hand-written bytes decode to the chosen values.
  PoolBuffer buf(KvFormat::fp8_v32, 576, 1, 1);
  std::fill(buf.data.begin(), buf.data.end(), 0);
  buf.data[0] = 0x7E;    // 448
  buf.data[1] = 0xC2;    // -2.5
  buf.data[2] = 0x01;    // 2^-9
  buf.data[3] = 0x7F;    // NaN
  buf.data[515] = 0x40;  // scale 0: f32 0x40000000 = 2.0
  buf.data[519] = 0x3F;  // scale 1: f32 0x3F000000 = 0.5
  buf.data[128] = 0x38;  // 1.0
  buf.data[528] = 0x34;  // RoPE element 0: bf16 0x1234, copied
  buf.data[529] = 0x12;
  std::vector<uint16_t> out(576);
  fmt::decode_token(buf.pool, 0, 576, out.data());
  EXPECT_EQ(out[0], bf16(896.0f));
  EXPECT_EQ(out[1], bf16(-5.0f));
  EXPECT_EQ(out[2], bf16(0x1p-8f));
  EXPECT_EQ(out[3] & 0x7FC0, 0x7FC0);  // a quiet NaN
  EXPECT_EQ(out[4], 0);
  EXPECT_EQ(out[128], bf16(0.5f));
  EXPECT_EQ(out[256], 0);  // scale 2 is 0.0
  EXPECT_EQ(out[512], 0x1234);
}

}  // namespace
}  // namespace smla::test
