// SPEC §5 under random damage: a valid attend call (AttendCase) with one to three of its
// fields replaced by hostile values (dtypes and formats outside their enums, negative and
// int64-sized extents and strides, absent tensors, odd ranks, non-finite scales). Only
// damage that the shape-only size query rejects is passed to attend itself: a view the size
// query accepts may describe more memory than the test owns, which the library cannot know.
//
// Properties: the size query and attend reject the same calls (whatever the query rejects,
// attend rejects), each with a message that starts with its operation's name; a rejected
// call writes nothing, its size result included. Under tools/sanitize-cpu the run also shows
// that no damage makes validation overflow a signed integer or read outside its arguments.
#include <cstdint>
#include <limits>
#include <string>

#include "common/random.hpp"
#include "test_bad_input_harness.hpp"

namespace smla::test {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kExtents[] = {-1, 0, 1, 2, 4, 16, 63, 64, 129, 512, 576,
                                int64_t{1} << 31, int64_t{1} << 40, kMax, kMin};
constexpr int64_t kStrides[] = {-1, 0, 1, 2, 512, 576, int64_t{1} << 20, int64_t{1} << 40,
                                kMax, kMin};
constexpr int32_t kBlockSizes[] = {-1, 0, 1, 64, 1 << 30, std::numeric_limits<int32_t>::max()};

TensorView& pick_view(AttendArgs& a, Rng& rng) {
  TensorView* views[] = {&a.q,          &a.indices, &a.lengths, &a.extra_indices,
                         &a.extra_lengths, &a.sink, &a.out,     &a.lse, &a.max_logits};
  return *rng.pick(views);
}

void damage_view(TensorView& v, Rng& rng) {
  const int i = static_cast<int>(rng.uniform_int(0, kMaxRank - 1));
  switch (rng.uniform_int(0, 5)) {
    case 0: v.dtype = static_cast<DType>(rng.uniform_int(-1, 6)); break;
    case 1: v.rank = static_cast<int32_t>(rng.uniform_int(-2, kMaxRank + 2)); break;
    case 2: v.shape[i] = rng.pick(kExtents); break;
    case 3: v.stride[i] = rng.pick(kStrides); break;
    case 4: v.data = nullptr; break;
    default: v = TensorView{}; break;
  }
}

void damage_pool(KvPool& pool, Rng& rng) {
  switch (rng.uniform_int(0, 4)) {
    case 0: pool.format = static_cast<KvFormat>(rng.uniform_int(-1, 5)); break;
    case 1: pool.num_blocks = rng.pick(kExtents); break;
    case 2: pool.block_size = rng.pick(kBlockSizes); break;
    case 3: pool.block_stride = rng.pick(kStrides); break;
    default: pool = KvPool{}; break;
  }
}

void damage(AttendArgs& a, Rng& rng) {
  switch (rng.uniform_int(0, 9)) {
    case 0: damage_pool(a.kv, rng); break;
    case 1: damage_pool(a.extra_kv, rng); break;
    case 2: {
      constexpr float kScales[] = {std::numeric_limits<float>::quiet_NaN(),
                                   std::numeric_limits<float>::infinity(), 0.0f, -1.0f};
      a.scale = rng.pick(kScales);
      break;
    }
    default: damage_view(pick_view(a, rng), rng); break;
  }
}

TEST(BadAttendRandom, WhatTheSizeQueryRejectsAttendRejectsWritingNothing) {
  AttendCase c;
  Rng rng(20261205);
  int rejected = 0, accepted = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    AttendArgs args = c.args();
    for (int64_t n = rng.uniform_int(1, 3); n > 0; --n) damage(args, rng);

    size_t bytes = 12345;
    const Status query = attend_workspace_size(args, &bytes);
    if (query.ok()) {
      ++accepted;
      continue;
    }
    ++rejected;
    SCOPED_TRACE("trial " + std::to_string(trial) + ": " + query.message());
    EXPECT_TRUE(query.message().starts_with("smla::attend_workspace_size: "));
    EXPECT_EQ(bytes, 12345u) << "a failed size query wrote its result";
    const Status call = attend(args, Workspace{});
    EXPECT_FALSE(call.ok()) << "attend accepted a call its size query rejected";
    EXPECT_TRUE(call.message().starts_with("smla::attend: ")) << call.message();
    ASSERT_TRUE(c.untouched()) << "a rejected call wrote to a buffer";
  }
  // Both sides must be exercised, or the damage palette no longer tests what it claims.
  EXPECT_GT(rejected, 1000);
  EXPECT_GT(accepted, 0);
}

}  // namespace
}  // namespace smla::test
