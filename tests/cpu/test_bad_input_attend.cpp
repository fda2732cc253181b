// SPEC §5 for attend and its companions (plan_size, make_plan, attend_workspace_size): for
// each check of src/api/validate.hpp, a call that violates it, asserting the code, a message
// naming op, argument, expectation and given value, and that no byte of any buffer changed.
#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "common/scoped_env.hpp"
#include "test_bad_input_harness.hpp"

namespace smla::test {
namespace {

// Which entry points a broken argument must be rejected by. Size queries only need shapes
// (null data and absent outputs pass); make_plan needs real inputs but no outputs.
enum class Scope { all, calls, attend_only };

struct BadAttend {
  const char* name;
  std::function<void(AttendArgs&, AttendCase&)> mutate;
  std::vector<std::string> fragments;
  Scope scope = Scope::all;
};

template <class T>
T* offset_bytes(void* p, int bytes) {
  return reinterpret_cast<T*>(static_cast<char*>(p) + bytes);
}

// q of d_qk = 512 in the same buffer, for the V4-only formats.
void use_d_qk_512(AttendArgs& a) {
  a.q.shape[2] = 512;
  a.q.stride[0] = AttendCase::H * 512;
  a.q.stride[1] = 512;
}

const std::vector<BadAttend>& cases() {
  using A = AttendArgs;
  using C = AttendCase;
  static const std::vector<BadAttend> all = {
      // q
      {"q_absent", [](A& a, C&) { a.q = TensorView{}; }, {"'q'", "[T, h_q, d_qk]", "absent"}},
      {"q_dtype", [](A& a, C&) { a.q.dtype = DType::f32; }, {"'q'", "dtype bf16", "got f32"}},
      {"q_dtype_out_of_enum", [](A& a, C&) { a.q.dtype = static_cast<DType>(42); },
       {"'q'", "dtype bf16", "unknown (42)"}},
      {"q_rank", [](A& a, C&) { a.q.rank = 2; }, {"'q'", "[T, h_q, d_qk]", "rank 2"}},
      {"q_rank_too_long",
       [](A& a, C& c) {
         a.q = TensorView::contiguous(c.q.data(), DType::bf16, {1, 4, 16, 576, 1});
       },
       {"'q'", "[T, h_q, d_qk]", "rank 5"}},
      {"q_negative_extent", [](A& a, C&) { a.q.shape[0] = -1; },
       {"'q'", "[T, h_q, d_qk]", "got [-1, 16, 576]"}},
      {"q_no_heads", [](A& a, C&) { a.q.shape[1] = 0; }, {"'q'", "h_q in 1..128", "h_q=0"}},
      {"q_too_many_heads", [](A& a, C&) { a.q.shape[1] = 129; },
       {"'q'", "h_q in 1..128", "h_q=129"}},
      {"q_d_qk", [](A& a, C&) { a.q.shape[2] = 256; }, {"'q'", "d_qk 576", "d_qk=256"}},
      {"q_last_stride", [](A& a, C&) { a.q.stride[2] = 2; },
       {"'q'", "unit stride on the last dim", "strides [9216, 576, 2]"}},
      {"q_negative_stride", [](A& a, C&) { a.q.stride[0] = -9216; },
       {"'q'", "non-negative strides", "strides [-9216, 576, 1]"}},
      {"q_null", [](A& a, C&) { a.q.data = nullptr; }, {"'q'", "a data pointer", "null"},
       Scope::calls},
      {"q_misaligned", [](A& a, C& c) { a.q.data = offset_bytes<void>(c.q.data(), 1); },
       {"'q'", "aligned to 2 bytes (bf16)", "address 0x"}},
      {"q_device_kind", [](A& a, C&) { a.q.device.kind = static_cast<DeviceKind>(7); },
       {"'q'", "cpu or cuda", "7"}},
      // kv
      {"kv_format_value", [](A& a, C&) { a.kv.format = static_cast<KvFormat>(9); },
       {"'kv.format'", "bf16, fp8_v32, fp8_ds_mla or int8_ds_mla", "format value 9"}},
      {"kv_format_for_d_qk", [](A& a, C&) { a.kv.format = KvFormat::fp8_ds_mla; },
       {"'kv.format'", "d_qk=576", "got fp8_ds_mla"}},
      {"kv_block_size", [](A& a, C&) { a.kv.block_size = 0; },
       {"'kv.block_size'", "> 0", "got 0"}},
      {"kv_num_blocks", [](A& a, C&) { a.kv.num_blocks = -1; },
       {"'kv.num_blocks'", ">= 0", "got -1"}},
      {"kv_scales_without_int8", [](A& a, C& c) { a.kv.scales = c.scales.data(); },
       {"'kv.scales'", "only for int8_ds_mla", "format bf16"}},
      {"kv_null_data", [](A& a, C&) { a.kv.data = nullptr; },
       {"'kv.data'", "2 blocks of 64 slots", "got null"}, Scope::calls},
      {"kv_block_stride_short", [](A& a, C&) { a.kv.block_stride = 1000; },
       {"'kv.block_stride'", ">= 73728", "got 1000"}},
      {"kv_block_stride_unaligned", [](A& a, C&) { a.kv.block_stride = 73730; },
       {"'kv.block_stride'", "multiple of 4 bytes on cpu", "got 73730"}},
      {"kv_data_unaligned", [](A& a, C& c) { a.kv.data = offset_bytes<void>(c.kv.data(), 2); },
       {"'kv.data'", "aligned to 4 bytes on cpu", "0x"}},
      {"kv_int8_scale_stride",
       [](A& a, C& c) {
         use_d_qk_512(a);
         a.kv.format = KvFormat::int8_ds_mla;
         a.kv.block_stride = C::BS * 512;
         a.kv.scales = c.scales.data();
         a.kv.scale_block_stride = 100;
       },
       {"'kv.scale_block_stride'", ">= 256", "got 100"}},
      {"kv_on_other_device", [](A& a, C&) { a.kv.device = Device::cuda(0); },
       {"'kv'", "device cpu", "got cuda:0"}},
      // indices and lengths
      {"indices_tokens", [](A& a, C&) { a.indices.shape[0] = 5; },
       {"'indices'", "[T=4, k] with T matching q", "got [5, 8]"}},
      {"indices_dtype", [](A& a, C&) { a.indices.dtype = DType::f32; },
       {"'indices'", "dtype i32", "got f32"}},
      {"indices_rank", [](A& a, C&) { a.indices.rank = 1; },
       {"'indices'", "[T=4, k]", "rank 1"}},
      {"indices_last_stride", [](A& a, C&) { a.indices.stride[1] = 2; },
       {"'indices'", "unit stride on the last dim", "strides [8, 2]"}},
      {"indices_null", [](A& a, C&) { a.indices.data = nullptr; },
       {"'indices'", "a data pointer", "null"}, Scope::calls},
      {"lengths_tokens", [](A& a, C&) { a.lengths.shape[0] = 3; },
       {"'lengths'", "[T=4]", "got [3]"}},
      {"lengths_dtype", [](A& a, C&) { a.lengths.dtype = DType::u8; },
       {"'lengths'", "dtype i32", "got u8"}},
      {"lengths_on_other_device", [](A& a, C&) { a.lengths.device = Device::cuda(1); },
       {"'lengths'", "device cpu", "got cuda:1"}},
      // the extra pool
      {"extra_indices_missing", [](A& a, C&) { a.extra_indices = TensorView{}; },
       {"'extra_indices'", "since extra_kv is given", "absent"}},
      {"extra_kv_missing", [](A& a, C&) { a.extra_kv = KvPool{}; },
       {"'extra_kv'", "since extra_indices is given", "absent pool"}},
      {"extra_lengths_without_pool",
       [](A& a, C&) {
         a.extra_kv = KvPool{};
         a.extra_indices = TensorView{};
       },
       {"'extra_lengths'", "no extra_kv is given", "got shape [4]"}},
      {"extra_kv_format_for_d_qk", [](A& a, C&) { a.extra_kv.format = KvFormat::int8_ds_mla; },
       {"'extra_kv.format'", "d_qk=576", "got int8_ds_mla"}},
      {"extra_kv_block_size", [](A& a, C&) { a.extra_kv.block_size = -3; },
       {"'extra_kv.block_size'", "> 0", "got -3"}},
      {"extra_indices_tokens", [](A& a, C&) { a.extra_indices.shape[0] = 3; },
       {"'extra_indices'", "[T=4, k]", "got [3, 4]"}},
      {"extra_lengths_tokens", [](A& a, C&) { a.extra_lengths.shape[0] = 8; },
       {"'extra_lengths'", "[T=4]", "got [8]"}},
      // sink and scale
      {"sink_heads", [](A& a, C&) { a.sink.shape[0] = 17; },
       {"'sink'", "[h_q=16] with h_q matching q", "got [17]"}},
      {"sink_dtype", [](A& a, C&) { a.sink.dtype = DType::bf16; },
       {"'sink'", "dtype f32", "got bf16"}},
      {"scale_nan", [](A& a, C&) { a.scale = std::numeric_limits<float>::quiet_NaN(); },
       {"'scale'", "finite", "nan"}},
      {"scale_inf", [](A& a, C&) { a.scale = std::numeric_limits<float>::infinity(); },
       {"'scale'", "finite", "inf"}},
      // outputs
      {"out_absent", [](A& a, C&) { a.out = TensorView{}; }, {"'out'", "d_v=512", "absent"},
       Scope::attend_only},
      {"out_d_v", [](A& a, C&) { a.out.shape[2] = 576; },
       {"'out'", "[T=4, h_q=16, d_v=512]", "got [4, 16, 576]"}},
      {"out_tokens", [](A& a, C&) { a.out.shape[0] = 3; },
       {"'out'", "[T=4, h_q=16, d_v=512]", "got [3, 16, 512]"}},
      {"out_dtype", [](A& a, C&) { a.out.dtype = DType::f32; }, {"'out'", "dtype bf16", "got f32"}},
      {"out_self_overlap", [](A& a, C&) { a.out.stride[0] = 0; },
       {"'out'", "every element its own address", "strides [0, 512, 1]"}},
      {"out_interleaved_overlap", [](A& a, C&) { a.out.stride[1] = 256; },
       {"'out'", "every element its own address", "strides [8192, 256, 1]"}},
      {"out_aliases_q", [](A& a, C& c) { a.out.data = c.q.data(); },
       {"'out'", "disjoint from 'q'", "overlapping byte ranges"}},
      {"out_aliases_kv", [](A& a, C& c) { a.out.data = c.kv.data(); },
       {"'out'", "disjoint from 'kv'", "overlapping byte ranges"}},
      {"lse_aliases_extra_kv", [](A& a, C& c) { a.lse.data = c.extra.data(); },
       {"'lse'", "disjoint from 'extra_kv'", "overlapping"}},
      {"max_logits_aliases_lse", [](A& a, C& c) { a.max_logits.data = c.lse.data(); },
       {"'max_logits'", "disjoint from 'lse'", "overlapping"}},
      {"lse_heads", [](A& a, C&) { a.lse.shape[1] = 8; },
       {"'lse'", "[T=4, h_q=16]", "got [4, 8]"}},
      {"max_logits_dtype", [](A& a, C&) { a.max_logits.dtype = DType::bf16; },
       {"'max_logits'", "dtype f32", "got bf16"}},
      {"out_on_other_device", [](A& a, C&) { a.out.device = Device::cuda(0); },
       {"'out'", "device cpu", "got cuda:0"}},
      // a negative rank is an error, never an absent optional (an output silently dropped)
      {"lse_negative_rank", [](A& a, C&) { a.lse.rank = -3; },
       {"'lse'", "a rank >= 0 (0: absent)", "got rank -3"}},
      {"q_negative_rank", [](A& a, C&) { a.q.rank = -1; },
       {"'q'", "a rank >= 0 (0: absent)", "got rank -1"}},
      // extents whose byte counts overflow int64 are rejected before anything multiplies them
      {"lse_stride_overflow", [](A& a, C&) { a.lse.stride[0] = int64_t{1} << 62; },
       {"'lse'", "spanning at most 2^63 - 1 bytes", "strides [4611686018427387904, 1]"}},
      {"kv_slots_overflow",
       [](A& a, C&) {
         a.kv.num_blocks = int64_t{1} << 40;
         a.kv.block_size = 1 << 30;
       },
       {"'kv.num_blocks'", "slots fitting int64", "got 1099511627776"}},
      {"kv_bytes_overflow",
       [](A& a, C&) { a.kv.block_stride = std::numeric_limits<int64_t>::max() - 4095; },
       {"'kv.block_stride'", "spanning at most 2^63 - 1 bytes", "got 9223372036854771712"}},
  };
  return all;
}

class BadAttendTest : public ::testing::TestWithParam<BadAttend> {};

TEST_P(BadAttendTest, EveryEntryPointRejectsItAndWritesNothing) {
  const BadAttend& bad = GetParam();
  AttendCase c;
  AttendArgs args = c.args();
  bad.mutate(args, c);

  auto expect = [&](const char* op, const Status& s) {
    SCOPED_TRACE(op);
    std::vector<std::string> fragments = bad.fragments;
    fragments.push_back(std::string(op) + ": argument ");
    expect_rejected(s, StatusCode::invalid_argument, fragments);
  };

  expect("smla::attend", attend(args, Workspace{}));
  if (bad.scope != Scope::attend_only) {
    Plan plan;
    expect("smla::make_plan", make_plan(args, &plan));
    EXPECT_EQ(plan.key, 0u) << "a failed make_plan stamped the plan";
  }
  if (bad.scope == Scope::all) {
    size_t bytes = 12345;
    expect("smla::plan_size", plan_size(args, &bytes));
    expect("smla::attend_workspace_size", attend_workspace_size(args, &bytes));
    EXPECT_EQ(bytes, 12345u) << "a failed size query wrote its result";
  }
  EXPECT_TRUE(c.untouched()) << "a rejected call wrote to a buffer";
}

INSTANTIATE_TEST_SUITE_P(Attend, BadAttendTest, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return std::string(info.param.name); });

// ---- the checks that are not one broken argument --------------------------------------

TEST(BadAttendPlan, EmptyPlanIsRejected) {
  AttendCase c;
  const Plan empty;
  expect_rejected(attend(c.args(), Workspace{}, nullptr, &empty), StatusCode::invalid_argument,
                  {"smla::attend: argument 'plan'", "filled by smla::make_plan", "key 0"});
  EXPECT_TRUE(c.untouched());
}

TEST(BadAttendPlan, PlanForOtherShapesIsRejected) {
  AttendCase c;
  AttendArgs args = c.args();
  Plan plan;
  ASSERT_TRUE(make_plan(args, &plan).ok());
  ASSERT_NE(plan.key, 0u);
  args.indices.shape[1] = AttendCase::K / 2;  // a different top-k than the plan's
  expect_rejected(attend(args, Workspace{}, nullptr, &plan), StatusCode::invalid_argument,
                  {"smla::attend: argument 'plan'", "made for these arguments (key 0x",
                   "made for other shapes, pools or device (key 0x"});
  EXPECT_TRUE(c.untouched());
}

TEST(BadAttendPlan, PlanKeyFollowsTheSchedulingShapes) {
  AttendCase c;
  AttendArgs args = c.args();
  Plan first, again, other;
  ASSERT_TRUE(make_plan(args, &first).ok());
  ASSERT_TRUE(make_plan(args, &again).ok());
  EXPECT_EQ(first.key, again.key);
  args.kv.num_blocks = 1;  // fewer slots: a schedule may depend on them
  ASSERT_TRUE(make_plan(args, &other).ok());
  EXPECT_NE(first.key, other.key);
}

TEST(BadAttendPlan, NullResultPointersAreRejected) {
  AttendCase c;
  expect_rejected(plan_size(c.args(), nullptr), StatusCode::invalid_argument,
                  {"smla::plan_size: argument 'bytes'", "a pointer", "null"});
  expect_rejected(attend_workspace_size(c.args(), nullptr), StatusCode::invalid_argument,
                  {"smla::attend_workspace_size: argument 'bytes'", "a pointer", "null"});
  expect_rejected(make_plan(c.args(), nullptr), StatusCode::invalid_argument,
                  {"smla::make_plan: argument 'plan'", "a pointer", "null"});
  EXPECT_TRUE(c.untouched());
}

void place_all(AttendArgs& a, Device device) {
  for (TensorView* t : {&a.q, &a.indices, &a.lengths, &a.extra_indices, &a.extra_lengths,
                        &a.sink, &a.out, &a.lse, &a.max_logits})
    t->device = device;
  a.kv.device = a.extra_kv.device = device;
}

TEST(BadAttendDevice, CudaArgumentsWithoutAUsableGpuFailBeforeAnyWork) {
  if (cuda_device_count() > 0) GTEST_SKIP() << "a CUDA device is present";
  AttendCase c;
  AttendArgs args = c.args();
  place_all(args, Device::cuda(0));
  const Status s = attend(args, Workspace{});
  EXPECT_TRUE(is_no_gpu_code(s.code())) << status_code_name(s.code()) << ": " << s.message();
  EXPECT_NE(s.message().find("smla::attend"), std::string::npos) << s.message();
  EXPECT_TRUE(c.untouched());
}

// The CUDA-only alignment rules are checked with the shapes, before the device itself, so
// they fail the same way on a machine without a GPU; the same views pass on the CPU.
TEST(BadAttendDevice, CudaAlignmentRules) {
  struct Misalign {
    std::function<void(AttendArgs&, AttendCase&)> mutate;
    std::vector<std::string> fragments;
  };
  const std::vector<Misalign> cases = {
      // 9212 elements = 18424 bytes between tokens (an input may overlap itself).
      {[](AttendArgs& a, AttendCase&) { a.q.stride[0] = 9212; },
       {"smla::attend: argument 'q'", "rows 16-byte aligned on a CUDA device",
        "strides [9212, 576, 1]"}},
      {[](AttendArgs& a, AttendCase& c) { a.out.data = offset_bytes<void>(c.out.data(), 8); },
       {"smla::attend: argument 'out'", "rows 16-byte aligned on a CUDA device", "address 0x"}},
      {[](AttendArgs& a, AttendCase&) { a.kv.block_stride = AttendCase::kBlockBytes + 4; },
       {"smla::attend: argument 'kv.block_stride'", "multiple of 16 bytes on cuda:0",
        "got 73732"}},
      {[](AttendArgs& a, AttendCase& c) {
         a.extra_kv.data = offset_bytes<void>(c.extra.data(), 4);
       },
       {"smla::attend: argument 'extra_kv.data'", "aligned to 16 bytes on cuda:0", "0x"}},
  };
  for (const Misalign& m : cases) {
    AttendCase c;
    AttendArgs args = c.args();
    m.mutate(args, c);
    size_t bytes = 0;
    const Status on_cpu = attend_workspace_size(args, &bytes);
    EXPECT_TRUE(on_cpu.ok()) << "rejected on the CPU: " << on_cpu.message();
    place_all(args, Device::cuda(0));
    expect_rejected(attend(args, Workspace{}), StatusCode::invalid_argument, m.fragments);
    EXPECT_TRUE(c.untouched());
  }
}

// SMLA_BACKEND is read per call; restore it whatever the test does.
class BackendEnv : public ::testing::Test {
 private:
  ScopedEnv backend_{"SMLA_BACKEND"};
};

TEST_F(BackendEnv, UnknownBackendNameIsRejected) {
  setenv("SMLA_BACKEND", "tpu", 1);
  AttendCase c;
  size_t bytes = 7;
  expect_rejected(attend_workspace_size(c.args(), &bytes), StatusCode::invalid_argument,
                  {"smla::attend_workspace_size", "SMLA_BACKEND", "cpu, portable or hopper",
                   "got 'tpu'"});
  EXPECT_EQ(bytes, 7u);
  expect_rejected(attend(c.args(), Workspace{}), StatusCode::invalid_argument,
                  {"smla::attend", "SMLA_BACKEND", "got 'tpu'"});
  EXPECT_TRUE(c.untouched());
}

TEST_F(BackendEnv, GpuBackendNamesLeaveCpuCallsOnTheReference) {
  AttendCase c;
  for (const char* name : {"cpu", "portable", "hopper"}) {
    setenv("SMLA_BACKEND", name, 1);
    size_t bytes = 7;
    EXPECT_TRUE(attend_workspace_size(c.args(), &bytes).ok()) << name;
    EXPECT_EQ(bytes, 0u) << name;
  }
}

// ---- what the rules accept (no backend needed: size queries and CPU plans) -------------

// The GPU kernels count a token's entries in int32: k + k_x is capped at 2^30. Size queries
// need only shapes, so no memory backs the 4 GiB rows of indices.
TEST(BadAttendLimits, AtMost2To30EntriesPerToken) {
  AttendCase c;
  AttendArgs args = c.args();
  args.extra_indices = TensorView::contiguous(nullptr, DType::i32, {AttendCase::T, (1 << 30) - 3});
  size_t bytes = 12345;
  expect_rejected(attend_workspace_size(args, &bytes), StatusCode::invalid_argument,
                  {"'extra_indices'", "at most 2^30 entries per token", "k + k_x = 1073741829"});
  EXPECT_EQ(bytes, 12345u);
  args.extra_indices.shape[1] = (1 << 30) - AttendCase::K;  // exactly 2^30 in all
  EXPECT_TRUE(attend_workspace_size(args, &bytes).ok());
}

TEST(AttendAccepts, SizeQueriesNeedOnlyShapes) {
  AttendCase c;
  AttendArgs args = c.args();
  args.q.data = nullptr;
  args.kv.data = args.extra_kv.data = nullptr;
  args.indices.data = args.extra_indices.data = nullptr;
  args.out = TensorView{};
  size_t bytes = 99;
  EXPECT_TRUE(attend_workspace_size(args, &bytes).ok());
  EXPECT_EQ(bytes, 0u) << "the CPU reference needs no workspace";
  bytes = 99;
  EXPECT_TRUE(plan_size(args, &bytes).ok());
  EXPECT_EQ(bytes, 0u) << "the CPU reference needs no plan";
}

TEST(AttendAccepts, TransposedStatsAndPaddedPoolsAndOptionalsAbsent) {
  AttendCase c;
  AttendArgs args = c.args();
  // FlashMLA's decode lse is [b, h_q, s_q]: a [T, h_q] view with strides [1, T].
  args.lse.stride[0] = 1;
  args.lse.stride[1] = AttendCase::T;
  args.kv.num_blocks = 1;
  args.kv.block_stride = 2 * AttendCase::kBlockBytes;  // padding between blocks
  args.lengths = args.extra_lengths = args.sink = args.max_logits = TensorView{};
  args.extra_kv = KvPool{};
  args.extra_indices = TensorView{};
  size_t bytes = 0;
  const Status s = attend_workspace_size(args, &bytes);
  EXPECT_TRUE(s.ok()) << s.message();
}

TEST(AttendAccepts, EmptyCallsAndEmptyPools) {
  AttendCase c;
  AttendArgs args = c.args();
  args.q.shape[0] = args.indices.shape[0] = args.lengths.shape[0] = 0;
  args.extra_indices.shape[0] = args.extra_lengths.shape[0] = 0;
  args.out.shape[0] = args.lse.shape[0] = args.max_logits.shape[0] = 0;
  args.kv.num_blocks = 0;
  size_t bytes = 0;
  const Status s = attend_workspace_size(args, &bytes);
  EXPECT_TRUE(s.ok()) << s.message();
  // An empty tensor has no element to overlap or to reach: any strides are fine, even ones
  // whose products with the other extents overflow int64.
  args.out.stride[0] = args.out.stride[1] = 0;
  args.lse.stride[0] = args.lse.stride[1] = std::numeric_limits<int64_t>::max();
  args.q.shape[0] = int64_t{1} << 62;
  args.q.shape[2] = 0;  // [2^62, 16, 0]: numel must see the 0 before multiplying
  EXPECT_EQ(args.q.numel(), 0);
  args.q.shape[0] = 0;
  args.q.shape[2] = 576;
  args.q.stride[0] = args.q.stride[1] = args.q.stride[2] = 0;  // NumPy 2's fresh empty array
  const Status strided = attend(args, Workspace{});
  EXPECT_TRUE(strided.ok()) << strided.message();
}

}  // namespace
}  // namespace smla::test
