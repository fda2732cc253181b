// smla::reference::combine: attend over parts of a selection then combine equals attend over
// the whole (within SPEC's tolerances, against the float64 oracle), plus the edge cases of
// include/smla/ops.hpp (empty partials, the sink applied once).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "common/combine_workload.hpp"
#include "common/naive_attention.hpp"
#include "common/naive_combine.hpp"
#include "common/scoped_threads.hpp"
#include "common/tolerance.hpp"
#include "common/workload.hpp"
#include "formats/numeric.hpp"
#include "reference/reference.hpp"

namespace smla::test {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// Runs the reference combine on `c` (outputs poisoned first) and checks the call succeeded.
void run_combine(CombineProblem& c) {
  c.poison_outputs();
  const Status status = reference::combine(c.args());
  ASSERT_TRUE(status.ok()) << status.message();
}

// Sets element d of row `row` ([T * h_q] flat) of partial i, in the partials' dtype.
void set_partial_out(CombineProblem& c, int64_t i, int64_t row, int d, float value) {
  const int64_t at = (i * c.spec().T * c.spec().h_q + row) * kDv + d;
  if (c.spec().partial_dtype == DType::bf16)
    store(c.buffer(kPartialOut).bytes, at, fmt::float_to_bf16_rne(value));
  else
    store(c.buffer(kPartialOut).bytes, at, value);
}

void set_partial_lse(CombineProblem& c, std::initializer_list<float> values) {
  int64_t i = 0;
  for (float v : values) store(c.buffer(kPartialLse).bytes, i++, v);
}

// Copies attend's outputs (out, lse) in `problem` into partial i of `c`.
void store_partial(const Problem& problem, CombineProblem& c, int64_t i) {
  const std::vector<float> out = problem.out(), lse = problem.lse();
  const int64_t rows = c.spec().T * c.spec().h_q;
  for (int64_t row = 0; row < rows; ++row) {
    store(c.buffer(kPartialLse).bytes, i * rows + row, lse[row]);
    for (int d = 0; d < kDv; ++d) set_partial_out(c, i, row, d, out[row * kDv + d]);
  }
}

// Runs the reference attend with the given arguments into `problem`'s output buffers.
void attend_into(Problem& problem, const AttendArgs& args) {
  problem.poison_outputs();
  const Status status = reference::attend(args);
  ASSERT_TRUE(status.ok()) << status.message();
}

// The combine problem for S partials of `spec`'s rows; the test fills the partials.
CombineSpec partials_for(const ProblemSpec& spec, int64_t S, DType dtype) {
  CombineSpec c;
  c.S = S;
  c.T = spec.T;
  c.h_q = spec.h_q;
  c.partial_dtype = dtype;
  c.sink = spec.sink;
  return c;
}

// ---- random partials vs the float64 oracle -----------------------------------------------

class ReferenceCombineRandom : public ::testing::TestWithParam<uint64_t> {};

TEST_P(ReferenceCombineRandom, MatchesNaiveFloat64) {
  const uint64_t seed = GetParam();
  CombineSpec spec;
  spec.seed = seed;
  spec.S = static_cast<int64_t>(seed % 5);  // 0..4 partials
  spec.T = 1 + static_cast<int64_t>(seed % 3);
  spec.h_q = static_cast<int>(1 + seed * 7 % 40);
  spec.partial_dtype = seed % 2 ? DType::f32 : DType::bf16;
  spec.sink = seed % 3 != 0;
  spec.sink_infinities = seed % 4 == 1;
  spec.empty_partials = seed % 5 >= 2;
  spec.with_lse = seed % 7 != 3;
  spec.strided = seed % 2 == 0;
  spec.lse_spread = 1.0 + static_cast<double>(seed % 4) * 10;
  SCOPED_TRACE(spec.describe());
  CombineProblem c(spec);
  run_combine(c);
  EXPECT_TRUE(check_combine(c, naive_combine(c.args())));
}

INSTANTIATE_TEST_SUITE_P(Seeds, ReferenceCombineRandom, ::testing::Range<uint64_t>(1, 61));

// ---- split selections --------------------------------------------------------------------

class ReferenceCombineSplit : public ::testing::TestWithParam<std::tuple<uint64_t, DType>> {};

// The main and the extra pool as two partials (each attended without the sink), combined
// with the sink: the whole attend's answer.
TEST_P(ReferenceCombineSplit, MainAndExtraPoolsCombineToTheWhole) {
  const auto [seed, dtype] = GetParam();
  ProblemSpec spec = random_spec(seed, 16 * 1024);
  spec.extra = true;
  spec.k_x = std::max<int64_t>(spec.k_x, 9);
  spec.with_lse = true;
  // attend's partial outputs are bf16: with V ~ 0.1 their rounding (2^-9 relative) stays well
  // inside out's 1e-3 absolute tolerance however the two partials cancel.
  spec.kv_std = 0.1f;
  SCOPED_TRACE(spec.describe());
  Problem problem(spec);
  const AttendArgs whole = problem.args();
  const AttendResult ref = naive_attend(whole);

  CombineProblem parts(partials_for(spec, 2, dtype));
  AttendArgs main_only = whole;
  main_only.extra_kv = {};
  main_only.extra_indices = main_only.extra_lengths = main_only.sink = {};
  attend_into(problem, main_only);
  store_partial(problem, parts, 0);
  AttendArgs extra_only = main_only;
  extra_only.kv = whole.extra_kv;
  extra_only.indices = whole.extra_indices;
  extra_only.lengths = whole.extra_lengths;
  attend_into(problem, extra_only);
  store_partial(problem, parts, 1);
  if (spec.sink) parts.buffer(kCombineSink).bytes = problem.buffer(kSink).bytes;

  run_combine(parts);
  EXPECT_TRUE(check_combine(parts, ref));
}

INSTANTIATE_TEST_SUITE_P(Seeds, ReferenceCombineSplit,
                         ::testing::Combine(::testing::Range<uint64_t>(1, 25),
                                            ::testing::Values(DType::f32, DType::bf16)));

// Halves and thirds of one selection (index views into the same [T, k] buffer).
TEST(ReferenceCombine, SelectionPiecesCombineToTheWhole) {
  ProblemSpec spec;
  spec.T = 4;
  spec.h_q = 22;
  spec.d_qk = 512;
  spec.k = 96;
  spec.kv = {KvFormat::fp8_ds_mla, 64, 200, 0, false};
  spec.adversarial = spec.poison_unused = true;
  // Peaked logits from q and the scale, with V ~ 0.1 for the reason given above.
  spec.q_std = 1.0f;
  spec.scale = 0.5f;
  Problem problem(spec);
  const AttendArgs whole = problem.args();
  const AttendResult ref = naive_attend(whole);
  for (int64_t pieces : {1, 2, 3, 5}) {
    CombineProblem parts(partials_for(spec, pieces, DType::f32));
    for (int64_t i = 0; i < pieces; ++i) {
      const int64_t begin = spec.k * i / pieces, end = spec.k * (i + 1) / pieces;
      AttendArgs piece = whole;
      piece.indices.data = static_cast<int32_t*>(whole.indices.data) + begin;
      piece.indices.shape[1] = end - begin;
      attend_into(problem, piece);
      store_partial(problem, parts, i);
    }
    run_combine(parts);
    EXPECT_TRUE(check_combine(parts, ref)) << pieces << " pieces";
  }
}

// ---- edge cases --------------------------------------------------------------------------

// S partials of T = 1 token and h_q heads, no sink unless asked; the tests fill the partials.
CombineSpec small_spec(int64_t S, int h_q, DType dtype, bool sink) {
  CombineSpec spec;
  spec.S = S;
  spec.T = 1;
  spec.h_q = h_q;
  spec.partial_dtype = dtype;
  spec.sink = sink;
  return spec;
}

float bf16_rounded(float x) { return fmt::bf16_to_float(fmt::float_to_bf16_rne(x)); }

TEST(ReferenceCombine, EmptyPartialsHaveNoWeightEvenWithNaNOutputs) {
  // Head 0: partial 1 real, partial 0 +inf, partial 2 -inf. Head 1: every partial empty.
  CombineProblem c(small_spec(3, 2, DType::f32, false));
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t row = 0; row < 2; ++row)
      for (int d = 0; d < kDv; ++d)
        set_partial_out(c, i, row, d, i == 1 && row == 0 ? 0.25f * d : kNaN);
  set_partial_lse(c, {kInf, kInf, 1.5f, kInf, -kInf, -kInf});
  run_combine(c);
  const std::vector<float> out = c.out(), lse = c.lse();
  for (int d = 0; d < kDv; ++d) {
    ASSERT_EQ(out[d], bf16_rounded(0.25f * d)) << d;
    ASSERT_EQ(out[kDv + d], 0.0f) << d;
  }
  EXPECT_EQ(lse[0], 1.5f);
  EXPECT_EQ(lse[1], kInf);
}

TEST(ReferenceCombine, NoPartialsGiveZeroAndInfiniteLse) {
  CombineSpec spec = small_spec(0, 3, DType::bf16, false);
  spec.T = 2;
  CombineProblem c(spec);
  run_combine(c);
  EXPECT_TRUE(check_writes(c));
  for (float x : c.out()) ASSERT_EQ(x, 0.0f);
  for (float x : c.lse()) EXPECT_EQ(x, kInf);
}

TEST(ReferenceCombine, TwoEqualPartialsAddLn2AndKeepTheOutput) {
  CombineProblem c(small_spec(2, 1, DType::bf16, false));
  for (int64_t i = 0; i < 2; ++i)
    for (int d = 0; d < kDv; ++d) set_partial_out(c, i, 0, d, std::sin(0.1f * d));
  set_partial_lse(c, {-3.0f, -3.0f});
  run_combine(c);
  const std::vector<float> out = c.out();
  for (int d = 0; d < kDv; ++d) ASSERT_EQ(out[d], bf16_rounded(std::sin(0.1f * d))) << d;
  EXPECT_NEAR(c.lse()[0], -3.0 + std::log(2.0), 1e-6);
}

TEST(ReferenceCombine, SinkIsAppliedOnceToTheMergedResult) {
  CombineProblem c(small_spec(2, 3, DType::f32, true));
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t row = 0; row < 3; ++row)
      for (int d = 0; d < kDv; ++d) set_partial_out(c, i, row, d, i == 0 ? 1.0f : -0.5f);
  set_partial_lse(c, {0.5f, 0.5f, 0.5f, 2.0f, 2.0f, 2.0f});
  int64_t h = 0;
  for (float sink : {kInf, -kInf, 1.0f}) store(c.buffer(kCombineSink).bytes, h++, sink);
  run_combine(c);
  const double L = std::log(std::exp(0.5) + std::exp(2.0));
  const double unsunk = (std::exp(0.5) * 1.0 + std::exp(2.0) * -0.5) / std::exp(L);
  const double expected[] = {0.0, unsunk, unsunk / (1.0 + std::exp(1.0 - L))};
  const std::vector<float> out = c.out(), lse = c.lse();
  for (int64_t row = 0; row < 3; ++row) {
    EXPECT_NEAR(lse[row], L, 1e-6);  // lse never includes the sink
    for (int d = 0; d < kDv; ++d)
      ASSERT_NEAR(out[row * kDv + d], expected[row], 1e-3 + std::fabs(expected[row]) / 64)
          << row << " " << d;
  }
  for (int d = 0; d < kDv; ++d) ASSERT_EQ(out[d], 0.0f);  // sink = +inf: exactly 0
}

TEST(ReferenceCombine, BitwiseTheSameForAnyThreadCount) {
  CombineSpec spec;
  spec.S = 4;
  spec.T = 9;
  spec.h_q = 24;
  spec.sink = spec.empty_partials = true;
  CombineProblem first(spec), again(spec);
  {
    ScopedThreads one(1);
    run_combine(first);
  }
  {
    ScopedThreads three(3);
    run_combine(again);
  }
  for (int id : {kCombineOut, kCombineLse})
    EXPECT_TRUE(
        check_bitwise_equal(first.buffer(id).name, first.buffer(id).bytes, again.buffer(id).bytes));
}

}  // namespace
}  // namespace smla::test
