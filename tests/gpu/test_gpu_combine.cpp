// GPU combine (SPEC §3.3) against the float64 oracle and against the CPU reference's
// combine, both within SPEC §1's tolerances: f32 and bf16 partials, empty partials (lse
// +-inf with NaN outputs: weight 0), rows whose every partial is empty, sinks with +-inf,
// strided outputs (lse transposed), and rows of more than 32 partials (the kernel's lanes take
// 32 partials at a time); the same bits on every run of the same inputs; replays of a CUDA
// graph on new partials, and two streams at once.
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

// Recorded once in a CUDA graph, replayed on new partials written into the captured buffers.
TEST(GpuCombineCases, CapturedInACudaGraphReplaysOnNewPartials) {
  SMLA_REQUIRE_GPU();
  CombineSpec spec = kCases[3];
  CombineProblem first(spec);
  spec.seed += 100;  // same shapes, new partials and sinks
  CombineProblem second(spec);
  DeviceCombineProblem device(first);
  TestStream stream;
  CapturedGraph graph(stream);
  SMLA_CUDA_ASSERT(graph.begin());
  const Status combined = combine(device.args(), stream.smla());
  SMLA_CUDA_ASSERT(graph.end());
  ASSERT_TRUE(status_ok(combined));
  for (CombineProblem* p : {&first, &second}) {
    SCOPED_TRACE(p->spec().describe());
    p->poison_outputs();
    for (int id = 0; id < kNumCombineBuffers; ++id) device.upload(*p, id);
    SMLA_CUDA_ASSERT(graph.replay());
    device.download_outputs(*p);
    EXPECT_TRUE(check_combine(*p, naive_combine(p->args())));
  }
}

TEST(GpuCombineCases, TwoStreamsAtOnce) {
  SMLA_REQUIRE_GPU();
  CombineProblem a(kCases[2]), b(kCases[5]);
  DeviceCombineProblem da(a), db(b);
  TestStream sa, sb;
  // Both calls are queued before either stream is waited on.
  ASSERT_TRUE(status_ok(combine(da.args(), sa.smla())));
  ASSERT_TRUE(status_ok(combine(db.args(), sb.smla())));
  SMLA_CUDA_ASSERT(cudaStreamSynchronize(sa.get()));
  SMLA_CUDA_ASSERT(cudaStreamSynchronize(sb.get()));
  da.download_outputs(a);
  db.download_outputs(b);
  EXPECT_TRUE(check_combine(a, naive_combine(a.args())));
  EXPECT_TRUE(check_combine(b, naive_combine(b.args())));
}

INSTANTIATE_TEST_SUITE_P(Cases, GpuCombine,
                         ::testing::Range(0, static_cast<int>(sizeof(kCases) / sizeof(kCases[0]))));

}  // namespace
}  // namespace smla::test::gpu
