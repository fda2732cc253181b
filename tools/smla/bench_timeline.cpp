#include "bench_timeline.hpp"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "cuda/timeline.hpp"

namespace smla::cli {
namespace {

// The nearest-rank `percent` percentile of sorted, non-empty `values`.
double percentile(const std::vector<double>& values, size_t percent) {
  return values[(percent * values.size() + 99) / 100 - 1];
}

// One line: a name, how many values, and the values' minimum, 10th percentile, median, 90th
// percentile and maximum. The percentiles tell a spread of most CTAs from a few stragglers (a
// one-pass launch's last round).
std::string stats_line(const char* name, std::vector<double> values) {
  char line[200];
  if (values.empty()) {
    std::snprintf(line, sizeof line, "  %-42s %5d\n", name, 0);
    return line;
  }
  std::sort(values.begin(), values.end());
  std::snprintf(line, sizeof line, "  %-42s %5zu %9.2f %9.2f %9.2f %9.2f %9.2f\n", name,
                values.size(), values.front(), percentile(values, 10), values[values.size() / 2],
                percentile(values, 90), values.back());
  return line;
}

// A point's line: when the CTAs reached it, in us after `origin`.
std::string point_line(const char* name, const std::vector<uint64_t>& times, uint64_t origin) {
  std::vector<double> us;
  for (const uint64_t t : times) {
    us.push_back(static_cast<double>(static_cast<int64_t>(t - origin)) * 1e-3);
  }
  return stats_line(name, std::move(us));
}

// Each CTA's SM clock from its entry to its end, in MHz: its cycle counts' difference over its
// timer marks' (ns), for the CTAs that recorded all four.
std::vector<double> cta_clocks_mhz(const uint64_t* attend, const uint64_t* cycles) {
  std::vector<double> mhz;
  for (int cta = 0; cta < timeline::kMaxCtas; ++cta) {
    const uint64_t* marks = attend + static_cast<size_t>(cta) * timeline::kPoints;
    const uint64_t* counts = cycles + static_cast<size_t>(cta) * timeline::kCyclePoints;
    const uint64_t t0 = marks[timeline::kEntry], t1 = marks[timeline::kConsumerDone];
    const uint64_t c0 = counts[timeline::kEntryCycles], c1 = counts[timeline::kDoneCycles];
    if (t0 == 0 || t1 <= t0 || c0 == 0 || c1 <= c0) continue;
    mhz.push_back(static_cast<double>(c1 - c0) / static_cast<double>(t1 - t0) * 1e3);
  }
  return mhz;
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
  if (records.size() != timeline::kWords) {
    throw std::invalid_argument("describe_timeline: expected the records of one timeline");
  }
  const uint64_t* attend = records.data();
  const uint64_t* combine = attend + timeline::kAttendWords;
  const uint64_t* cycles = combine + timeline::kCombineWords;
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
  char clock_header[200];
  std::snprintf(clock_header, sizeof clock_header, "  %-42s %5s %9s %9s %9s %9s %9s\n",
                "SM clock, entry to consumer 0 done", "CTAs", "min MHz", "p10 MHz", "med MHz",
                "p90 MHz", "max MHz");
  text += clock_header;
  text += stats_line("cycles / ns (%clock64 / %globaltimer)", cta_clocks_mhz(attend, cycles));
  return text;
}

}  // namespace smla::cli
