// GPU attend on the cases a sampled matrix may miss: adversarial indices, all-invalid rows,
// NaN-poisoned unused cache rows, non-contiguous views, a q shared by heads, two streams at
// once, CUDA-graph capture with new inputs on replay, bitwise repeatability, every strategy,
// the workspace's independence from the pool size, and the Hopper block-pair kernel's |V|
// bounds table against its scan.
#include <gtest/gtest.h>

#include <array>
#include <string>
#include <cmath>
#include <cstring>
#include <utility>
#include <vector>

#include "common/naive_attention.hpp"
#include "common/tolerance.hpp"
#include "common/workload.hpp"
#include "cuda/device_info.hpp"
#include "cuda/hopper/hopper_attention.hpp"
#include "gpu/gpu_harness.hpp"

namespace smla::test::gpu {
namespace {

// A decode step (MTP 2, V3.2 shapes, 2048-wide selection) and a prefill chunk: shapes at the
// two ends of the strategy choice, each small enough for the float64 oracle.
ProblemSpec decode_spec(KvFormat format = KvFormat::fp8_v32, int d_qk = 576) {
  ProblemSpec s;
  s.T = 2;
  s.h_q = 128;
  s.d_qk = d_qk;
  s.k = 2048;
  s.kv.format = format;
  s.kv.min_slots = 8192;
  s.lengths = true;
  s.sink = true;
  s.seed = 11;
  return s;
}

ProblemSpec prefill_spec(KvFormat format = KvFormat::fp8_ds_mla, int d_qk = 512) {
  ProblemSpec s;
  s.T = 256;
  s.h_q = 64;
  s.d_qk = d_qk;
  s.k = 32;
  s.kv.format = format;
  s.kv.min_slots = 4096;
  s.seed = 12;
  return s;
}

// The (d_qk, format) pairs of SPEC §2, for tests that sweep them.
struct Pair {
  int d_qk;
  KvFormat format;
  bool int8_split;
};
constexpr Pair kPairs[] = {{576, KvFormat::bf16, false},        {576, KvFormat::fp8_v32, false},
                           {512, KvFormat::bf16, false},        {512, KvFormat::fp8_ds_mla, false},
                           {512, KvFormat::int8_ds_mla, false}, {512, KvFormat::int8_ds_mla, true}};

void expect_matches_oracle(Problem& p) {
  SCOPED_TRACE(p.spec().describe());
  SMLA_ASSERT_OK(run_attend(p));
  EXPECT_TRUE(check_attend(p, naive_attend(p.args())));
}

// Runs `p`'s call again into poisoned outputs and expects bitwise the outputs `p` holds.
void expect_repeats_bitwise(const Problem& p) {
  Problem again = p;
  again.poison_outputs();
  SMLA_ASSERT_OK(run_attend(again));
  EXPECT_TRUE(check_outputs_identical(p, again));
}

// Two pools like `kv` with k and k_x entries per token, adversarial indices and lengths in
// both, sinks with infinities, and NaN-poisoned unused cache rows.
ProblemSpec adversarial_two_pool_spec(int d_qk, const PoolSpec& kv, int64_t T, int h_q,
                                      int64_t k, int64_t k_x) {
  ProblemSpec s;
  s.T = T;
  s.h_q = h_q;
  s.d_qk = d_qk;
  s.k = k;
  s.kv = s.extra_kv = kv;
  s.extra = true;
  s.k_x = k_x;
  s.lengths = s.extra_lengths = true;
  s.sink = s.sink_infinities = true;
  s.adversarial = true;
  s.poison_unused = true;
  return s;
}

TEST(GpuAttend, AdversarialIndicesAndPoisonedCacheRowsAreNeverRead) {
  SMLA_REQUIRE_GPU();
  for (const Pair& pair : kPairs) {
    PoolSpec kv;
    kv.format = pair.format;
    kv.int8_split = pair.int8_split;
    kv.block_size = 16;
    Problem p(adversarial_two_pool_spec(pair.d_qk, kv, 9, heads_for_forced_path(22), 100, 64));
    expect_matches_oracle(p);
  }
}

// h_q <= 8 runs the transposed head tile (heads on the MMA N dimension, 32-row steps): every
// format, a head count that is not a power of two, both strategies (a decode step splits
// over the 2048 entries), and N(0,1) data where P's hi/lo split matters.
TEST(GpuAttend, SmallHeadCountsMatchTheOracleForEveryFormatAndStrategy) {
  SMLA_REQUIRE_GPU();
  for (const Pair& pair : kPairs) {
    for (int h_q : {5, 8}) {
      ProblemSpec decode = decode_spec(pair.format, pair.d_qk);
      decode.kv.int8_split = pair.int8_split;
      decode.h_q = h_q;
      decode.q_std = decode.kv_std = 1.0f;
      Problem d(decode);
      expect_matches_oracle(d);

      ProblemSpec prefill = prefill_spec(pair.format, pair.d_qk);
      prefill.kv.int8_split = pair.int8_split;
      prefill.h_q = h_q;
      prefill.T = 40;
      prefill.k = 100;
      prefill.extra = true;
      prefill.k_x = 37;
      prefill.extra_kv = prefill.kv;
      prefill.lengths = prefill.extra_lengths = true;
      prefill.sink = true;
      prefill.adversarial = true;
      Problem f(prefill);
      expect_matches_oracle(f);
    }
  }
}

TEST(GpuAttend, RowsWithOnlyInvalidEntriesGiveZeroOutAndInfiniteLse) {
  SMLA_REQUIRE_GPU();
  ProblemSpec s;
  s.T = 5;
  s.h_q = heads_for_forced_path(16);
  s.k = 64;
  s.kv.format = KvFormat::fp8_v32;
  s.sink = true;
  s.poison_unused = true;
  Problem p(s);
  const int64_t slots = p.args().kv.slots();
  // Every kind of invalid id, cycled over the whole (contiguous) [T, k] index tensor.
  const std::array<int32_t, 6> invalid = invalid_slot_ids(slots);
  std::vector<uint8_t>& idx = p.buffer(kIndices).bytes;
  for (size_t e = 0; e * 4 < idx.size(); ++e) {
    std::memcpy(idx.data() + 4 * e, &invalid[e % invalid.size()], 4);
  }
  SMLA_ASSERT_OK(run_attend(p));
  EXPECT_TRUE(check_attend(p, naive_attend(p.args())));
  for (float v : p.out()) ASSERT_EQ(v, 0.0f);
  for (float v : p.lse()) ASSERT_EQ(v, INFINITY);
  for (float v : p.max_logits()) ASSERT_EQ(v, -INFINITY);
}

TEST(GpuAttend, NonContiguousViewsIncludingTransposedLse) {
  SMLA_REQUIRE_GPU();
  for (ProblemSpec s : {decode_spec(), prefill_spec()}) {
    s.strided = true;
    s.T = s.T > 2 ? 64 : s.T;
    Problem p(s);
    expect_matches_oracle(p);
  }
}

// A q whose heads share one row (head stride 0) is a valid input; the Hopper kernels copy it
// with cp.async instead of TMA (src/cuda/hopper/q_tile_map.hpp).
TEST(GpuAttend, QSharedByHeadsMatchesTheOracle) {
  SMLA_REQUIRE_GPU();
  for (ProblemSpec s : {decode_spec(), prefill_spec(), prefill_spec(KvFormat::bf16, 576)}) {
    s.q_shared_by_heads = true;
    s.T = s.T > 2 ? 64 : s.T;
    Problem p(s);
    expect_matches_oracle(p);
  }
}

TEST(GpuAttend, BothStrategiesMatchTheOracleWithAndWithoutPlan) {
  SMLA_REQUIRE_GPU();
  Problem decode(decode_spec());
  Problem prefill(prefill_spec());
  // The strategy is a function of the shapes; these two must land on different ones: split
  // over the selection (which needs a schedule, so a plan buffer) for the decode step, one
  // pass per token block (no schedule) for the prefill chunk.
  Problem* problems[2] = {&decode, &prefill};
  size_t plan_bytes[2] = {};
  for (int i = 0; i < 2; ++i) {
    DeviceProblem d(*problems[i]);
    SMLA_ASSERT_OK(plan_size(d.args(), &plan_bytes[i]));
  }
  EXPECT_GT(plan_bytes[0], 0u) << "the decode-shaped call did not choose the split strategy";
  EXPECT_EQ(plan_bytes[1], 0u) << "the prefill-shaped call did not choose the one-pass strategy";
  for (Problem* p : problems) {
    for (bool with_plan : {true, false}) {
      SCOPED_TRACE(with_plan ? "with plan" : "plan computed inside attend");
      SMLA_ASSERT_OK(run_attend(*p, with_plan));
      EXPECT_TRUE(check_attend(*p, naive_attend(p->args())));
    }
  }
}

// Shapes on which the Hopper path takes its rounds-and-tail schedule on this device (the
// full rounds' tokens run whole, the last round's are split over every CTA, one launch):
// one round of tokens per work unit (SMs / head tiles) plus a few, each with enough entries
// to split. The quantized kernel (fp8_ds_mla with an extra pool, one head tile) and the
// block-pair kernel (bf16, two head tiles, one padded), with lengths, sinks and poisoned
// rows; the Hopper schedule is asserted on the shapes (any path runs the call).
std::vector<ProblemSpec> rounds_and_tail_specs(int sm_count) {
  PoolSpec v4_kv;
  v4_kv.format = KvFormat::fp8_ds_mla;
  v4_kv.min_slots = 1024;
  ProblemSpec v4 = adversarial_two_pool_spec(512, v4_kv, sm_count + 3, 16, 200, 100);
  v4.seed = 14;

  ProblemSpec pair = prefill_spec(KvFormat::bf16, 576);
  pair.h_q = 72;
  pair.T = sm_count / 2 + 2;
  pair.k = 320;
  pair.lengths = true;
  pair.sink = true;
  pair.poison_unused = true;
  pair.seed = 15;
  return {v4, pair};
}

// The Hopper path's schedule for `p`'s shapes on `info`'s device (hopper::schedule_name),
// whichever path then runs the call.
std::string hopper_schedule(const Problem& p, const cuda_backend::DeviceInfo& info) {
  DeviceProblem d(p);
  return hopper::schedule_name(d.args(), info);
}

TEST(GpuAttend, RoundsAndTailMatchTheOracleAndRepeatBitwise) {
  SMLA_REQUIRE_GPU();
  const cuda_backend::DeviceInfo* info = nullptr;
  ASSERT_TRUE(status_ok(cuda_backend::device_info(0, &info)));
  for (const ProblemSpec& s : rounds_and_tail_specs(info->sm_count)) {
    Problem p(s);
    SCOPED_TRACE(s.describe());
    EXPECT_EQ(hopper_schedule(p, *info), "rounds and tail");
    const AttendResult expected = naive_attend(p.args());
    for (bool with_plan : {true, false}) {
      SCOPED_TRACE(with_plan ? "with plan" : "plan computed inside attend");
      SMLA_ASSERT_OK(run_attend(p, with_plan));
      EXPECT_TRUE(check_attend(p, expected));
    }
    expect_repeats_bitwise(p);
  }
}

// A split launch of more tokens than work units, lengths drawn in [0, k]: the tokens that lie
// inside one partition run whole (the attend kernel writes their outputs, sink included, and
// the combine leaves them alone), the others write partials (test_gpu_plan.cpp checks which
// is which). The quantized kernel with both forms of its partial stores (fp8_ds_mla: 8 bytes a
// lane, fp8_v32: 16 bytes after a quad exchange, write_item_results) and the block-pair kernel
// (bf16); h_q 72 on the Hopper path, so the second head tile has rows past h_q that join the
// exchange but store nothing. With sinks with infinities, adversarial indices and lengths,
// poisoned rows and poisoned outputs; the Hopper schedule is asserted on the shapes (any path
// runs the call). The rounds-and-tail test's tail tokens run the same rule.
TEST(GpuAttend, SplitLaunchesWithWholeTokensMatchTheOracleAndRepeatBitwise) {
  SMLA_REQUIRE_GPU();
  const cuda_backend::DeviceInfo* info = nullptr;
  ASSERT_TRUE(status_ok(cuda_backend::device_info(0, &info)));
  for (const Pair& pair :
       {Pair{512, KvFormat::fp8_ds_mla, false}, Pair{576, KvFormat::fp8_v32, false},
        Pair{576, KvFormat::bf16, false}}) {
    ProblemSpec s;
    s.T = info->sm_count + 2;
    s.h_q = heads_for_forced_path(16);
    s.d_qk = pair.d_qk;
    s.k = 1024;
    s.kv.format = pair.format;
    s.kv.min_slots = 8192;
    s.lengths = true;
    s.sink = s.sink_infinities = true;
    s.adversarial = true;
    s.poison_unused = true;
    s.seed = 16;
    Problem p(s);
    EXPECT_EQ(hopper_schedule(p, *info), "split") << s.describe();
    expect_matches_oracle(p);
    expect_repeats_bitwise(p);
  }
}

TEST(GpuAttend, SameInputsAndPlanGiveBitwiseSameOutputs) {
  SMLA_REQUIRE_GPU();
  for (const ProblemSpec& s : {decode_spec(), prefill_spec()}) {
    Problem first(s);
    DeviceProblem d(first);
    AttendScratch scratch;
    SMLA_ASSERT_OK(scratch.allocate(d.args()));
    SMLA_ASSERT_OK(make_plan(d.args(), &scratch.plan));
    std::vector<Problem> runs(3, first);
    for (Problem& run : runs) {
      run.poison_outputs();
      for (int id : {kOut, kLse, kMaxLogits}) d.upload(run, id);
      SMLA_ASSERT_OK(attend(d.args(), scratch.ws(), nullptr, &scratch.plan));
      SMLA_CUDA_ASSERT(cudaDeviceSynchronize());
      d.download_outputs(run);
    }
    EXPECT_TRUE(check_outputs_identical(runs[0], runs[1]));
    EXPECT_TRUE(check_outputs_identical(runs[0], runs[2]));
  }
}

TEST(GpuAttend, TwoStreamsAtOnce) {
  SMLA_REQUIRE_GPU();
  Problem a(decode_spec(KvFormat::int8_ds_mla, 512));
  Problem b(prefill_spec(KvFormat::bf16, 576));
  TestStream sa, sb;
  DeviceProblem da(a), db(b);
  AttendScratch xa, xb;
  SMLA_ASSERT_OK(xa.allocate(da.args()));
  SMLA_ASSERT_OK(xb.allocate(db.args()));
  // Both calls are queued before either stream is waited on.
  SMLA_ASSERT_OK(make_plan(da.args(), &xa.plan, sa.smla()));
  SMLA_ASSERT_OK(make_plan(db.args(), &xb.plan, sb.smla()));
  SMLA_ASSERT_OK(attend(da.args(), xa.ws(), sa.smla(), &xa.plan));
  SMLA_ASSERT_OK(attend(db.args(), xb.ws(), sb.smla(), &xb.plan));
  SMLA_CUDA_ASSERT(cudaStreamSynchronize(sa.get()));
  SMLA_CUDA_ASSERT(cudaStreamSynchronize(sb.get()));
  da.download_outputs(a);
  db.download_outputs(b);
  EXPECT_TRUE(check_attend(a, naive_attend(a.args())));
  EXPECT_TRUE(check_attend(b, naive_attend(b.args())));
}

// make_plan and attend on `s`'s shapes captured in a CUDA graph, replayed on two sets of inputs
// (s's and another seed's) into the captured buffers: each replay must match the oracle.
void expect_captured_plan_and_attend_replay(ProblemSpec s) {
  Problem first(s);
  s.seed += 1;  // same shapes and sizes, new q, cache, indices and lengths
  Problem second(s);

  TestStream stream;
  DeviceProblem d(first);
  AttendScratch scratch;
  SMLA_ASSERT_OK(scratch.allocate(d.args()));
  CapturedGraph graph(stream);
  SMLA_CUDA_ASSERT(graph.begin());
  const Status planned = make_plan(d.args(), &scratch.plan, stream.smla());
  const Status attended = attend(d.args(), scratch.ws(), stream.smla(), &scratch.plan);
  SMLA_CUDA_ASSERT(graph.end());
  SMLA_ASSERT_OK(planned);
  SMLA_ASSERT_OK(attended);

  for (Problem* p : {&first, &second}) {
    SCOPED_TRACE(p->spec().describe());
    // Every input (indices and lengths among them) into the captured buffers, outputs
    // poisoned, then a replay: the plan is rebuilt on the device from the new lengths.
    p->poison_outputs();
    for (int id = 0; id < kNumBuffers; ++id) d.upload(*p, id);
    SMLA_CUDA_ASSERT(graph.replay());
    d.download_outputs(*p);
    EXPECT_TRUE(check_attend(*p, naive_attend(p->args())));
  }
}

TEST(GpuAttend, CudaGraphOfPlanAndAttendReplaysWithNewIndicesAndLengths) {
  SMLA_REQUIRE_GPU();
  ProblemSpec s = decode_spec(KvFormat::fp8_ds_mla, 512);
  s.T = 4;
  s.extra = true;
  s.k_x = 128;
  s.extra_kv.format = KvFormat::fp8_ds_mla;  // V4 decode: window pool next to the compressed one
  s.extra_lengths = true;
  expect_captured_plan_and_attend_replay(s);
}

// Shapes on which the Hopper path runs one pass of several rounds, its CTAs claiming their
// tokens from a counter the call zeroes (src/cuda/hopper/token_claims.cuh): the quantized
// kernel (fp8_v32, a padded head tile) and the block-pair kernel (bf16), with
// adversarial indices and lengths (tokens without an entry among them), sinks and poisoned
// rows; the Hopper schedule is asserted on the shapes (any path runs the call). Any CTA may
// take any token, so a repeat must still give the same bits, and a CUDA graph must replay the
// counters' zeroing with the kernel.
std::vector<ProblemSpec> claimed_token_specs(int sm_count) {
  PoolSpec v32;
  v32.format = KvFormat::fp8_v32;
  v32.min_slots = 1024;
  ProblemSpec quantized = adversarial_two_pool_spec(576, v32, sm_count + 9, 40, 96, 32);
  quantized.seed = 16;

  PoolSpec bf16;
  bf16.format = KvFormat::bf16;
  ProblemSpec pair = adversarial_two_pool_spec(512, bf16, 2 * sm_count + 5, 64, 80, 48);
  pair.seed = 17;
  return {quantized, pair};
}

TEST(GpuAttend, ClaimedTokensMatchTheOracleRepeatBitwiseAndReplayInAGraph) {
  SMLA_REQUIRE_GPU();
  const cuda_backend::DeviceInfo* info = nullptr;
  ASSERT_TRUE(status_ok(cuda_backend::device_info(0, &info)));
  for (const ProblemSpec& s : claimed_token_specs(info->sm_count)) {
    Problem p(s);
    SCOPED_TRACE(s.describe());
    EXPECT_EQ(hopper_schedule(p, *info), "one pass, claimed tokens");
    expect_matches_oracle(p);
    expect_repeats_bitwise(p);
    expect_captured_plan_and_attend_replay(s);
  }
}

TEST(GpuAttend, VariantOutsideThePresetIsRejectedNamingThePreset) {
  SMLA_REQUIRE_GPU();
  if (std::string(smla::kernel_preset()) == "all") {
    GTEST_SKIP() << "this build compiles every variant (preset 'all')";
  }
  // The default preset compiles same-format pool pairs only; a mixed pair must be refused
  // before any launch, with the preset that has it, and nothing written.
  ProblemSpec s = decode_spec(KvFormat::fp8_ds_mla, 512);
  s.extra = true;
  s.k_x = 64;
  s.extra_kv.format = KvFormat::bf16;
  Problem p(s);
  p.poison_outputs();
  const Problem before = p;
  DeviceProblem d(p);
  size_t bytes = 0;
  const Status sized = attend_workspace_size(d.args(), &bytes);
  SMLA_SKIP_IF_HOPPER_DOES_NOT_COVER(sized);
  EXPECT_EQ(sized.code(), StatusCode::not_built) << sized.message();
  const Status st = attend(d.args(), Workspace{});
  ASSERT_EQ(st.code(), StatusCode::not_built) << st.message();
  EXPECT_NE(st.message().find("SMLA_KERNEL_PRESET=all"), std::string::npos) << st.message();
  SMLA_CUDA_ASSERT(cudaDeviceSynchronize());
  d.download_outputs(p);
  EXPECT_TRUE(check_outputs_identical(p, before)) << "a refused call wrote its outputs";
}

// bf16 pools small beside the selection (16 or more selected entries per slot): on the Hopper
// path the block-pair kernel then reads per-slot |V| bounds (src/cuda/hopper/v_bounds.hpp)
// made by a pass over the pools; unused rows are NaN, which that pass reads and the kernel
// must not. d_qk 512 with a bf16 extra pool, as V4 prefill.
ProblemSpec small_bf16_pool_spec(int d_qk) {
  ProblemSpec s;
  s.T = 64;
  s.h_q = 64;
  s.d_qk = d_qk;
  s.k = 256;
  s.kv.format = KvFormat::bf16;
  s.kv.min_slots = 512;
  s.extra = d_qk == 512;
  s.k_x = 64;
  s.extra_kv = {KvFormat::bf16, 64, 256};
  s.poison_unused = true;
  s.sink = true;
  s.seed = 13;
  return s;
}

// Copies `pool` to the start of an allocation 64 times its size and describes all of it: the
// blocks past the copy are never read (no index reaches them). A description alone past the
// pool's memory would overlap the outputs, which attend refuses.
void grow_pool(KvPool& pool, int d_qk, DeviceBuffer& room) {
  const int64_t used = (pool.num_blocks - 1) * pool.block_stride + pool.packed_block_bytes(d_qk);
  room = DeviceBuffer(static_cast<size_t>(64 * pool.num_blocks * pool.block_stride));
  SMLA_CUDA_ASSERT(cudaMemcpy(room.get(), pool.data, static_cast<size_t>(used),
                              cudaMemcpyDeviceToDevice));
  pool.data = room.get();
  pool.num_blocks *= 64;
}

// The same call with pools 64 times larger: the kernel then scans V instead of reading
// bounds (which call takes which is HopperSchedule's test), and must give the same bits.
TEST(GpuAttend, VBoundsTableAndVScanGiveBitwiseSameOutputs) {
  SMLA_REQUIRE_GPU();
  for (int d_qk : {576, 512}) {
    Problem with_table(small_bf16_pool_spec(d_qk));
    SCOPED_TRACE(with_table.spec().describe());
    DeviceProblem d(with_table);
    const AttendArgs small = d.args();
    AttendArgs large = small;
    DeviceBuffer large_kv, large_extra_kv;
    ASSERT_NO_FATAL_FAILURE(grow_pool(large.kv, d_qk, large_kv));
    if (large.extra_kv.present()) {
      ASSERT_NO_FATAL_FAILURE(grow_pool(large.extra_kv, d_qk, large_extra_kv));
    }
    Problem scanned = with_table;
    for (auto [args, run] : {std::pair{small, &with_table}, std::pair{large, &scanned}}) {
      run->poison_outputs();
      for (int id : {kOut, kLse, kMaxLogits}) d.upload(*run, id);
      AttendScratch scratch;
      SMLA_ASSERT_OK(scratch.allocate(args));
      SMLA_ASSERT_OK(attend(args, scratch.ws(), nullptr, nullptr));
      SMLA_CUDA_ASSERT(cudaDeviceSynchronize());
      d.download_outputs(*run);
    }
    EXPECT_TRUE(check_attend(with_table, naive_attend(with_table.args())));
    EXPECT_TRUE(check_outputs_identical(with_table, scanned));
    // Both calls need the same workspace: the tables' room is sized by the selection.
    size_t ws_small = 0, ws_large = 0;
    SMLA_ASSERT_OK(attend_workspace_size(small, &ws_small));
    SMLA_ASSERT_OK(attend_workspace_size(large, &ws_large));
    EXPECT_EQ(ws_small, ws_large);
  }
}

TEST(GpuAttend, WorkspaceAndPlanAreSizedByTheSelectionNotThePool) {
  SMLA_REQUIRE_GPU();
  for (const ProblemSpec& s : {decode_spec(), prefill_spec(), small_bf16_pool_spec(576)}) {
    Problem p(s);
    DeviceProblem d(p);
    // Size queries read shapes only, so the pool may be described without memory: a pool
    // 4096x larger must not change what the call needs.
    AttendArgs small = d.args();
    small.kv.data = nullptr;
    AttendArgs huge = small;
    huge.kv.num_blocks *= 4096;
    size_t ws_small = 0, ws_huge = 0, plan_small = 0, plan_huge = 0;
    SMLA_ASSERT_OK(attend_workspace_size(small, &ws_small));
    SMLA_ASSERT_OK(attend_workspace_size(huge, &ws_huge));
    SMLA_ASSERT_OK(plan_size(small, &plan_small));
    SMLA_ASSERT_OK(plan_size(huge, &plan_huge));
    EXPECT_EQ(ws_small, ws_huge) << s.describe();
    EXPECT_EQ(plan_small, plan_huge) << s.describe();
  }
}

}  // namespace
}  // namespace smla::test::gpu
