// The shared test toolkit checks itself: the tolerance predicates reject what SPEC rejects,
// the poison checks catch unwritten elements and stray writes, and a Problem is the same
// workload for the same seed.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "common/naive_attention.hpp"
#include "common/tolerance.hpp"
#include "common/workload.hpp"
#include "reference/reference.hpp"

namespace smla::test {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

TEST(Toolkit, OutToleranceIsSpecs) {
  // 512 elements, so one element at the edge of its tolerance keeps 1 - cos tiny.
  const std::vector<int64_t> shape = {1, 1, 512};
  const std::vector<double> ref(512, 1.0);
  std::vector<float> got(512, 1.0f);
  EXPECT_TRUE(check_out(got, ref, shape));
  got[7] = 1.0f + 0.9f * (1e-3f + 1.0f / 64);  // inside 1e-3 + |ref|/64
  EXPECT_TRUE(check_out(got, ref, shape));
  got[7] = 1.0f + 1.1f * (1e-3f + 1.0f / 64);
  EXPECT_FALSE(check_out(got, ref, shape));
  got[7] = kNaN;
  EXPECT_FALSE(check_out(got, ref, shape));
  // Zero reference: only an exactly zero tensor passes (sink = +inf, no valid entry).
  EXPECT_TRUE(check_out({0, 0, 0, 0}, {0, 0, 0, 0}, {1, 1, 4}));
  EXPECT_FALSE(check_out({0, 0, 1e-4f, 0}, {0, 0, 0, 0}, {1, 1, 4}));
}

TEST(Toolkit, OutCosineCatchesSmallCoherentErrors) {
  // Every element within 1e-3 of its reference, but an error orthogonal to the reference and
  // almost half its size turns the direction by far more than 1 - cos = 1e-5.
  std::vector<double> ref(512);
  std::vector<float> got(512);
  for (int d = 0; d < 512; ++d) {
    ref[d] = d % 2 ? 0.002 : -0.002;
    got[d] = static_cast<float>(ref[d] + 0.0009);
  }
  EXPECT_FALSE(check_out(got, ref, {1, 1, 512}));
}

TEST(Toolkit, StatToleranceAndInfinities) {
  const std::vector<int64_t> shape = {1, 3};
  const std::vector<double> ref = {2.0, kInf, -kInf};
  EXPECT_TRUE(check_stat("lse", {2.0f, INFINITY, -INFINITY}, ref, shape));
  // Allowed: 1e-5 + 2/16384 = 1.32e-4.
  EXPECT_TRUE(check_stat("lse", {2.0f + 1.2e-4f, INFINITY, -INFINITY}, ref, shape));
  EXPECT_FALSE(check_stat("lse", {2.0f + 1.5e-4f, INFINITY, -INFINITY}, ref, shape));
  EXPECT_FALSE(check_stat("lse", {2.0f, -INFINITY, -INFINITY}, ref, shape));
  EXPECT_FALSE(check_stat("lse", {2.0f, 3.0e38f, -INFINITY}, ref, shape));
  EXPECT_FALSE(check_stat("lse", {kNaN, INFINITY, -INFINITY}, ref, shape));
}

TEST(Toolkit, BitwiseEqualNamesTheFirstDifference) {
  const std::vector<uint8_t> a = {1, 2, 3}, b = {1, 2, 4};
  EXPECT_TRUE(check_bitwise_equal("x", a, a));
  const ::testing::AssertionResult r = check_bitwise_equal("x", a, b);
  EXPECT_FALSE(r);
  EXPECT_NE(std::string(r.message()).find("byte 2"), std::string::npos) << r.message();
}

TEST(Toolkit, WritesCatchUnwrittenElementsAndStrayBytes) {
  ProblemSpec spec;
  spec.T = 2;
  spec.h_q = 3;
  spec.k = 8;
  spec.strided = true;  // padded out rows, transposed lse
  Problem p(spec);
  EXPECT_FALSE(check_writes(p));  // fresh outputs are all poison
  ASSERT_TRUE(reference::attend(p.args()).ok());
  EXPECT_TRUE(check_attend(p, naive_attend(p.args())));

  Buffer& out = p.buffer(kOut);
  const uint8_t saved = out.bytes[0];
  out.bytes[0] = out.bytes[1] = kPoisonByte;  // element [0, 0, 0] unwritten
  EXPECT_FALSE(check_writes(p));
  out.bytes[0] = saved;
  ASSERT_TRUE(reference::attend(p.args()).ok());
  out.bytes[2 * kDv] = 0;  // the padding after row [0, 0]
  EXPECT_FALSE(check_writes(p));
}

TEST(Toolkit, SameSeedSameWorkload) {
  const ProblemSpec spec = random_spec(42, 8 * 1024);
  const Problem a(spec), b(spec);
  for (int id = 0; id < kNumBuffers; ++id)
    EXPECT_TRUE(check_bitwise_equal(a.buffer(id).name, a.buffer(id).bytes, b.buffer(id).bytes));
}

}  // namespace
}  // namespace smla::test
