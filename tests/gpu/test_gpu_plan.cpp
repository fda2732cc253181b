// The split-KV plan kernel (src/cuda/portable/plan_kernel.cu) against a host walk of the same
// rules: every partition's items (whole tokens, then segments of the split tokens), each split
// token's rows, and which items run whole. A token inside one partition is a whole item (partial
// -1) with one unused row, which the combine kernel leaves alone; for a token over several
// partitions every segment writes a partial row. Lengths include 0, negatives and values past k,
// and some layouts leave partitions without split entries.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <ostream>
#include <utility>
#include <vector>

#include "cuda/portable/attend_params.hpp"
#include "cuda/portable/plan_kernel.hpp"
#include "gpu/gpu_harness.hpp"

// Found by argument-dependent lookup from GoogleTest's EXPECT_EQ and its printer.
namespace smla::portable {

bool operator==(const Segment& a, const Segment& b) {
  return a.token == b.token && a.lo == b.lo && a.hi == b.hi && a.partial == b.partial;
}

void PrintTo(const Segment& s, std::ostream* os) {
  *os << "{token " << s.token << ", [" << s.lo << ", " << s.hi << "), partial " << s.partial
      << "}";
}

}  // namespace smla::portable

namespace smla::test::gpu {
namespace {

using portable::PlanLayout;
using portable::Segment;

struct PlanCase {
  const char* name;
  PlanLayout layout;
  int32_t k, k_x;                   // k_x = 0: no extra selection
  std::vector<int32_t> len, len_x;  // [T] each (len_x empty without an extra selection)
};

// The plan as plan_kernel.cu's header describes it, built item by item.
struct HostPlan {
  std::vector<int32_t> part_seg_begin;   // [P + 1]
  std::vector<int32_t> token_seg_begin;  // [S + 1]
  std::vector<Segment> segments;         // [part_seg_begin[P]]
};

int32_t used(const PlanCase& c, int64_t t) {
  const int32_t main = std::clamp(c.len[t], 0, c.k);
  return c.k_x > 0 ? main + std::clamp(c.len_x[t], 0, c.k_x) : main;
}

HostPlan host_plan(const PlanCase& c) {
  const PlanLayout& l = c.layout;
  const int64_t first = l.first_split();
  std::vector<int64_t> start(l.split_tokens() + 1, 0);  // C: split token i's first position
  for (int64_t i = 0; i < l.split_tokens(); ++i) start[i + 1] = start[i] + used(c, first + i);
  const int64_t work = start.back();
  const int64_t parts = std::min(work, l.spread);
  const auto bound = [&](int64_t p) { return p >= parts ? work : p * work / parts; };

  // Partition p's items: its whole tokens, then its segments of the split tokens.
  HostPlan plan;
  std::vector<std::vector<Segment>> items(l.partitions);
  for (int64_t t = 0; t < first; ++t) {
    items[t % l.partitions].push_back({int32_t(t), 0, used(c, t), -1});
  }
  // Each split token's rows: one per partition it meets, in token order.
  std::vector<std::vector<Segment>> split_items(l.partitions);
  int32_t row = 0;
  for (int64_t i = 0; i < l.split_tokens(); ++i) {
    plan.token_seg_begin.push_back(row);
    std::vector<std::pair<int64_t, Segment>> met;  // (partition, segment)
    for (int64_t p = 0; p < parts; ++p) {
      const int64_t lo = std::max(start[i], bound(p));
      const int64_t hi = std::min(start[i + 1], bound(p + 1));
      if (lo < hi) {
        met.push_back({p, Segment{int32_t(first + i), int32_t(lo - start[i]),
                                  int32_t(hi - start[i]), row++}});
      }
    }
    if (met.size() == 1) met[0].second.partial = -1;
    for (const auto& [p, seg] : met) split_items[p].push_back(seg);
  }
  plan.token_seg_begin.push_back(row);
  for (int64_t p = 0; p < l.partitions; ++p) {
    plan.part_seg_begin.push_back(static_cast<int32_t>(plan.segments.size()));
    for (const Segment& s : items[p]) plan.segments.push_back(s);
    for (const Segment& s : split_items[p]) plan.segments.push_back(s);
  }
  plan.part_seg_begin.push_back(static_cast<int32_t>(plan.segments.size()));
  return plan;
}

std::vector<uint8_t> bytes_of(const std::vector<int32_t>& v) {
  std::vector<uint8_t> b(4 * v.size());
  if (!v.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

std::vector<int32_t> words_at(const std::vector<uint8_t>& buffer, int64_t word, int64_t n) {
  std::vector<int32_t> w(n);
  std::memcpy(w.data(), buffer.data() + 4 * word, 4 * n);
  return w;
}

void expect_plan_kernel_matches_host_walk(const PlanCase& c) {
  SCOPED_TRACE(c.name);
  const PlanLayout& l = c.layout;
  DeviceBuffer len(4 * c.len.size()), len_x(4 * c.len_x.size());
  len.upload(bytes_of(c.len));
  if (c.k_x > 0) len_x.upload(bytes_of(c.len_x));
  portable::SelectionView main_sel{nullptr, 0, static_cast<const int32_t*>(len.get()), 1, c.k};
  portable::SelectionView extra_sel{};
  if (c.k_x > 0) extra_sel = {nullptr, 0, static_cast<const int32_t*>(len_x.get()), 1, c.k_x};
  DeviceBuffer plan_buffer(static_cast<size_t>(l.bytes()));
  ASSERT_TRUE(status_ok(portable::launch_plan(main_sel, extra_sel, l, plan_buffer.get(), nullptr)));
  SMLA_CUDA_ASSERT(cudaDeviceSynchronize());
  const std::vector<uint8_t> plan = plan_buffer.download();

  const HostPlan expected = host_plan(c);
  EXPECT_EQ(words_at(plan, l.part_seg_begin_offset(), l.partitions + 1), expected.part_seg_begin);
  EXPECT_EQ(words_at(plan, l.token_seg_begin_offset(), l.split_tokens() + 1),
            expected.token_seg_begin);
  ASSERT_LE(static_cast<int64_t>(expected.segments.size()), l.max_segments());
  std::vector<Segment> segments(expected.segments.size());
  std::memcpy(segments.data(), plan.data() + 4 * l.segments_offset(),
              sizeof(Segment) * segments.size());
  EXPECT_EQ(segments, expected.segments);
}

// Whether some split token runs whole and some writes partials: the case tests both.
bool has_whole_and_partial_split_tokens(const PlanCase& c) {
  const HostPlan plan = host_plan(c);
  bool whole = false, partial = false;
  for (const Segment& s : plan.segments) {
    if (s.token < c.layout.first_split()) continue;
    (s.partial < 0 ? whole : partial) = true;
  }
  return whole && partial;
}

TEST(GpuPlan, SplitTokensInsideOnePartitionRunWholeTheRestWritePartials) {
  SMLA_REQUIRE_GPU();
  // 12 tokens of main and extra entries (lengths 0, negative and past k among them) over 4
  // partitions: short tokens fall inside one partition, long ones straddle.
  PlanCase c{"all split",
             PlanLayout{12, 4, 0, 4},
             100,
             30,
             {100, 3, 5, 0, 40, 100, -7, 2, 160, 1, 9, 70},
             {0, 30, 2, 0, 1, 31, 4, -1, 0, 3, 0, 12}};
  ASSERT_TRUE(has_whole_and_partial_split_tokens(c));
  expect_plan_kernel_matches_host_walk(c);
}

TEST(GpuPlan, RoundsAndTailPutWholeRoundsBeforeTheSplitTokens) {
  SMLA_REQUIRE_GPU();
  // Two rounds of 4 whole tokens, then 5 split tokens.
  PlanCase c{"rounds and tail",
             PlanLayout{13, 4, 2, 4},
             64,
             0,
             {64, 0, 12, 64, 7, 64, 64, 3, 64, 2, 60, 5, 64},
             {}};
  ASSERT_TRUE(has_whole_and_partial_split_tokens(c));
  expect_plan_kernel_matches_host_walk(c);
  // split_plan_layout's spread below the partition count (2 split tokens over 5 partitions
  // spread over 4): the fifth partition holds its whole token only.
  expect_plan_kernel_matches_host_walk(
      {"spread below partitions", PlanLayout{7, 5, 1, 4}, 64, 0, {9, 64, 1, 64, 64, 64, 3},
       {}});
}

TEST(GpuPlan, FewerEntriesThanPartitionsLeaveTheRestEmpty) {
  SMLA_REQUIRE_GPU();
  expect_plan_kernel_matches_host_walk(
      {"3 entries over 8 partitions", PlanLayout{3, 8, 0, 8}, 16, 0, {1, 0, 2}, {}});
  expect_plan_kernel_matches_host_walk(
      {"no entries", PlanLayout{3, 8, 0, 8}, 16, 0, {0, -1, 0}, {}});
}

}  // namespace
}  // namespace smla::test::gpu
