// Smoke check and timing of the portable attention path on DeepSeek-shaped workloads.
// Built by hand on a GPU machine against libsmla and the test helpers:
//
//   g++ -std=c++20 -O2 bench/portable_smoke.cpp tests/gpu/gpu_harness.cpp tests/common/*.cpp \
//       -Iinclude -Isrc -Itests -I$CUDA/include -I$GTEST/include -L$GTEST/lib -Lbuild/src \
//       -lsmla -lgtest_main -lgtest -lcudart -lpthread -o portable_smoke
//
// Each workload is checked against the float64 oracle on a sample of its tokens (the first
// `checked_tokens`; the oracle is a slow CPU loop) before it is timed: no number is printed
// for a wrong answer. Times are the mean of 20 launches after 3 warm-ups (plan included in
// the split strategy, as attend makes it into the workspace).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "common/naive_attention.hpp"
#include "common/tolerance.hpp"
#include "common/workload.hpp"
#include "gpu/gpu_harness.hpp"

namespace smla::test::gpu {
namespace {

struct Workload {
  const char* name;
  ProblemSpec spec;
  int64_t checked_tokens;
};

ProblemSpec shape(int64_t T, int h_q, int d_qk, KvFormat format, int64_t k, int64_t slots) {
  ProblemSpec s;
  s.T = T;
  s.h_q = h_q;
  s.d_qk = d_qk;
  s.k = k;
  s.kv.format = format;
  s.kv.block_size = 64;
  s.kv.min_slots = slots;
  s.with_max_logits = true;
  return s;
}

std::vector<Workload> workloads() {
  std::vector<Workload> w;
  w.push_back({"v32 decode fp8_v32  T=64  h=128 k=2048", shape(64, 128, 576, KvFormat::fp8_v32, 2048, 65536), 2});
  w.push_back({"v32 decode bf16     T=64  h=128 k=2048", shape(64, 128, 576, KvFormat::bf16, 2048, 65536), 2});
  w.push_back({"v32 decode fp8_v32  T=64  h=16  k=2048", shape(64, 16, 576, KvFormat::fp8_v32, 2048, 65536), 8});
  w.push_back({"v32 prefill bf16    T=1024 h=128 k=2048", shape(1024, 128, 576, KvFormat::bf16, 2048, 65536), 1});
  w.push_back({"v32 prefill fp8_v32 T=1024 h=64 k=2048", shape(1024, 64, 576, KvFormat::fp8_v32, 2048, 65536), 1});
  ProblemSpec v4 = shape(64, 64, 512, KvFormat::fp8_ds_mla, 512, 65536);
  v4.extra = true;
  v4.k_x = 128;
  v4.extra_kv.format = KvFormat::fp8_ds_mla;
  v4.extra_kv.block_size = 64;
  v4.extra_kv.min_slots = 8192;
  v4.sink = true;
  w.push_back({"v4 decode fp8_ds_mla+extra T=64 h=64 k=512+128", v4, 4});
  ProblemSpec v4i = shape(256, 64, 512, KvFormat::int8_ds_mla, 512, 65536);
  w.push_back({"v4 prefill int8      T=256 h=64 k=512", v4i, 2});
  return w;
}

// The first `n` tokens of a problem's oracle result compared with its GPU outputs.
::testing::AssertionResult check_prefix(Problem& p, int64_t n) {
  const int h = p.spec().h_q;
  // The oracle on the first n tokens: a view of the same host buffers with T = n.
  AttendArgs args = p.args();
  args.q.shape[0] = n;
  args.indices.shape[0] = n;
  if (args.lengths.present()) args.lengths.shape[0] = n;
  if (args.extra_indices.present()) args.extra_indices.shape[0] = n;
  if (args.extra_lengths.present()) args.extra_lengths.shape[0] = n;
  const AttendResult ref = naive_attend(args);
  std::vector<float> out = p.out();
  out.resize(static_cast<size_t>(n * h * 512));
  std::vector<float> lse = p.lse();
  lse.resize(static_cast<size_t>(n * h));
  auto r = check_out(out, ref.out, {n, h, 512});
  if (!r) return r;
  return check_stat("lse", lse, ref.lse, {n, h});
}

TEST(PortableSmoke, DeepSeekShapes) {
  SMLA_REQUIRE_GPU();
  for (const Workload& w : workloads()) {
    SCOPED_TRACE(w.name);
    Problem p(w.spec);
    DeviceProblem dev(p);
    const AttendArgs args = dev.args();
    AttendScratch scratch;
    ASSERT_TRUE(scratch.allocate(args));
    ASSERT_TRUE(status_ok(attend(args, scratch.ws(), nullptr, nullptr)));
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    dev.download_outputs(p);
    const auto checked = check_prefix(p, w.checked_tokens);
    EXPECT_TRUE(checked);
    if (!checked) continue;

    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    for (int i = 0; i < 3; ++i) (void)attend(args, scratch.ws(), nullptr, nullptr);
    constexpr int kReps = 20;
    cudaEventRecord(start);
    for (int i = 0; i < kReps; ++i) (void)attend(args, scratch.ws(), nullptr, nullptr);
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    const double us = 1000.0 * ms / kReps;
    const double per_token_us = us / static_cast<double>(w.spec.T);
    std::printf("[smoke] %-48s %9.1f us  (%.3f us/token, workspace %zu B)\n", w.name, us,
                per_token_us, scratch.workspace.bytes());
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
}

}  // namespace
}  // namespace smla::test::gpu
