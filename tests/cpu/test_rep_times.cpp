// The summary of a bench row's repetitions (tools/smla/rep_times.hpp): the median that
// `smla bench` has always reported, with the fastest and slowest repetition beside it.
#include "rep_times.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace smla::cli {
namespace {

TEST(RepTimes, GivesTheMinimumTheUpperMedianAndTheMaximumInAnyOrder) {
  const RepTimes odd = summarize_reps({5.0, 1.0, 4.0, 2.0, 3.0});
  EXPECT_EQ(odd.count(), 5);
  EXPECT_EQ(odd.min_s, 1.0);
  EXPECT_EQ(odd.median_s, 3.0);
  EXPECT_EQ(odd.max_s, 5.0);
  EXPECT_EQ(odd.in_order_s, (std::vector<double>{5.0, 1.0, 4.0, 2.0, 3.0}));

  // Element reps / 2 of the sorted times, as the bench's median was before the spread.
  const RepTimes even = summarize_reps({4.0, 1.0, 3.0, 2.0});
  EXPECT_EQ(even.count(), 4);
  EXPECT_EQ(even.min_s, 1.0);
  EXPECT_EQ(even.median_s, 3.0);
  EXPECT_EQ(even.max_s, 4.0);

  const RepTimes one = summarize_reps({7.0});
  EXPECT_EQ(one.min_s, 7.0);
  EXPECT_EQ(one.median_s, 7.0);
  EXPECT_EQ(one.max_s, 7.0);
}

TEST(RepTimes, NoRepetitionsMeasureNothing) {
  const RepTimes none = summarize_reps({});
  EXPECT_EQ(none.count(), 0);
  EXPECT_TRUE(std::isnan(none.min_s));
  EXPECT_TRUE(std::isnan(none.median_s));
  EXPECT_TRUE(std::isnan(none.max_s));
  EXPECT_TRUE(none.in_order_s.empty());
}

}  // namespace
}  // namespace smla::cli
