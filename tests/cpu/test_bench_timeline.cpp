// The table `smla bench --timeline` prints from a kernel timeline's records
// (tools/smla/bench_timeline.cpp): counts and min / p10 / median / p90 / max per point,
// relative to the first CTA's entry, on records made up here.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_timeline.hpp"
#include "cuda/timeline.hpp"

namespace smla::cli {
namespace {

std::vector<uint64_t> empty_records() {
  return std::vector<uint64_t>(timeline::kWords, 0);
}

void set_mark(std::vector<uint64_t>& records, int cta, timeline::Point point, uint64_t ns) {
  records[static_cast<size_t>(cta) * timeline::kPoints + point] = ns;
}

void set_combine_mark(std::vector<uint64_t>& records, int block, timeline::CombinePoint point,
                      uint64_t ns) {
  records[timeline::kAttendWords + static_cast<size_t>(block) * timeline::kCombinePoints +
          point] = ns;
}

void set_cycles(std::vector<uint64_t>& records, int cta, timeline::CyclePoint point,
                uint64_t cycles) {
  records[timeline::kAttendWords + timeline::kCombineWords +
          static_cast<size_t>(cta) * timeline::kCyclePoints + point] = cycles;
}

// The line of the table that starts with `name`.
std::string line_of(const std::string& table, const std::string& name) {
  const size_t at = table.find("  " + name + " ");
  if (at == std::string::npos) return "";
  return table.substr(at, table.find('\n', at) - at);
}

TEST(BenchTimeline, TableGivesCountAndSpreadPerPointAfterTheFirstEntry) {
  std::vector<uint64_t> records = empty_records();
  // Three CTAs, the last at the end of the table (CTA kMaxCtas - 1 is recorded too).
  const int ctas[3] = {0, 7, timeline::kMaxCtas - 1};
  const uint64_t entry[3] = {1'000'000'000, 1'000'000'100, 1'000'000'200};
  const uint64_t first_s[3] = {1'000'009'000, 1'000'005'000, 1'000'007'000};
  for (int i = 0; i < 3; ++i) {
    set_mark(records, ctas[i], timeline::kEntry, entry[i]);
    set_mark(records, ctas[i], timeline::kConsumerFirstS, first_s[i]);
  }
  set_mark(records, 7, timeline::kLastStage, 1'000'020'000);
  set_combine_mark(records, 0, timeline::kCombineEntry, 1'000'030'000);
  set_combine_mark(records, 1, timeline::kCombineEntry, 1'000'031'000);
  set_combine_mark(records, 1, timeline::kCombineExit, 1'000'040'500);

  const std::string table = describe_timeline(records);
  // Name, CTAs, min / p10 / median / p90 / max us after the first entry (1 s on the timer).
  // Nearest rank: of 3 CTAs p10 is the first, p90 the last; of 2, p10 the first, p90 the last.
  const char* const expected[] = {
      "  kernel entered                                 3      0.00      0.00      0.10      0.20"
      "      0.20",
      "  consumer 0: first S done                       3      5.00      5.00      7.00      9.00"
      "      9.00",
      "  producer: last stage handed over               1     20.00     20.00     20.00     20.00"
      "     20.00",
      "  producer: first stage handed over              0",
      "  combine: block begins (waited)                 2     30.00     30.00     31.00     31.00"
      "     31.00",
      "  combine: block done                            1     40.50     40.50     40.50     40.50"
      "     40.50",
  };
  for (const std::string line : expected) {
    const std::string name = line.substr(2, line.find("  ", 2) - 2);
    EXPECT_EQ(line_of(table, name), line) << table;
  }
}

TEST(BenchTimeline, PercentilesSeparateMostCtasFromTheLast) {
  std::vector<uint64_t> records = empty_records();
  // 20 CTAs enter 1 us apart: p10 is the 2nd, the median the 11th, p90 the 18th.
  for (int cta = 0; cta < 20; ++cta) set_mark(records, cta, timeline::kEntry, 1000 * cta + 1000);
  EXPECT_EQ(line_of(describe_timeline(records), "kernel entered"),
            "  kernel entered                                20      0.00      1.00     10.00"
            "     17.00     19.00");
}

// Each CTA's SM clock is its cycles over its nanoseconds from its entry to consumer 0's end;
// a CTA missing any of the four values is left out.
TEST(BenchTimeline, SmClockPerCtaIsCyclesOverNanosecondsFromEntryToDone) {
  std::vector<uint64_t> records = empty_records();
  // CTA 0: 1980 cycles in 1000 ns; CTA 1: 1800 in 1000; CTA 2: 3600 in 2000; CTA 3 no end.
  const uint64_t ns[4] = {1000, 1000, 2000, 0};
  const uint64_t cycles[4] = {1980, 1800, 3600, 0};
  for (int cta = 0; cta < 4; ++cta) {
    set_mark(records, cta, timeline::kEntry, 5'000'000);
    set_cycles(records, cta, timeline::kEntryCycles, 70'000'000);
    if (ns[cta] == 0) continue;
    set_mark(records, cta, timeline::kConsumerDone, 5'000'000 + ns[cta]);
    set_cycles(records, cta, timeline::kDoneCycles, 70'000'000 + cycles[cta]);
  }
  EXPECT_EQ(line_of(describe_timeline(records), "cycles / ns (%clock64 / %globaltimer)"),
            "  cycles / ns (%clock64 / %globaltimer)          3   1800.00   1800.00   1800.00"
            "   1980.00   1980.00");
}

TEST(BenchTimeline, RecordsWithoutAnEntrySayNoKernelMarked) {
  std::vector<uint64_t> records = empty_records();
  // A combine mark alone (a stale word) does not make a timeline.
  set_combine_mark(records, 0, timeline::kCombineEntry, 5);
  EXPECT_NE(describe_timeline(records).find("no marks"), std::string::npos);
}

TEST(BenchTimeline, RecordsOfAnotherSizeAreRejected) {
  EXPECT_THROW(describe_timeline(std::vector<uint64_t>(timeline::kAttendWords, 0)),
               std::invalid_argument);
}

}  // namespace
}  // namespace smla::cli
