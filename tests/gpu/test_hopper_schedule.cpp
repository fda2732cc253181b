// The Hopper path's choice between one pass, split, and rounds and tail (make_schedule in
// src/cuda/hopper/hopper_attention.cu) on BENCHMARKS.md's anchor shapes for a 132-SM Hopper
// GPU (H200, H100 SXM). Each choice was measured (docs/perf-notes.md: on an H200, the rounds
// and tail on an H100); a change to the estimate that flips one needs measuring again. Host
// code only: it runs without a device.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "cuda/hopper/hopper_attention.hpp"
#include "cuda/portable/attend_host.hpp"
#include "gpu/gpu_harness.hpp"

namespace smla::test::gpu {
namespace {

struct AnchorShape {
  const char* row;
  int64_t tokens, h_q, d_qk, k, k_x;
  const char* schedule;  // hopper::schedule_name's
};

// Shapes only: the schedule reads no data.
AttendArgs shape_only_args(const AnchorShape& s) {
  AttendArgs a;
  a.q = TensorView::contiguous(nullptr, DType::bf16, {s.tokens, s.h_q, s.d_qk}, Device::cpu());
  a.indices = TensorView::contiguous(nullptr, DType::i32, {s.tokens, s.k}, Device::cpu());
  if (s.k_x > 0) {
    a.extra_kv.num_blocks = 1;
    a.extra_indices = TensorView::contiguous(nullptr, DType::i32, {s.tokens, s.k_x}, Device::cpu());
  }
  return a;
}

TEST(HopperSchedule, AnchorShapesTakeTheStrategyMeasuredFasterOn132Sms) {
  cuda_backend::DeviceInfo h200;
  h200.cc_major = 9;
  h200.sm_count = 132;
  // Prefill chunks of 4096 tokens leave 4 tokens after the full rounds (62 of 66 CTAs per
  // token at h_q = 128, 31 of 132 at h_q = 64): splitting them would save 1.3-2.8% by the
  // estimate, less than the tail costs (measured), so they run one pass. V4 b = 148 saves
  // 12% and takes rounds and tail. A one-pass launch of several rounds over one head tile
  // claims its tokens.
  constexpr const char* kClaimed = "one pass, claimed tokens";
  const AnchorShape shapes[] = {
      {"prefill h_q=128 topk=2048", 4096, 128, 576, 2048, 0, "one pass"},
      {"prefill h_q=64 topk=2048", 4096, 64, 576, 2048, 0, kClaimed},
      {"prefill h_q=64 topk=512", 4096, 64, 512, 512, 0, kClaimed},
      {"prefill h_q=128 topk=1024", 4096, 128, 512, 1024, 0, "one pass"},
      {"decode b=2 (4 tokens)", 4, 128, 576, 2048, 0, "split"},
      {"decode b=64", 128, 128, 576, 2048, 0, "one pass"},
      {"decode b=128", 256, 128, 576, 2048, 0, "one pass"},
      {"decode topk=128+512 b=64", 128, 64, 512, 128, 512, "one pass"},
      {"decode topk=128+512 b=148", 296, 64, 512, 128, 512, "rounds and tail"},
      {"decode topk=16384 h_q=64", 296, 64, 512, 16384, 0, "split"},
      {"decode topk=16384 h_q=128", 296, 128, 576, 16384, 0, "split"},
  };
  for (const AnchorShape& s : shapes) {
    SCOPED_TRACE(s.row);
    const AttendArgs args = shape_only_args(s);
    EXPECT_STREQ(hopper::schedule_name(args, h200), s.schedule);
    size_t plan_bytes = 0;
    ASSERT_TRUE(hopper::plan_size(args, h200, &plan_bytes).ok());
    EXPECT_EQ(plan_bytes > 0, std::string(s.schedule).rfind("one pass", 0) != 0)
        << "a schedule that splits tokens has a plan, one pass none";
  }
}

// Rounds and tail on the V4 decode b = 148 row: 264 tokens run whole in two rounds over the
// 132 units; the 32 left are spread over 128 of them (4 partitions per token, none
// straddling two), and only they have partials.
TEST(HopperSchedule, RoundsAndTailSplitsOnlyTheLastRound) {
  const AttendArgs args = shape_only_args({"", 296, 64, 512, 128, 512, ""});
  const portable::PlanLayout layout = portable::split_plan_layout(args, 132, 2);
  EXPECT_EQ(layout.partitions, 132) << "the whole tokens go round every unit";
  EXPECT_EQ(layout.first_split(), 264);
  EXPECT_EQ(layout.spread, 128);
  EXPECT_EQ(layout.split_tokens(), 32);
  EXPECT_EQ(layout.max_partials(), 32 + 128);
  EXPECT_EQ(layout.max_segments(), 264 + 32 + 128);

  cuda_backend::DeviceInfo h200;
  h200.cc_major = 9;
  h200.sm_count = 132;
  size_t plan_bytes = 0;
  ASSERT_TRUE(hopper::plan_size(args, h200, &plan_bytes).ok());
  EXPECT_EQ(plan_bytes, static_cast<size_t>(layout.bytes()));
}

// With no more tokens than partitions, a split takes a multiple of the token count, so that
// equal-length tokens never share a partition (both paths' layouts come from here).
TEST(HopperSchedule, SplitLayoutKeepsEachPartitionInsideOneToken) {
  const auto layout = [](int64_t tokens, int64_t partitions) {
    return portable::split_plan_layout(shape_only_args({"", tokens, 128, 576, 2048, 0, ""}),
                                       partitions);
  };
  EXPECT_EQ(layout(4, 66).partitions, 64);
  EXPECT_EQ(layout(3, 66).partitions, 66);
  EXPECT_EQ(layout(5, 66).partitions, 65);
  EXPECT_EQ(layout(66, 66).partitions, 66);
  EXPECT_EQ(layout(67, 66).partitions, 66) << "more tokens than partitions: as asked";
  EXPECT_EQ(layout(296, 66).partitions, 66);

  // The b = 2 anchor row's plan is sized for 64 partitions on an H200.
  cuda_backend::DeviceInfo h200;
  h200.cc_major = 9;
  h200.sm_count = 132;
  size_t plan_bytes = 0;
  ASSERT_TRUE(hopper::plan_size(shape_only_args({"", 4, 128, 576, 2048, 0, ""}), h200,
                                &plan_bytes)
                  .ok());
  EXPECT_EQ(plan_bytes, static_cast<size_t>(portable::PlanLayout{4, 64, 0, 64}.bytes()));
}

// The block-pair kernel (bf16 pools) reads per-slot |V| bounds when the pools hold at most
// one slot per 16 selected entries: the prefill anchors (pools of 8k-128k slots behind 4096
// tokens), not a serving cache behind a decode batch, and never a quantized pool.
TEST(HopperSchedule, BoundsTablesOnlyForBf16PoolsSmallBesideTheSelection) {
  if (!hopper_compiled()) GTEST_SKIP() << "this build has no Hopper kernels (no 90a)";
  auto args = [](int64_t tokens, int64_t k, KvFormat format, int64_t slots) {
    AttendArgs a = shape_only_args({"", tokens, 64, 576, k, 0, ""});
    a.kv.format = format;
    a.kv.block_size = 64;
    a.kv.num_blocks = slots / 64;
    return a;
  };
  EXPECT_TRUE(hopper::uses_v_bounds(args(4096, 2048, KvFormat::bf16, 131072)));
  EXPECT_TRUE(hopper::uses_v_bounds(args(64, 256, KvFormat::bf16, 1024)));
  EXPECT_FALSE(hopper::uses_v_bounds(args(64, 256, KvFormat::bf16, 1024 + 64)));
  EXPECT_FALSE(hopper::uses_v_bounds(args(296, 2048, KvFormat::bf16, 148 * 32768)));
  EXPECT_FALSE(hopper::uses_v_bounds(args(4096, 2048, KvFormat::fp8_v32, 131072)));
}

}  // namespace
}  // namespace smla::test::gpu
