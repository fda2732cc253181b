// GPU combine (SPEC §3.3) against the CPU reference's combine, within SPEC §1's tolerances:
// f32 and bf16 partials, empty partials (lse +inf or -inf, outputs NaN: weight 0), tokens
// whose every partial is empty, and a sink with +-inf entries.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "common/random.hpp"
#include "common/tolerance.hpp"
#include "formats/numeric.hpp"
#include "gpu/gpu_harness.hpp"

namespace smla::test::gpu {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

struct CombineCase {
  int64_t S;
  int64_t T;
  int h_q;
  DType partial_dtype;
  bool sink;
};

template <class T>
std::vector<uint8_t> as_bytes(const std::vector<T>& v) {
  std::vector<uint8_t> b(v.size() * sizeof(T));
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

std::vector<float> bf16_bytes_to_floats(const std::vector<uint8_t>& bytes) {
  std::vector<float> f(bytes.size() / 2);
  for (size_t i = 0; i < f.size(); ++i) {
    uint16_t b;
    std::memcpy(&b, bytes.data() + 2 * i, 2);
    f[i] = fmt::bf16_to_float(b);
  }
  return f;
}

class GpuCombine : public ::testing::TestWithParam<CombineCase> {};

TEST_P(GpuCombine, MatchesTheReferenceCombine) {
  SMLA_REQUIRE_GPU();
  const CombineCase c = GetParam();
  const int64_t rows = c.T * c.h_q;  // (t, h) pairs
  Rng rng(static_cast<uint64_t>(c.S * 1000 + c.T * 10 + c.h_q));

  // Partials: lse around ln(k) of a typical selection; about one in five empty (+inf, or
  // -inf from a caller's own convention) with NaN outputs that must get weight 0; the last
  // token has only empty partials.
  std::vector<float> lse(c.S * rows);
  std::vector<float> out(c.S * rows * kDv);
  for (int64_t s = 0; s < c.S; ++s) {
    for (int64_t r = 0; r < rows; ++r) {
      const bool last_token = r / c.h_q == c.T - 1;
      const int64_t kind = last_token ? 0 : rng.uniform_int(0, 9);
      float& l = lse[s * rows + r];
      l = kind == 0 ? kInf : kind == 1 ? -kInf : static_cast<float>(rng.uniform(-2.0, 8.0));
      for (int d = 0; d < kDv; ++d) {
        out[(s * rows + r) * kDv + d] = std::isfinite(l) ? rng.normal(0.05) : kNaN;
      }
    }
  }
  std::vector<uint8_t> out_bytes;
  if (c.partial_dtype == DType::bf16) {
    std::vector<uint16_t> b(out.size());
    for (size_t i = 0; i < out.size(); ++i) b[i] = fmt::float_to_bf16_rne(out[i]);
    out_bytes = as_bytes(b);
  } else {
    out_bytes = as_bytes(out);
  }
  std::vector<float> sink(c.h_q);
  for (int h = 0; h < c.h_q; ++h) {
    const int64_t kind = rng.uniform_int(0, 5);
    sink[h] = kind == 0 ? kInf : kind == 1 ? -kInf : static_cast<float>(rng.uniform(0.0, 6.0));
  }

  const std::vector<uint8_t> lse_bytes = as_bytes(lse), sink_bytes = as_bytes(sink);
  const std::vector<uint8_t> poison_out(rows * kDv * 2, kPoisonByte);
  const std::vector<uint8_t> poison_lse(rows * 4, kPoisonByte);
  DeviceBuffer d_part(out_bytes.size()), d_lse(lse_bytes.size()), d_sink(sink_bytes.size());
  DeviceBuffer d_out(poison_out.size()), d_out_lse(poison_lse.size());
  d_part.upload(out_bytes);
  d_lse.upload(lse_bytes);
  d_sink.upload(sink_bytes);
  d_out.upload(poison_out);
  d_out_lse.upload(poison_lse);
  std::vector<uint8_t> h_part = out_bytes, h_lse = lse_bytes, h_sink = sink_bytes;
  std::vector<uint8_t> h_out = poison_out, h_out_lse = poison_lse;

  auto args = [&](Device dev, void* part, void* plse, void* snk, void* o, void* olse) {
    CombineArgs a;
    a.partial_out = TensorView::contiguous(part, c.partial_dtype, {c.S, c.T, c.h_q, kDv}, dev);
    a.partial_lse = TensorView::contiguous(plse, DType::f32, {c.S, c.T, c.h_q}, dev);
    if (c.sink) a.sink = TensorView::contiguous(snk, DType::f32, {c.h_q}, dev);
    a.out = TensorView::contiguous(o, DType::bf16, {c.T, c.h_q, kDv}, dev);
    a.lse = TensorView::contiguous(olse, DType::f32, {c.T, c.h_q}, dev);
    return a;
  };
  ASSERT_TRUE(status_ok(combine(args(Device::cpu(), h_part.data(), h_lse.data(), h_sink.data(),
                                     h_out.data(), h_out_lse.data()))));
  ASSERT_TRUE(status_ok(combine(args(Device::cuda(0), d_part.get(), d_lse.get(), d_sink.get(),
                                     d_out.get(), d_out_lse.get()))));
  SMLA_CUDA_ASSERT(cudaDeviceSynchronize());

  const std::vector<float> ref_out = bf16_bytes_to_floats(h_out);
  const std::vector<float> gpu_out = bf16_bytes_to_floats(d_out.download());
  std::vector<float> ref_lse(rows), gpu_lse(rows);
  std::memcpy(ref_lse.data(), h_out_lse.data(), h_out_lse.size());
  const std::vector<uint8_t> gpu_lse_bytes = d_out_lse.download();
  std::memcpy(gpu_lse.data(), gpu_lse_bytes.data(), gpu_lse_bytes.size());

  EXPECT_TRUE(check_out(gpu_out, std::vector<double>(ref_out.begin(), ref_out.end()),
                        {c.T, c.h_q, kDv}));
  EXPECT_TRUE(check_stat("lse", gpu_lse, std::vector<double>(ref_lse.begin(), ref_lse.end()),
                         {c.T, c.h_q}));
  // The token with only empty partials: out = 0, lse = +inf, whatever the sink.
  for (int64_t r = (c.T - 1) * c.h_q; r < rows; ++r) {
    EXPECT_EQ(gpu_lse[r], kInf);
    for (int d = 0; d < kDv; ++d) ASSERT_EQ(gpu_out[r * kDv + d], 0.0f);
  }
}

const CombineCase kCases[] = {
    {1, 3, 16, DType::f32, false},  {2, 4, 128, DType::f32, true},
    {5, 7, 22, DType::bf16, true},  {16, 2, 64, DType::f32, true},
    {3, 129, 8, DType::bf16, false},
};

INSTANTIATE_TEST_SUITE_P(Cases, GpuCombine, ::testing::ValuesIn(kCases));

}  // namespace
}  // namespace smla::test::gpu
