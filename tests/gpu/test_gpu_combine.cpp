// GPU combine (SPEC §3.3) against the float64 oracle and against the CPU reference's
// combine, both within SPEC §1's tolerances: f32 and bf16 partials, empty partials (lse
// +-inf with NaN outputs: weight 0), rows whose every partial is empty, sinks with +-inf,
// strided outputs (lse transposed), and rows of more than 32 partials (the kernel's lanes take
// 32 partials at a time); and the same bits on every run of the same inputs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/combine_workload.hpp"
#include "common/naive_combine.hpp"
#include "common/tolerance.hpp"
#include "gpu/gpu_harness.hpp"

namespace smla::test::gpu {
namespace {

// The outputs of a finished combine run as an AttendResult, so the CPU reference's answer
// can stand where check_combine expects the oracle's.
AttendResult as_result(const CombineProblem& p) {
  AttendResult r;
  r.T = p.spec().T;
  r.h_q = p.spec().h_q;
  for (float v : p.out()) r.out.push_back(v);
  for (float v : p.lse()) r.lse.push_back(v);
  return r;
}

CombineSpec combine_spec(int64_t S, int64_t T, int h_q, DType dtype, bool sink, bool strided,
                         uint64_t seed) {
  CombineSpec s;
  s.S = S;
  s.T = T;
  s.h_q = h_q;
  s.partial_dtype = dtype;
  s.sink = sink;
  s.sink_infinities = sink;
  s.empty_partials = true;
  s.strided = strided;
  s.seed = seed;
  return s;
}

const CombineSpec kCases[] = {
    combine_spec(1, 3, 16, DType::f32, false, false, 1),
    combine_spec(2, 4, 128, DType::f32, true, false, 2),
    combine_spec(5, 7, 22, DType::bf16, true, true, 3),
    combine_spec(16, 2, 64, DType::f32, true, true, 4),
    combine_spec(3, 129, 8, DType::bf16, false, false, 5),
    // One 32-partial chunk and one more partial, then two full chunks and a part of a third.
    combine_spec(33, 3, 16, DType::f32, true, false, 6),
    combine_spec(70, 2, 24, DType::bf16, true, true, 7),
};

// Parameterized by an index into kCases, so test names stay short.
class GpuCombine : public ::testing::TestWithParam<int> {};

TEST_P(GpuCombine, MatchesTheOracleAndTheReference) {
  SMLA_REQUIRE_GPU();
  const CombineSpec spec = kCases[GetParam()];
  SCOPED_TRACE(spec.describe());
  CombineProblem cpu(spec);
  ASSERT_TRUE(status_ok(combine(cpu.args())));

  CombineProblem gpu(spec);
  DeviceCombineProblem device(gpu);
  ASSERT_TRUE(status_ok(combine(device.args())));
  SMLA_CUDA_ASSERT(cudaDeviceSynchronize());
  device.download_outputs(gpu);

  EXPECT_TRUE(check_combine(gpu, naive_combine(gpu.args())));
  EXPECT_TRUE(check_combine(gpu, as_result(cpu)));
}

// The warp's reductions run in a fixed order and the outputs are summed in partial order.
TEST_P(GpuCombine, SameInputsGiveBitwiseSameOutputs) {
  SMLA_REQUIRE_GPU();
  const CombineSpec spec = kCases[GetParam()];
  SCOPED_TRACE(spec.describe());
  const CombineProblem first(spec);
  DeviceCombineProblem device(first);
  std::vector<CombineProblem> runs(2, first);
  for (CombineProblem& run : runs) {
    // Each run starts from poisoned outputs: the second cannot pass on the first run's bytes.
    for (int id : {kCombineOut, kCombineLse}) device.upload(run, id);
    ASSERT_TRUE(status_ok(combine(device.args())));
    SMLA_CUDA_ASSERT(cudaDeviceSynchronize());
    device.download_outputs(run);
  }
  for (int id : {kCombineOut, kCombineLse}) {
    EXPECT_TRUE(check_bitwise_equal(runs[0].buffer(id).name, runs[0].buffer(id).bytes,
                                    runs[1].buffer(id).bytes));
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, GpuCombine,
                         ::testing::Range(0, static_cast<int>(sizeof(kCases) / sizeof(kCases[0]))));

}  // namespace
}  // namespace smla::test::gpu
