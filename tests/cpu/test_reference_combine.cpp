// smla::reference::combine: attend over parts of a selection then combine equals attend over
// the whole (within SPEC's tolerances, against the float64 oracle), plus the edge cases of
// include/smla/ops.hpp (empty partials, the sink applied once).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "common/naive_attention.hpp"
#include "common/tolerance.hpp"
#include "common/workload.hpp"
#include "formats/numeric.hpp"
#include "reference/reference.hpp"

namespace smla::test {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// S partial results of [T, h_q] rows, owned, with f32 or bf16 partial outputs.
struct Partials {
  int64_t S, T, h_q;
  DType dtype;
  std::vector<uint8_t> out;  // [S, T, h_q, 512]
  std::vector<float> lse;    // [S, T, h_q]

  Partials(int64_t s, int64_t t, int64_t h, DType d)
      : S(s), T(t), h_q(h), dtype(d), out(s * t * h * kDv * dtype_size(d)), lse(s * t * h) {}

  TensorView out_view() {
    return TensorView::contiguous(out.data(), dtype, {S, T, h_q, kDv});
  }
  TensorView lse_view() { return TensorView::contiguous(lse.data(), DType::f32, {S, T, h_q}); }
  void set_out(int64_t i, int64_t row, int64_t d, float value) {
    const int64_t at = (i * T * h_q + row) * kDv + d;
    if (dtype == DType::f32) {
      std::memcpy(out.data() + 4 * at, &value, 4);
    } else {
      const uint16_t bits = fmt::float_to_bf16_rne(value);
      std::memcpy(out.data() + 2 * at, &bits, 2);
    }
  }
};

// Output of one combine: out [T, h_q, 512] bf16 and lse [T, h_q], poisoned beforehand.
struct Merged {
  std::vector<uint16_t> out;
  std::vector<float> lse;
  Merged(int64_t T, int64_t h_q) : out(T * h_q * kDv, 0xFFFF), lse(T * h_q, kNaN) {}
  std::vector<float> out_values() const {
    std::vector<float> v;
    for (uint16_t b : out) v.push_back(fmt::bf16_to_float(b));
    return v;
  }
};

Merged run_combine(Partials& p, const std::vector<float>* sink) {
  Merged m(p.T, p.h_q);
  CombineArgs a;
  a.partial_out = p.out_view();
  a.partial_lse = p.lse_view();
  if (sink)
    a.sink = TensorView::contiguous(const_cast<float*>(sink->data()), DType::f32, {p.h_q});
  a.out = TensorView::contiguous(m.out.data(), DType::bf16, {p.T, p.h_q, kDv});
  a.lse = TensorView::contiguous(m.lse.data(), DType::f32, {p.T, p.h_q});
  const Status status = reference::combine(a);
  EXPECT_TRUE(status.ok()) << status.message();
  return m;
}

// Copies attend's outputs (out, lse) of `args` into partial i.
void store_partial(const Problem& problem, Partials& p, int64_t i) {
  const std::vector<float> out = problem.out(), lse = problem.lse();
  for (int64_t row = 0; row < p.T * p.h_q; ++row) {
    p.lse[i * p.T * p.h_q + row] = lse[row];
    for (int d = 0; d < kDv; ++d) p.set_out(i, row, d, out[row * kDv + d]);
  }
}

// Runs the reference attend with the given arguments into `problem`'s output buffers.
void attend_into(Problem& problem, const AttendArgs& args) {
  problem.poison_outputs();
  const Status status = reference::attend(args);
  ASSERT_TRUE(status.ok()) << status.message();
}

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

  Partials parts(2, spec.T, spec.h_q, dtype);
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

  std::vector<float> sink(spec.sink ? spec.h_q : 0);
  if (spec.sink) std::memcpy(sink.data(), whole.sink.data, sink.size() * sizeof(float));
  const Merged merged = run_combine(parts, spec.sink ? &sink : nullptr);
  EXPECT_TRUE(check_out(merged.out_values(), ref.out, {spec.T, spec.h_q, kDv}));
  EXPECT_TRUE(check_stat("lse", merged.lse, ref.lse, {spec.T, spec.h_q}));
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
    Partials parts(pieces, spec.T, spec.h_q, DType::f32);
    for (int64_t i = 0; i < pieces; ++i) {
      const int64_t begin = spec.k * i / pieces, end = spec.k * (i + 1) / pieces;
      AttendArgs piece = whole;
      piece.indices.data = static_cast<int32_t*>(whole.indices.data) + begin;
      piece.indices.shape[1] = end - begin;
      attend_into(problem, piece);
      store_partial(problem, parts, i);
    }
    const Merged merged = run_combine(parts, nullptr);
    EXPECT_TRUE(check_out(merged.out_values(), ref.out, {spec.T, spec.h_q, kDv})) << pieces;
    EXPECT_TRUE(check_stat("lse", merged.lse, ref.lse, {spec.T, spec.h_q})) << pieces;
  }
}

// ---- edge cases --------------------------------------------------------------------------

TEST(ReferenceCombine, EmptyPartialsHaveNoWeightEvenWithNaNOutputs) {
  // Row 0: partial 1 real, partial 0 +inf, partial 2 -inf. Row 1: every partial empty.
  Partials p(3, 1, 2, DType::f32);
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t row = 0; row < 2; ++row)
      for (int d = 0; d < kDv; ++d) p.set_out(i, row, d, i == 1 && row == 0 ? 0.25f * d : kNaN);
  p.lse = {kInf, kInf, 1.5f, kInf, -kInf, -kInf};
  const Merged m = run_combine(p, nullptr);
  const std::vector<float> out = m.out_values();
  for (int d = 0; d < kDv; ++d) {
    ASSERT_EQ(out[d], fmt::bf16_to_float(fmt::float_to_bf16_rne(0.25f * d))) << d;
    ASSERT_EQ(out[kDv + d], 0.0f) << d;
  }
  EXPECT_EQ(m.lse[0], 1.5f);
  EXPECT_EQ(m.lse[1], kInf);
}

TEST(ReferenceCombine, NoPartialsGiveZeroAndInfiniteLse) {
  Partials p(0, 2, 3, DType::bf16);
  const Merged m = run_combine(p, nullptr);
  for (float x : m.out_values()) ASSERT_EQ(x, 0.0f);
  for (float x : m.lse) EXPECT_EQ(x, kInf);
}

TEST(ReferenceCombine, TwoEqualPartialsAddLn2AndKeepTheOutput) {
  Partials p(2, 1, 1, DType::bf16);
  for (int64_t i = 0; i < 2; ++i)
    for (int d = 0; d < kDv; ++d) p.set_out(i, 0, d, std::sin(0.1f * d));
  p.lse = {-3.0f, -3.0f};
  const Merged m = run_combine(p, nullptr);
  const std::vector<float> out = m.out_values();
  for (int d = 0; d < kDv; ++d)
    ASSERT_EQ(out[d], fmt::bf16_to_float(fmt::float_to_bf16_rne(std::sin(0.1f * d))));
  EXPECT_NEAR(m.lse[0], -3.0 + std::log(2.0), 1e-6);
}

TEST(ReferenceCombine, SinkIsAppliedOnceToTheMergedResult) {
  Partials p(2, 1, 3, DType::f32);
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t row = 0; row < 3; ++row)
      for (int d = 0; d < kDv; ++d) p.set_out(i, row, d, i == 0 ? 1.0f : -0.5f);
  p.lse = {0.5f, 0.5f, 0.5f, 2.0f, 2.0f, 2.0f};
  const std::vector<float> sink = {kInf, -kInf, 1.0f};
  const Merged m = run_combine(p, &sink);
  const double L = std::log(std::exp(0.5) + std::exp(2.0));
  const double unsunk = (std::exp(0.5) * 1.0 + std::exp(2.0) * -0.5) / std::exp(L);
  const double expected[] = {0.0, unsunk, unsunk / (1.0 + std::exp(1.0 - L))};
  const std::vector<float> out = m.out_values();
  for (int64_t row = 0; row < 3; ++row) {
    EXPECT_NEAR(m.lse[row], L, 1e-6);  // lse never includes the sink
    for (int d = 0; d < kDv; ++d)
      ASSERT_NEAR(out[row * kDv + d], expected[row], 1e-3 + std::fabs(expected[row]) / 64)
          << row << " " << d;
  }
  for (int d = 0; d < kDv; ++d) ASSERT_EQ(out[d], 0.0f);
}

}  // namespace
}  // namespace smla::test
