#include "bench_timeline.hpp"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "cuda/timeline.hpp"

namespace smla::cli {
namespace {

// The nearest-rank `percent` percentile of sorted, non-empty `times`.
uint64_t percentile(const std::vector<uint64_t>& times, size_t percent) {
  return times[(percent * times.size() + 99) / 100 - 1];
}

// One line: the point's name, how many reached it, and when (us after `origin`): the first,
// the 10th percentile, the median, the 90th percentile and the last. The percentiles tell a
// spread of most CTAs from a few stragglers (a one-pass launch's last round).
std::string point_line(const char* name, std::vector<uint64_t> times, uint64_t origin) {
  char line[200];
  if (times.empty()) {
    std::snprintf(line, sizeof line, "  %-42s %5d\n", name, 0);
    return line;
  }
  std::sort(times.begin(), times.end());
  const auto us = [&](uint64_t t) {
    return static_cast<double>(static_cast<int64_t>(t - origin)) * 1e-3;
  };
  std::snprintf(line, sizeof line, "  %-42s %5zu %9.2f %9.2f %9.2f %9.2f %9.2f\n", name,
                times.size(), us(times.front()), us(percentile(times, 10)),
                us(times[times.size() / 2]), us(percentile(times, 90)), us(times.back()));
  return line;
}

// The nonzero marks of column `point` of a [rows][width] table.
std::vector<uint64_t> column(const uint64_t* table, int rows, int width, int point) {
  std::vector<uint64_t> times;
  for (int r = 0; r < rows; ++r) {
    if (const uint64_t t = table[static_cast<size_t>(r) * width + point]; t != 0) {
      times.push_back(t);
    }
  }
  return times;
}

}  // namespace

std::string describe_timeline(const std::vector<uint64_t>& records) {
  if (records.size() != timeline::kAttendWords + timeline::kCombineWords) {
    throw std::invalid_argument("describe_timeline: expected the records of one timeline");
  }
  const uint64_t* attend = records.data();
  const uint64_t* combine = attend + timeline::kAttendWords;
  const std::vector<uint64_t> entries =
      column(attend, timeline::kMaxCtas, timeline::kPoints, timeline::kEntry);
  if (entries.empty()) {
    return "  no marks: the Hopper path's kernels did not run this call\n";
  }
  const uint64_t origin = *std::min_element(entries.begin(), entries.end());
  char header[200];
  std::snprintf(header, sizeof header, "  %-42s %5s %9s %9s %9s %9s %9s\n", "point", "CTAs",
                "min us", "p10 us", "med us", "p90 us", "max us");
  std::string text = header;
  for (int point = 0; point < timeline::kPoints; ++point) {
    text += point_line(timeline::kPointNames[point],
                       column(attend, timeline::kMaxCtas, timeline::kPoints, point), origin);
  }
  for (int point = 0; point < timeline::kCombinePoints; ++point) {
    text += point_line(timeline::kCombinePointNames[point],
                       column(combine, timeline::kMaxCtas, timeline::kCombinePoints, point),
                       origin);
  }
  return text;
}

}  // namespace smla::cli
