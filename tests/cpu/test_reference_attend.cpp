// smla::reference::attend against the naive float64 oracle (tests/common) over many random
// workloads, hand-made cases with known answers, and thread-count invariance.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "common/naive_attention.hpp"
#include "common/scoped_threads.hpp"
#include "common/tolerance.hpp"
#include "common/workload.hpp"
#include "formats/numeric.hpp"
#include "formats/token_codec.hpp"
#include "reference/reference.hpp"

namespace smla::test {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// Runs the reference on `p` (outputs poisoned first) and checks the call succeeded.
void run_reference(Problem& p) {
  p.poison_outputs();
  const Status status = reference::attend(p.args());
  ASSERT_TRUE(status.ok()) << status.message();
}

// K row of `slot` of the main pool as floats.
std::vector<float> k_row(Problem& p, int64_t slot) {
  const AttendArgs a = p.args();
  std::vector<uint16_t> bits(p.spec().d_qk);
  fmt::decode_token(a.kv, slot, p.spec().d_qk, bits.data());
  std::vector<float> row;
  for (uint16_t b : bits) row.push_back(fmt::bf16_to_float(b));
  return row;
}

// scale * q[t, h] . K[slot] in double.
double logit(Problem& p, int64_t t, int h, int64_t slot) {
  const AttendArgs a = p.args();
  const std::vector<float> k = k_row(p, slot);
  double dot = 0;
  for (int d = 0; d < p.spec().d_qk; ++d) {
    uint16_t q;
    std::memcpy(
        &q, static_cast<const char*>(a.q.data) + 2 * (t * a.q.stride[0] + h * a.q.stride[1] + d),
        2);
    dot += static_cast<double>(fmt::bf16_to_float(q)) * k[d];
  }
  return a.scale * dot;
}

// ---- random workloads vs the float64 oracle ----------------------------------------------

class ReferenceAttendRandom : public ::testing::TestWithParam<uint64_t> {};

TEST_P(ReferenceAttendRandom, MatchesNaiveFloat64) {
  const ProblemSpec spec = random_spec(GetParam(), 16 * 1024);
  SCOPED_TRACE(spec.describe());
  Problem p(spec);
  run_reference(p);
  EXPECT_TRUE(check_attend(p, naive_attend(p.args())));
}

INSTANTIATE_TEST_SUITE_P(Seeds, ReferenceAttendRandom, ::testing::Range<uint64_t>(1, 161));

// Every format in both pools, each block size, adversarial and poisoned: the combinations a
// random draw might miss.
struct FormatChoice {
  KvFormat format;
  bool int8_split;
};

const FormatChoice kFormatChoices[] = {{KvFormat::bf16, false},
                                       {KvFormat::fp8_v32, false},
                                       {KvFormat::fp8_ds_mla, false},
                                       {KvFormat::int8_ds_mla, false},
                                       {KvFormat::int8_ds_mla, true}};

// The d_qk both pools can hold (both pools of a call share q's d_qk), or 0 if none.
int shared_d_qk(const FormatChoice& a, const FormatChoice& b) {
  for (int d_qk : {576, 512})
    if (format_supports_d_qk(a.format, d_qk) && format_supports_d_qk(b.format, d_qk)) return d_qk;
  return 0;
}

// (main, extra) indices into kFormatChoices of every pair that some d_qk holds.
std::vector<std::pair<int, int>> format_pairs() {
  std::vector<std::pair<int, int>> pairs;
  for (int m = 0; m < 5; ++m)
    for (int x = 0; x < 5; ++x)
      if (shared_d_qk(kFormatChoices[m], kFormatChoices[x])) pairs.push_back({m, x});
  return pairs;
}

class ReferenceAttendFormats
    : public ::testing::TestWithParam<std::tuple<std::pair<int, int>, int32_t>> {};

TEST_P(ReferenceAttendFormats, EveryFormatPairAndBlockSize) {
  const auto [pair, block_size] = GetParam();
  const FormatChoice m = kFormatChoices[pair.first], x = kFormatChoices[pair.second];
  ProblemSpec spec;
  spec.d_qk = shared_d_qk(m, x);
  spec.T = 3;
  spec.h_q = 5;
  spec.k = 40;
  spec.k_x = 24;
  spec.extra = true;
  spec.kv = {m.format, block_size, 300, 32, m.int8_split};
  spec.extra_kv = {x.format, block_size == 1 ? 64 : 1, 70, 0, x.int8_split};
  spec.lengths = spec.extra_lengths = true;
  spec.sink = spec.sink_infinities = true;
  spec.adversarial = spec.poison_unused = spec.strided = true;
  spec.q_std = spec.kv_std = 0.5f;
  spec.seed = 1000 + pair.first * 100 + pair.second * 10 + block_size;
  SCOPED_TRACE(spec.describe());
  Problem p(spec);
  run_reference(p);
  EXPECT_TRUE(check_attend(p, naive_attend(p.args())));
}

INSTANTIATE_TEST_SUITE_P(Pairs, ReferenceAttendFormats,
                         ::testing::Combine(::testing::ValuesIn(format_pairs()),
                                            ::testing::Values(1, 64, 256)));

TEST(ReferenceAttend, AllHeadCountsAndBothDqk) {
  for (int d_qk : {576, 512})
    for (int h_q : {1, 2, 3, 4, 5, 7, 8, 11, 16, 22, 24, 31, 32, 57, 64, 100, 127, 128}) {
      ProblemSpec spec;
      spec.T = 2;
      spec.h_q = h_q;
      spec.d_qk = d_qk;
      spec.k = 12;
      spec.kv.min_slots = 32;
      spec.kv.format = d_qk == 576 ? KvFormat::fp8_v32 : KvFormat::fp8_ds_mla;
      spec.sink = true;
      spec.q_std = spec.kv_std = 1.0f;
      spec.seed = 7 * h_q + d_qk;
      SCOPED_TRACE(spec.describe());
      Problem p(spec);
      run_reference(p);
      EXPECT_TRUE(check_attend(p, naive_attend(p.args())));
    }
}

// Large logits (peaked softmax, |s| in the tens): lse relative error matters here.
TEST(ReferenceAttend, PeakedSoftmax) {
  ProblemSpec spec;
  spec.T = 3;
  spec.h_q = 8;
  spec.k = 256;
  spec.kv.min_slots = 512;
  spec.q_std = spec.kv_std = 2.0f;
  spec.lengths = true;
  Problem p(spec);
  run_reference(p);
  EXPECT_TRUE(check_attend(p, naive_attend(p.args())));
}

// DeepSeek-shaped selections (top-k 2048; V4's sliding window as the extra pool): many K
// tiles per item and long softmax sums.
TEST(ReferenceAttend, DeepSeekShapedSelections) {
  ProblemSpec v32;
  v32.T = 1;
  v32.h_q = 16;
  v32.d_qk = 576;
  v32.k = 2048;
  v32.kv = {KvFormat::fp8_v32, 64, 4096, 0, false};
  v32.lengths = true;
  v32.q_std = v32.kv_std = 0.5f;
  ProblemSpec v4 = v32;
  v4.d_qk = 512;
  v4.kv = {KvFormat::fp8_ds_mla, 64, 4096, 0, false};
  v4.extra = true;
  v4.k_x = 128;
  v4.extra_kv = {KvFormat::bf16, 256, 256, 0, false};
  v4.sink = true;
  for (const ProblemSpec& spec : {v32, v4}) {
    SCOPED_TRACE(spec.describe());
    Problem p(spec);
    run_reference(p);
    EXPECT_TRUE(check_attend(p, naive_attend(p.args())));
  }
}

// ---- hand-made cases with known answers --------------------------------------------------

// One token, two heads, a selection of width 4 into a bf16 pool of 64 slots; the tests set
// the indices (and maybe the sink) by hand.
ProblemSpec hand_spec(bool sink) {
  ProblemSpec spec;
  spec.T = 1;
  spec.h_q = 2;
  spec.k = 4;
  spec.kv.min_slots = 64;
  spec.sink = sink;
  spec.q_std = spec.kv_std = 1.0f;
  return spec;
}

void set_indices(Problem& p, std::initializer_list<int32_t> values) {
  int64_t i = 0;
  for (int32_t v : values) store(p.buffer(kIndices).bytes, i++, v);
}

TEST(ReferenceAttendKnown, SingleValidEntryCopiesTheVRow) {
  Problem p(hand_spec(false));
  set_indices(p, {-1, 5, std::numeric_limits<int32_t>::max(), 64});
  run_reference(p);
  const std::vector<float> v = k_row(p, 5), out = p.out(), lse = p.lse(), mx = p.max_logits();
  for (int h = 0; h < 2; ++h) {
    for (int d = 0; d < kDv; ++d) ASSERT_EQ(out[h * kDv + d], v[d]) << "h " << h << " d " << d;
    const double s = logit(p, 0, h, 5);
    EXPECT_NEAR(lse[h], s, 1e-6 + std::fabs(s) * 1e-6);
    EXPECT_NEAR(mx[h], s, 1e-6 + std::fabs(s) * 1e-6);
  }
}

TEST(ReferenceAttendKnown, DuplicatedEntryCountsTwice) {
  Problem p(hand_spec(false));
  set_indices(p, {9, std::numeric_limits<int32_t>::min(), 9, -64});
  run_reference(p);
  const std::vector<float> v = k_row(p, 9), out = p.out(), lse = p.lse();
  for (int h = 0; h < 2; ++h) {
    for (int d = 0; d < kDv; ++d) ASSERT_EQ(out[h * kDv + d], v[d]);
    const double s = logit(p, 0, h, 9);
    EXPECT_NEAR(lse[h], s + std::log(2.0), 1e-5);
  }
}

TEST(ReferenceAttendKnown, SinkPlusInfinityGivesZeroAndMinusInfinityNoEffect) {
  Problem with(hand_spec(true)), without(hand_spec(false));
  for (Problem* p : {&with, &without}) set_indices(*p, {3, 17, 40, 3});
  store(with.buffer(kSink).bytes, 0, kInf);
  store(with.buffer(kSink).bytes, 1, -kInf);
  run_reference(with);
  run_reference(without);
  const std::vector<float> a = with.out(), b = without.out();
  for (int d = 0; d < kDv; ++d) ASSERT_EQ(a[d], 0.0f) << d;              // head 0: +inf
  for (int d = 0; d < kDv; ++d) ASSERT_EQ(a[kDv + d], b[kDv + d]) << d;  // head 1: -inf
  // lse and max_logits never include the sink.
  EXPECT_EQ(with.lse(), without.lse());
  EXPECT_EQ(with.max_logits(), without.max_logits());
}

TEST(ReferenceAttendKnown, FiniteSinkScalesByTheSigmoid) {
  Problem with(hand_spec(true)), without(hand_spec(false));
  for (Problem* p : {&with, &without}) set_indices(*p, {1, 2, 3, 4});
  store(with.buffer(kSink).bytes, 0, 0.0f);
  store(with.buffer(kSink).bytes, 1, 2.5f);
  run_reference(with);
  run_reference(without);
  const std::vector<float> a = with.out(), b = without.out(), lse = without.lse();
  for (int h = 0; h < 2; ++h) {
    const double f = 1.0 / (1.0 + std::exp((h == 0 ? 0.0 : 2.5) - lse[h]));
    for (int d = 0; d < kDv; ++d) {
      const double ref = f * b[h * kDv + d];
      EXPECT_NEAR(a[h * kDv + d], ref, 1e-3 + std::fabs(ref) / 64) << h << " " << d;
    }
  }
}

TEST(ReferenceAttendKnown, NoValidEntryGivesZeroAndInfinities) {
  ProblemSpec spec = hand_spec(true);
  spec.lengths = true;
  Problem p(spec);
  set_indices(p, {-1, 64, 2, 3});
  store(p.buffer(kLengths).bytes, 0, int32_t{2});  // entries 2 and 3 are past the length
  store(p.buffer(kSink).bytes, 0, -kInf);
  run_reference(p);
  for (float x : p.out()) ASSERT_EQ(x, 0.0f);
  for (float x : p.lse()) EXPECT_EQ(x, kInf);
  for (float x : p.max_logits()) EXPECT_EQ(x, -kInf);
}

TEST(ReferenceAttendKnown, EmptyProblemsWriteNothing) {
  ProblemSpec spec;
  spec.T = 0;
  Problem empty_t(spec);
  run_reference(empty_t);
  EXPECT_TRUE(check_writes(empty_t));

  spec.T = 3;
  spec.k = 0;
  spec.extra = true;
  spec.k_x = 0;
  Problem empty_k(spec);
  run_reference(empty_k);
  EXPECT_TRUE(check_attend(empty_k, naive_attend(empty_k.args())));
  for (float x : empty_k.lse()) EXPECT_EQ(x, kInf);
}

// A NaN in a row that is selected but past the length, or not selected at all, must not
// reach the outputs; the same row inside the length must.
TEST(ReferenceAttendKnown, NaNRowsLeakOnlyWhenSelected) {
  ProblemSpec spec = hand_spec(false);
  spec.lengths = true;
  spec.kv.format = KvFormat::bf16;
  Problem p(spec);
  set_indices(p, {4, 6, 8, 10});
  store(p.buffer(kLengths).bytes, 0, int32_t{3});
  // Slot 10 of the packed bf16 pool (block size 64): NaN everywhere.
  for (int d = 0; d < spec.d_qk; ++d)
    store(p.buffer(kKv).bytes, 10 * spec.d_qk + d, uint16_t{0x7FC0});
  run_reference(p);
  for (float x : p.out()) ASSERT_FALSE(std::isnan(x));
  store(p.buffer(kLengths).bytes, 0, int32_t{4});
  run_reference(p);
  for (float x : p.out()) ASSERT_TRUE(std::isnan(x));
}

// ---- determinism -------------------------------------------------------------------------

TEST(ReferenceAttend, BitwiseTheSameForAnyThreadCount) {
  for (uint64_t seed : {3, 11, 29}) {
    ProblemSpec spec = random_spec(seed, 40 * 1024);
    spec.T = 5;
    spec.h_q = 37;
    SCOPED_TRACE(spec.describe());
    Problem first(spec);
    {
      ScopedThreads one(1);
      run_reference(first);
    }
    for (int threads : {2, 3, 8}) {
      ScopedThreads scoped(threads);
      Problem again(spec);
      run_reference(again);
      EXPECT_TRUE(check_outputs_identical(first, again)) << threads << " threads";
    }
  }
}

}  // namespace
}  // namespace smla::test
