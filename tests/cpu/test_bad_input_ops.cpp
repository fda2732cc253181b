// SPEC §5 for combine, quantize, dequantize and write_cache: for each check, a call that
// violates it, asserting the code, a message naming op, argument, expectation and given
// value, and that no byte of any buffer (outputs, pool, inputs) changed.
#include <functional>
#include <string>
#include <vector>

#include "test_bad_input_harness.hpp"

namespace smla::test {
namespace {

// ---- combine ----------------------------------------------------------------------------

// A valid combine of S=2 f32 partials of T=4 tokens and h_q=16 heads, with sink and lse.
struct CombineCase {
  static constexpr int64_t S = 2, T = 4, H = 16;
  Poisoned partial_out{S * T * H * 512 * 4}, partial_lse{S * T * H * 4}, sink{H * 4},
      out{T * H * 512 * 2}, lse{T * H * 4};

  CombineArgs args() {
    CombineArgs a;
    a.partial_out = TensorView::contiguous(partial_out.data(), DType::f32, {S, T, H, 512});
    a.partial_lse = TensorView::contiguous(partial_lse.data(), DType::f32, {S, T, H});
    a.sink = TensorView::contiguous(sink.data(), DType::f32, {H});
    a.out = TensorView::contiguous(out.data(), DType::bf16, {T, H, 512});
    a.lse = TensorView::contiguous(lse.data(), DType::f32, {T, H});
    return a;
  }
  bool untouched() const {
    return partial_out.untouched() && partial_lse.untouched() && sink.untouched() &&
           out.untouched() && lse.untouched();
  }
};

struct BadCombine {
  const char* name;
  std::function<void(CombineArgs&, CombineCase&)> mutate;
  std::vector<std::string> fragments;
};

const std::vector<BadCombine>& combine_cases() {
  using A = CombineArgs;
  using C = CombineCase;
  static const std::vector<BadCombine> all = {
      {"partial_out_rank", [](A& a, C&) { a.partial_out.rank = 3; },
       {"'partial_out'", "[S, T, h_q, d_v=512]", "rank 3"}},
      {"partial_out_dtype", [](A& a, C&) { a.partial_out.dtype = DType::i32; },
       {"'partial_out'", "dtype f32 or bf16", "got i32"}},
      {"partial_out_d_v", [](A& a, C&) { a.partial_out.shape[3] = 256; },
       {"'partial_out'", "d_v=512", "got [2, 4, 16, 256]"}},
      {"no_partials", [](A& a, C&) { a.partial_out.shape[0] = 0; },
       {"'partial_out'", "1 to 2^30 partials", "S=0"}},
      {"too_many_partials",
       [](A& a, C&) {
         a.partial_out.shape[0] = (int64_t{1} << 30) + 1;  // a broadcast: one partial's memory
         a.partial_out.stride[0] = 0;
         a.partial_lse.shape[0] = (int64_t{1} << 30) + 1;
         a.partial_lse.stride[0] = 0;
       },
       {"'partial_out'", "1 to 2^30 partials", "S=1073741825"}},
      {"too_many_heads", [](A& a, C&) { a.partial_out.shape[2] = 200; },
       {"'partial_out'", "h_q in 1..128", "h_q=200"}},
      {"partial_out_last_stride", [](A& a, C&) { a.partial_out.stride[3] = 2; },
       {"'partial_out'", "unit stride on the last dim", "strides [32768, 8192, 512, 2]"}},
      {"partial_out_null", [](A& a, C&) { a.partial_out.data = nullptr; },
       {"'partial_out'", "a data pointer", "null"}},
      {"partial_lse_heads", [](A& a, C&) { a.partial_lse.shape[2] = 8; },
       {"'partial_lse'", "[S=2, T=4, h_q=16] matching partial_out", "got [2, 4, 8]"}},
      {"partial_lse_dtype", [](A& a, C&) { a.partial_lse.dtype = DType::bf16; },
       {"'partial_lse'", "dtype f32", "got bf16"}},
      {"partial_lse_on_other_device", [](A& a, C&) { a.partial_lse.device = Device::cuda(0); },
       {"'partial_lse'", "device cpu", "got cuda:0"}},
      {"sink_heads", [](A& a, C&) { a.sink.shape[0] = 8; }, {"'sink'", "[h_q=16]", "got [8]"}},
      {"out_absent", [](A& a, C&) { a.out = TensorView{}; }, {"'out'", "d_v=512", "absent"}},
      {"out_d_v", [](A& a, C&) { a.out.shape[2] = 256; },
       {"'out'", "[T=4, h_q=16, d_v=512]", "got [4, 16, 256]"}},
      {"out_dtype", [](A& a, C&) { a.out.dtype = DType::f32; }, {"'out'", "dtype bf16", "got f32"}},
      {"out_self_overlap", [](A& a, C&) { a.out.stride[1] = 0; },
       {"'out'", "every element its own address", "strides [8192, 0, 1]"}},
      {"lse_tokens", [](A& a, C&) { a.lse.shape[0] = 2; },
       {"'lse'", "[T=4, h_q=16]", "got [2, 16]"}},
      {"lse_negative_rank", [](A& a, C&) { a.lse.rank = -2; },
       {"'lse'", "a rank >= 0 (0: absent)", "got rank -2"}},
      {"lse_self_overlap", [](A& a, C&) { a.lse.stride[0] = 0; },
       {"'lse'", "every element its own address", "strides [0, 1]"}},
      {"out_aliases_partial_out", [](A& a, C& c) { a.out.data = c.partial_out.data(); },
       {"'out'", "disjoint from 'partial_out'", "overlapping"}},
      {"lse_aliases_partial_lse", [](A& a, C& c) { a.lse.data = c.partial_lse.data(); },
       {"'lse'", "disjoint from 'partial_lse'", "overlapping"}},
  };
  return all;
}

class BadCombineTest : public ::testing::TestWithParam<BadCombine> {};

TEST_P(BadCombineTest, RejectedAndWritesNothing) {
  CombineCase c;
  CombineArgs args = c.args();
  GetParam().mutate(args, c);
  std::vector<std::string> fragments = GetParam().fragments;
  fragments.push_back("smla::combine: argument ");
  expect_rejected(combine(args), StatusCode::invalid_argument, fragments);
  EXPECT_TRUE(c.untouched()) << "a rejected combine wrote to a buffer";
}

INSTANTIATE_TEST_SUITE_P(Combine, BadCombineTest, ::testing::ValuesIn(combine_cases()),
                         [](const auto& info) { return std::string(info.param.name); });

// ---- quantize, dequantize, write_cache --------------------------------------------------

// N=8 rows of d_qk=576 and a bf16 pool of one block of 16 slots; slot ids for write_cache.
struct FormatCase {
  static constexpr int64_t N = 8, D = 576, BS = 16;
  // `slots` is a pool block large: a case that moves the pool onto it must overlap it alone.
  Poisoned rows{N * D * 2}, pool{BS * D * 2}, slots{BS * D * 2}, scales{BS * 4};
  TensorView rows_view;
  TensorView slots_view;
  KvPool pool_view;

  FormatCase() {
    rows_view = TensorView::contiguous(rows.data(), DType::bf16, {N, D});
    slots_view = TensorView::contiguous(slots.data(), DType::i32, {N});
    pool_view = KvPool::packed(KvFormat::bf16, pool.data(), 1, BS, D);
  }
  bool untouched() const {
    return rows.untouched() && pool.untouched() && slots.untouched() && scales.untouched();
  }
};

enum OpMask : unsigned { kQuantize = 1, kDequantize = 2, kWriteCache = 4, kAllFormatOps = 7 };

struct BadFormatCall {
  const char* name;
  std::function<void(FormatCase&)> mutate;
  std::vector<std::string> fragments;
  unsigned ops = kAllFormatOps;
};

const std::vector<BadFormatCall>& format_cases() {
  using C = FormatCase;
  static const std::vector<BadFormatCall> all = {
      // rows
      {"rows_dtype", [](C& c) { c.rows_view.dtype = DType::f32; },
       {"'rows'", "dtype bf16", "got f32"}},
      {"rows_rank", [](C& c) { c.rows_view.rank = 3; }, {"'rows'", "[N, d_qk]", "rank 3"}},
      {"rows_absent", [](C& c) { c.rows_view = TensorView{}; }, {"'rows'", "[N, d_qk]", "absent"}},
      {"rows_d_qk", [](C& c) { c.rows_view.shape[1] = 100; }, {"'rows'", "d_qk 576", "d_qk=100"}},
      {"rows_last_stride", [](C& c) { c.rows_view.stride[1] = 3; },
       {"'rows'", "unit stride on the last dim", "strides [576, 3]"}},
      {"rows_null", [](C& c) { c.rows_view.data = nullptr; }, {"'rows'", "a data pointer", "null"}},
      {"rows_misaligned",
       [](C& c) { c.rows_view.data = static_cast<char*>(c.rows.data()) + 1; },
       {"'rows'", "aligned to 2 bytes (bf16)", "address 0x"}},
      {"rows_more_than_slots", [](C& c) { c.rows_view.shape[0] = 17; },
       {"'rows'", "at most 16 rows", "N=17"}, kQuantize | kDequantize},
      {"rows_self_overlap", [](C& c) { c.rows_view.stride[0] = 0; },
       {"'rows'", "every element its own address", "strides [0, 1]"}, kDequantize},
      // pool
      {"pool_format_for_d_qk", [](C& c) { c.pool_view.format = KvFormat::fp8_ds_mla; },
       {"'pool.format'", "d_qk=576", "got fp8_ds_mla"}},
      {"pool_format_value", [](C& c) { c.pool_view.format = static_cast<KvFormat>(-2); },
       {"'pool.format'", "bf16, fp8_v32", "format value -2"}},
      {"pool_block_size", [](C& c) { c.pool_view.block_size = 0; },
       {"'pool.block_size'", "> 0", "got 0"}},
      {"pool_null_data", [](C& c) { c.pool_view.data = nullptr; },
       {"'pool.data'", "1 blocks of 16 slots", "got null"}},
      {"pool_block_stride", [](C& c) { c.pool_view.block_stride = 64; },
       {"'pool.block_stride'", ">= 18432", "got 64"}},
      {"pool_scales_without_int8", [](C& c) { c.pool_view.scales = c.scales.data(); },
       {"'pool.scales'", "only for int8_ds_mla", "format bf16"}},
      {"pool_on_other_device", [](C& c) { c.pool_view.device = Device::cuda(2); },
       {"'pool'", "device cpu", "got cuda:2"}},
      // aliasing, named from the side that is written
      {"pool_aliases_rows", [](C& c) { c.pool_view.data = c.rows.data(); },
       {"'pool'", "disjoint from 'rows'", "overlapping"}, kQuantize | kWriteCache},
      {"rows_alias_pool", [](C& c) { c.pool_view.data = c.rows.data(); },
       {"'rows'", "disjoint from 'pool'", "overlapping"}, kDequantize},
      {"pool_aliases_slots", [](C& c) { c.pool_view.data = c.slots.data(); },
       {"'pool'", "disjoint from 'slots'", "overlapping"}, kWriteCache},
      // slots
      {"slots_count", [](C& c) { c.slots_view.shape[0] = 7; },
       {"'slots'", "[N=8] with N matching rows", "got [7]"}, kWriteCache},
      {"slots_dtype", [](C& c) { c.slots_view.dtype = DType::f32; },
       {"'slots'", "dtype i32", "got f32"}, kWriteCache},
      {"slots_absent", [](C& c) { c.slots_view = TensorView{}; },
       {"'slots'", "[N=8]", "absent"}, kWriteCache},
      {"slots_on_other_device", [](C& c) { c.slots_view.device = Device::cuda(0); },
       {"'slots'", "device cpu", "got cuda:0"}, kWriteCache},
  };
  return all;
}

class BadFormatCallTest : public ::testing::TestWithParam<BadFormatCall> {};

TEST_P(BadFormatCallTest, RejectedAndWritesNothing) {
  const BadFormatCall& bad = GetParam();
  auto check = [&](const char* op, auto call) {
    SCOPED_TRACE(op);
    FormatCase c;
    bad.mutate(c);
    std::vector<std::string> fragments = bad.fragments;
    fragments.push_back(std::string(op) + ": argument ");
    expect_rejected(call(c), StatusCode::invalid_argument, fragments);
    EXPECT_TRUE(c.untouched()) << "a rejected " << op << " wrote to a buffer";
  };
  if (bad.ops & kQuantize)
    check("smla::quantize", [](FormatCase& c) { return quantize(c.rows_view, c.pool_view); });
  if (bad.ops & kDequantize)
    check("smla::dequantize", [](FormatCase& c) { return dequantize(c.pool_view, c.rows_view); });
  if (bad.ops & kWriteCache)
    check("smla::write_cache", [](FormatCase& c) {
      return write_cache(c.rows_view, c.slots_view, c.pool_view);
    });
}

INSTANTIATE_TEST_SUITE_P(FormatOps, BadFormatCallTest, ::testing::ValuesIn(format_cases()),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(BadFormatCall, Int8SplitScalesNeedTheirOwnStride) {
  FormatCase c;
  c.rows_view.shape[1] = 512;
  c.rows_view.stride[0] = 512;
  c.pool_view.format = KvFormat::int8_ds_mla;
  c.pool_view.block_stride = FormatCase::BS * 512;
  c.pool_view.scales = c.scales.data();
  c.pool_view.scale_block_stride = 8;
  expect_rejected(quantize(c.rows_view, c.pool_view), StatusCode::invalid_argument,
                  {"smla::quantize: argument 'pool.scale_block_stride'", ">= 64", "got 8"});
  EXPECT_TRUE(c.untouched());
}

TEST(BadFormatCall, CudaRowsWithoutAUsableGpuFailBeforeAnyWork) {
  if (cuda_device_count() > 0) GTEST_SKIP() << "a CUDA device is present";
  FormatCase c;
  c.rows_view.device = c.slots_view.device = c.pool_view.device = Device::cuda(0);
  const Status s = write_cache(c.rows_view, c.slots_view, c.pool_view);
  EXPECT_TRUE(is_no_gpu_code(s.code())) << status_code_name(s.code()) << ": " << s.message();
  EXPECT_NE(s.message().find("smla::write_cache"), std::string::npos) << s.message();
  EXPECT_TRUE(c.untouched());
}

}  // namespace
}  // namespace smla::test
