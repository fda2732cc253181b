// A row's timed repetitions in three numbers: the median that `smla bench` reports, and the
// fastest and slowest repetition beside it; and all of them in the order they ran (`--json`).
// The spread tells a row whose every repetition moved between runs from one whose repetitions
// scatter within a run (the card's clocks, as the h_q = 128 d_qk 576 prefill rows', whose later
// repetitions run at a lower SM clock: perf-notes Findings s69), where the median depends on
// how many repetitions ran slow.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

namespace smla::cli {

struct RepTimes {
  std::vector<double> in_order_s;  // every repetition, in the order they ran
  double min_s = NAN;
  double median_s = NAN;  // the upper median for an even count: element count() / 2 in order
  double max_s = NAN;

  int count() const { return static_cast<int>(in_order_s.size()); }
};

inline RepTimes summarize_reps(std::vector<double> seconds) {
  RepTimes t;
  t.in_order_s = seconds;
  if (seconds.empty()) return t;
  const auto [lo, hi] = std::minmax_element(seconds.begin(), seconds.end());
  t.min_s = *lo;
  t.max_s = *hi;
  const auto middle = seconds.begin() + seconds.size() / 2;
  std::nth_element(seconds.begin(), middle, seconds.end());
  t.median_s = *middle;
  return t;
}

}  // namespace smla::cli
