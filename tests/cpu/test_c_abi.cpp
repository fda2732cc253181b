// The C ABI (smla.h): layouts and enums agree with the C++ API, a good call goes through,
// bad calls return the C++ code and leave their message in smla_last_error() on the calling
// thread only, and a failed call writes nothing.
#include "smla/smla.h"

#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "test_bad_input_harness.hpp"

namespace smla::test {
namespace {

static_assert(SMLA_MAX_RANK == kMaxRank);
static_assert(static_cast<int>(SMLA_INTERNAL) == static_cast<int>(StatusCode::internal));
static_assert(static_cast<int>(SMLA_I8) == static_cast<int>(DType::i8));
static_assert(static_cast<int>(SMLA_FORMAT_INT8_DS_MLA) ==
              static_cast<int>(KvFormat::int8_ds_mla));
static_assert(static_cast<int>(SMLA_CUDA) == static_cast<int>(DeviceKind::cuda));

smla_tensor c_tensor(void* data, smla_dtype dtype, std::initializer_list<int64_t> shape) {
  const TensorView v = TensorView::contiguous(data, static_cast<DType>(dtype), shape);
  smla_tensor t{};
  t.data = v.data;
  t.dtype = dtype;
  t.rank = v.rank;
  std::memcpy(t.shape, v.shape, sizeof t.shape);
  std::memcpy(t.stride, v.stride, sizeof t.stride);
  t.device_kind = SMLA_CPU;
  return t;
}

smla_pool c_bf16_pool(void* data, int64_t num_blocks, int32_t block_size, int d_qk) {
  smla_pool p{};
  p.format = SMLA_FORMAT_BF16;
  p.data = data;
  p.num_blocks = num_blocks;
  p.block_size = block_size;
  p.block_stride = int64_t{block_size} * d_qk * 2;
  p.device_kind = SMLA_CPU;
  return p;
}

// The attend case of the C++ suite, as C structs.
smla_attend_args c_attend(AttendCase& c) {
  constexpr int64_t T = AttendCase::T, H = AttendCase::H, D = AttendCase::D;
  smla_attend_args a{};
  a.q = c_tensor(c.q.data(), SMLA_BF16, {T, H, D});
  a.kv = c_bf16_pool(c.kv.data(), 2, AttendCase::BS, D);
  a.indices = c_tensor(c.indices.data(), SMLA_I32, {T, AttendCase::K});
  a.scale = 0.04f;
  a.out = c_tensor(c.out.data(), SMLA_BF16, {T, H, 512});
  a.lse = c_tensor(c.lse.data(), SMLA_F32, {T, H});
  return a;
}

TEST(CAbi, NamesAndVersion) {
  EXPECT_STREQ(smla_status_name(SMLA_OK), "ok");
  EXPECT_STREQ(smla_status_name(SMLA_INVALID_ARGUMENT), "invalid_argument");
  EXPECT_STREQ(smla_status_name(SMLA_NOT_BUILT), "not_built");
  EXPECT_STREQ(smla_status_name(static_cast<smla_status_code>(77)), "unknown");
  EXPECT_STREQ(smla_version(), version());
  EXPECT_GT(std::strlen(smla_version()), 0u);
}

TEST(CAbi, GoodSizeQueryAndPlan) {
  AttendCase c;
  smla_attend_args a = c_attend(c);
  size_t bytes = 1;
  ASSERT_EQ(smla_attend_workspace_size(&a, &bytes), SMLA_OK) << smla_last_error();
  EXPECT_EQ(bytes, 0u);
  bytes = 1;
  ASSERT_EQ(smla_plan_size(&a, &bytes), SMLA_OK) << smla_last_error();
  EXPECT_EQ(bytes, 0u);
  smla_plan plan{};
  ASSERT_EQ(smla_make_plan(&a, &plan, nullptr), SMLA_OK) << smla_last_error();
  EXPECT_NE(plan.key, 0u);
}

// Needs the CPU reference's quantize/dequantize: the bf16 format stores rows unchanged.
TEST(CAbi, GoodQuantizeRoundTrip) {
  constexpr int64_t N = 4, D = 512;
  std::vector<uint16_t> rows(N * D), back(N * D, 0);
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<uint16_t>(0x4000 + i % 97);
  Poisoned pool(N * D * 2);
  const smla_tensor r = c_tensor(rows.data(), SMLA_BF16, {N, D});
  const smla_tensor b = c_tensor(back.data(), SMLA_BF16, {N, D});
  const smla_pool p = c_bf16_pool(pool.data(), 1, N, D);
  ASSERT_EQ(smla_quantize(&r, &p, nullptr), SMLA_OK) << smla_last_error();
  ASSERT_EQ(smla_dequantize(&p, &b, nullptr), SMLA_OK) << smla_last_error();
  EXPECT_EQ(back, rows);
}

TEST(CAbi, BadAttendSetsLastErrorAndWritesNothing) {
  AttendCase c;
  smla_attend_args a = c_attend(c);
  a.indices.shape[0] = 5;
  EXPECT_EQ(smla_attend(&a, nullptr, 0, nullptr, nullptr), SMLA_INVALID_ARGUMENT);
  const std::string msg = smla_last_error();
  EXPECT_NE(msg.find("smla::attend: argument 'indices'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[T=4, k]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("got [5, 8]"), std::string::npos) << msg;
  EXPECT_TRUE(c.untouched());
}

TEST(CAbi, OutOfEnumValuesFromCAreRejected) {
  AttendCase c;
  smla_attend_args a = c_attend(c);
  a.q.dtype = static_cast<smla_dtype>(9);
  EXPECT_EQ(smla_attend(&a, nullptr, 0, nullptr, nullptr), SMLA_INVALID_ARGUMENT);
  EXPECT_NE(std::string(smla_last_error()).find("unknown (9)"), std::string::npos)
      << smla_last_error();

  a = c_attend(c);
  a.kv.format = static_cast<smla_format>(12);
  EXPECT_EQ(smla_attend(&a, nullptr, 0, nullptr, nullptr), SMLA_INVALID_ARGUMENT);
  EXPECT_NE(std::string(smla_last_error()).find("'kv.format'"), std::string::npos)
      << smla_last_error();

  a = c_attend(c);
  a.out.device_kind = static_cast<smla_device_kind>(5);
  EXPECT_EQ(smla_attend(&a, nullptr, 0, nullptr, nullptr), SMLA_INVALID_ARGUMENT);
  EXPECT_NE(std::string(smla_last_error()).find("'out'"), std::string::npos)
      << smla_last_error();
  EXPECT_TRUE(c.untouched());
}

TEST(CAbi, NullArgumentPointers) {
  size_t bytes = 0;
  smla_plan plan{};
  EXPECT_EQ(smla_attend(nullptr, nullptr, 0, nullptr, nullptr), SMLA_INVALID_ARGUMENT);
  EXPECT_NE(std::string(smla_last_error()).find("smla::attend: argument 'args'"),
            std::string::npos);
  EXPECT_EQ(smla_plan_size(nullptr, &bytes), SMLA_INVALID_ARGUMENT);
  EXPECT_EQ(smla_make_plan(nullptr, &plan, nullptr), SMLA_INVALID_ARGUMENT);
  EXPECT_EQ(smla_attend_workspace_size(nullptr, &bytes), SMLA_INVALID_ARGUMENT);
  EXPECT_EQ(smla_combine(nullptr, nullptr), SMLA_INVALID_ARGUMENT);
  EXPECT_EQ(smla_quantize(nullptr, nullptr, nullptr), SMLA_INVALID_ARGUMENT);
  EXPECT_NE(std::string(smla_last_error()).find("smla::quantize: argument 'rows'"),
            std::string::npos);
  EXPECT_EQ(smla_dequantize(nullptr, nullptr, nullptr), SMLA_INVALID_ARGUMENT);
  EXPECT_EQ(smla_write_cache(nullptr, nullptr, nullptr, nullptr), SMLA_INVALID_ARGUMENT);

  AttendCase c;
  const smla_attend_args a = c_attend(c);
  EXPECT_EQ(smla_plan_size(&a, nullptr), SMLA_INVALID_ARGUMENT);
  EXPECT_NE(std::string(smla_last_error()).find("smla::plan_size: argument 'bytes'"),
            std::string::npos)
      << smla_last_error();
}

TEST(CAbi, BadCombineQuantizeWriteCache) {
  smla_combine_args comb{};  // partial_out absent
  EXPECT_EQ(smla_combine(&comb, nullptr), SMLA_INVALID_ARGUMENT);
  EXPECT_NE(std::string(smla_last_error()).find("smla::combine: argument 'partial_out'"),
            std::string::npos)
      << smla_last_error();

  constexpr int64_t N = 4, D = 576;
  Poisoned rows(N * D * 2), pool(N * D * 2), slots(N * 4);
  const smla_tensor r = c_tensor(rows.data(), SMLA_BF16, {N, D});
  smla_pool p = c_bf16_pool(pool.data(), 1, N, D);
  p.format = SMLA_FORMAT_FP8_DS_MLA;  // a d_qk 512 format under d_qk 576 rows
  EXPECT_EQ(smla_quantize(&r, &p, nullptr), SMLA_INVALID_ARGUMENT);
  std::string msg = smla_last_error();
  EXPECT_NE(msg.find("smla::quantize: argument 'pool.format'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("got fp8_ds_mla"), std::string::npos) << msg;

  p = c_bf16_pool(pool.data(), 1, N, D);
  const smla_tensor s = c_tensor(slots.data(), SMLA_I32, {N - 1});
  EXPECT_EQ(smla_write_cache(&r, &s, &p, nullptr), SMLA_INVALID_ARGUMENT);
  msg = smla_last_error();
  EXPECT_NE(msg.find("smla::write_cache: argument 'slots'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("got [3]"), std::string::npos) << msg;
  EXPECT_TRUE(rows.untouched() && pool.untouched() && slots.untouched());
}

TEST(CAbi, FailedMakePlanLeavesThePlanAlone) {
  AttendCase c;
  smla_attend_args a = c_attend(c);
  a.scale = std::numeric_limits<float>::infinity();
  smla_plan plan{nullptr, 0, 42, 7};
  EXPECT_EQ(smla_make_plan(&a, &plan, nullptr), SMLA_INVALID_ARGUMENT);
  EXPECT_EQ(plan.key, 42u);
  EXPECT_EQ(plan.strategy, 7);
}

TEST(CAbi, LastErrorIsPerThread) {
  AttendCase c;
  smla_attend_args a = c_attend(c);
  a.scale = std::numeric_limits<float>::quiet_NaN();
  ASSERT_EQ(smla_attend(&a, nullptr, 0, nullptr, nullptr), SMLA_INVALID_ARGUMENT);
  const std::string mine = smla_last_error();
  std::string theirs = "unset";
  std::thread([&] { theirs = smla_last_error(); }).join();
  EXPECT_EQ(theirs, "") << "another thread saw this thread's error";
  EXPECT_EQ(std::string(smla_last_error()), mine);

  // A later successful call keeps the last error readable.
  size_t bytes = 0;
  a = c_attend(c);
  ASSERT_EQ(smla_attend_workspace_size(&a, &bytes), SMLA_OK);
  EXPECT_EQ(std::string(smla_last_error()), mine);
}

}  // namespace
}  // namespace smla::test
