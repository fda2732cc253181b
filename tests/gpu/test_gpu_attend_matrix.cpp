// GPU attend against the float64 oracle over a sampled matrix of SPEC §1's dimensions:
// every (d_qk, format) pair meets every h_q; T, k, the extra pool, lengths and the sink
// (with +-inf) are drawn from a seeded generator, so each case is the same on every run and
// its name replays it. The work of a case is capped so the oracle (a float64 loop on the
// CPU) keeps the whole matrix within a few minutes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "common/naive_attention.hpp"
#include "common/random.hpp"
#include "common/tolerance.hpp"
#include "common/workload.hpp"
#include "gpu/gpu_harness.hpp"

namespace smla::test::gpu {
namespace {

struct FormatCase {
  int d_qk;
  KvFormat format;
  bool int8_split;
  const char* name;
};

constexpr FormatCase kFormats[] = {
    {576, KvFormat::bf16, false, "v32_bf16"},
    {576, KvFormat::fp8_v32, false, "v32_fp8"},
    {512, KvFormat::bf16, false, "v4_bf16"},
    {512, KvFormat::fp8_ds_mla, false, "v4_fp8"},
    {512, KvFormat::int8_ds_mla, false, "v4_int8"},
    {512, KvFormat::int8_ds_mla, true, "v4_int8split"},
};
// 40 and 100: head counts the Hopper path takes with a padded last 64-head tile.
constexpr int kHeads[] = {1, 8, 16, 22, 32, 40, 64, 100, 128};
constexpr int64_t kTokens[] = {1, 2, 62, 213, 4096};
constexpr int64_t kWidths[] = {1, 64, 100, 128, 2048};

// T * h_q * (k + k_x) of one case at most: a few seconds of the float64 oracle on one core.
constexpr int64_t kMaxWork = int64_t{1} << 20;

constexpr int kNumFormats = sizeof(kFormats) / sizeof(kFormats[0]);
constexpr int kNumHeads = sizeof(kHeads) / sizeof(kHeads[0]);
constexpr int kNumCases = kNumFormats * kNumHeads;

PoolSpec pool_for(const FormatCase& f, int64_t k, Rng& rng) {
  PoolSpec p;
  p.format = f.format;
  p.int8_split = f.int8_split;
  const int32_t block_sizes[] = {1, 16, 64, 64, 256};
  p.block_size = rng.pick(block_sizes);
  // More slots than selected entries, so selections are sparse in the pool.
  p.min_slots = std::max<int64_t>(256, 2 * k);
  p.block_padding = rng.uniform_int(0, 3) == 0 ? 32 : 0;
  // CUDA pools need 16-byte aligned blocks (validate.hpp); a packed fp8_ds_mla block of an
  // odd block size is 8 bytes short of that, so pad it the way a caller would.
  const int64_t packed = KvPool::packed(f.format, nullptr, 1, p.block_size, f.d_qk).block_stride;
  p.block_padding += (16 - (packed + p.block_padding) % 16) % 16;
  return p;
}

// A random entry of kFormats that can be the extra pool next to `main`: any format of the
// same d_qk when the build holds every variant (-DSMLA_KERNEL_PRESET=all), else the main
// pool's own format (the default preset compiles same-format pairs only; int8's two layouts
// are one format).
const FormatCase& extra_format_for(const FormatCase& main, Rng& rng) {
  const bool every_pair = std::string(smla::kernel_preset()) == "all";
  for (;;) {
    const FormatCase& f = kFormats[rng.uniform_int(0, kNumFormats - 1)];
    if (f.d_qk == main.d_qk && (every_pair || f.format == main.format)) return f;
  }
}

ProblemSpec matrix_spec(int index) {
  const FormatCase& f = kFormats[index % kNumFormats];
  Rng rng(0x5EEDull * 1000003 + static_cast<uint64_t>(index));
  ProblemSpec s;
  s.seed = 1000 + static_cast<uint64_t>(index);
  s.d_qk = f.d_qk;
  s.h_q = kHeads[index / kNumFormats];
  s.T = rng.pick(kTokens);
  s.k = rng.pick(kWidths);
  s.extra = rng.uniform_int(0, 1) == 1;
  s.k_x = s.extra ? rng.pick(kWidths) : 0;
  // Over budget: half of the cases shrink the selection first (keeping long prefill
  // chunks), the other half the tokens first (keeping wide decode selections).
  const bool keep_tokens = (index / kNumFormats + index) % 2 == 0;
  auto over = [&s] { return s.T * s.h_q * (s.k + s.k_x) > kMaxWork; };
  auto shrink_selection = [&s] {
    s.k = std::max<int64_t>(1, s.k / 2);
    s.k_x = s.extra ? std::max<int64_t>(1, s.k_x / 2) : 0;
  };
  while (over() && (keep_tokens ? s.k + s.k_x > 2 : s.T > 1)) {
    if (keep_tokens) {
      shrink_selection();
    } else {
      s.T /= 2;
    }
  }
  while (over() && s.T > 1) s.T /= 2;
  while (over()) shrink_selection();
  s.kv = pool_for(f, s.k, rng);
  // The extra pool (V4's sliding window) has a format and block size of its own.
  const FormatCase& fx = extra_format_for(f, rng);
  s.extra_kv = pool_for(fx, s.k_x, rng);
  // Lengths are drawn from [0, k]; adversarial cases add 0, negative and > k lengths and
  // invalid or duplicated indices.
  s.lengths = rng.uniform_int(0, 1) == 1;
  s.adversarial = rng.uniform_int(0, 2) == 0;
  s.extra_lengths = s.extra && rng.uniform_int(0, 1) == 1;
  s.sink = rng.uniform_int(0, 1) == 1;
  s.sink_infinities = s.sink && rng.uniform_int(0, 1) == 1;
  s.poison_unused = rng.uniform_int(0, 1) == 1;
  s.strided = rng.uniform_int(0, 3) == 0;
  // Half the cases at the benchmarks' N(0,1)/10, half at N(0,1) like normalized latents:
  // peaked softmaxes and |V| ~ 1 are where a bf16-rounded P would break SPEC's bound.
  if (rng.uniform_int(0, 1) == 1) s.q_std = s.kv_std = 1.0f;
  return s;
}

class GpuAttendMatrix : public ::testing::TestWithParam<int> {};

TEST_P(GpuAttendMatrix, MatchesFloat64Oracle) {
  SMLA_REQUIRE_GPU();
  const ProblemSpec spec = matrix_spec(GetParam());
  SCOPED_TRACE(spec.describe());
  Problem p(spec);
  SMLA_ASSERT_OK(run_attend(p));
  EXPECT_TRUE(check_attend(p, naive_attend(p.args())));
}

std::string case_name(const ::testing::TestParamInfo<int>& info) {
  return std::string(kFormats[info.param % kNumFormats].name) + "_h" +
         std::to_string(kHeads[info.param / kNumFormats]) + "_case" + std::to_string(info.param);
}

INSTANTIATE_TEST_SUITE_P(Sampled, GpuAttendMatrix, ::testing::Range(0, kNumCases), case_name);

}  // namespace
}  // namespace smla::test::gpu
