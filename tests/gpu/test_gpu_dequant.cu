// The attention kernels' in-kernel dequantizers (src/cuda/portable/kv_rows.cuh, used by both
// GPU paths) against the reference's scalar conversions, for every e4m3 and int8 code times
// scales that reach each rounding case: exact powers of two, a scale that makes products
// inexact, f32 subnormal products, overflow to infinity, zero, negative and NaN scales. The
// bf16 bytes must be the reference's; where the reference gives a NaN, any NaN is accepted
// (SPEC fixes NaN bytes only for the dequantize op, not inside attention). On sm_89+ builds
// this checks the hardware conversions, on sm_80 builds the bit-operation fallback.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "cuda/portable/kv_rows.cuh"
#include "formats/numeric.hpp"
#include "gpu/gpu_harness.hpp"

namespace smla::test::gpu {
namespace {

constexpr int kCodes = 256;

const std::vector<float> kScales = {
    1.0f,       0x1p-127f,  // UE8M0 byte 0: products are f32 subnormals
    0x1p-120f,  0x1p-20f,  0.0123f, -3.5f, 448.0f,
    0x1p120f,   // codes of magnitude >= 256 overflow f32 to infinity
    1.7e38f,    // 2 x 1.7e38 is a finite f32 that rounds to the bf16 infinity
    0.0f,       std::numeric_limits<float>::quiet_NaN()};

enum class Codes { e4m3, int8 };

// out[s * 256 + b] = bf16 of code b times scales[s]; a thread converts the 8 codes 8k..8k+7.
__global__ void dequant_all_codes(Codes codes, const float* scales, uint16_t* out) {
  const int s = blockIdx.x;
  const int k = threadIdx.x;  // 0..31
  uint32_t word[2];
  for (int w = 0; w < 2; ++w) {
    const uint32_t b = 8u * k + 4u * w;
    word[w] = b | (b + 1) << 8 | (b + 2) << 16 | (b + 3) << 24;
  }
  const uint2 packed = make_uint2(word[0], word[1]);
  const portable::Bf16x8 r = codes == Codes::e4m3
                                 ? portable::dequant_e4m3x8(packed, scales[s])
                                 : portable::dequant_int8x8(packed, scales[s]);
  for (int i = 0; i < 4; ++i) {
    out[s * kCodes + 8 * k + 2 * i] = static_cast<uint16_t>(r.w[i]);
    out[s * kCodes + 8 * k + 2 * i + 1] = static_cast<uint16_t>(r.w[i] >> 16);
  }
}

bool is_bf16_nan(uint16_t b) { return std::isnan(fmt::bf16_to_float(b)); }

void check_all_codes(Codes codes) {
  SMLA_REQUIRE_GPU();
  const int n_scales = static_cast<int>(kScales.size());
  DeviceBuffer scales(kScales.size() * sizeof(float));
  std::vector<uint8_t> scale_bytes(scales.bytes());
  std::memcpy(scale_bytes.data(), kScales.data(), scale_bytes.size());
  scales.upload(scale_bytes);
  DeviceBuffer out(size_t{kCodes} * n_scales * sizeof(uint16_t));
  dequant_all_codes<<<n_scales, kCodes / 8>>>(codes, static_cast<const float*>(scales.get()),
                                             static_cast<uint16_t*>(out.get()));
  SMLA_CUDA_ASSERT(cudaGetLastError());
  SMLA_CUDA_ASSERT(cudaDeviceSynchronize());
  const std::vector<uint8_t> bytes = out.download();

  int mismatches = 0;
  for (int s = 0; s < n_scales; ++s) {
    for (int b = 0; b < kCodes; ++b) {
      const float value = codes == Codes::e4m3 ? fmt::e4m3_to_float(static_cast<uint8_t>(b))
                                               : static_cast<float>(static_cast<int8_t>(b));
      const uint16_t want = fmt::float_to_bf16_rne(value * kScales[s]);
      uint16_t got;
      std::memcpy(&got, bytes.data() + 2 * (s * kCodes + b), 2);
      const bool ok = is_bf16_nan(want) ? is_bf16_nan(got) : got == want;
      if (!ok && ++mismatches <= 10) {
        ADD_FAILURE() << "code 0x" << std::hex << b << " scale " << std::hexfloat << kScales[s]
                      << ": got bf16 0x" << got << ", the reference gives 0x" << want;
      }
    }
  }
  EXPECT_EQ(mismatches, 0);
}

TEST(GpuDequant, EveryE4m3CodeMatchesTheReference) { check_all_codes(Codes::e4m3); }

TEST(GpuDequant, EveryInt8CodeMatchesTheReference) { check_all_codes(Codes::int8); }

}  // namespace
}  // namespace smla::test::gpu
