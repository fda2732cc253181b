// The text and JSON of `smla bench` (tools/smla/bench_report.cpp) on reports made by hand: the
// GPU rows' NVML lines (`sm-clock`, `energy`, `power`), which a real run only prints on a
// device, and tools/bench-table reading them.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "bench_report.hpp"

namespace smla::cli {
namespace {

// A timed decode row of `reps` repetitions of 28 us, check passed, sampled by NVML.
BenchRow sampled_row(int batch, int reps) {
  BenchRow row;
  row.workload.name = "V3.2 decode";
  row.workload.decode = true;
  row.workload.batch = batch;
  row.workload.tokens = 2 * batch;
  row.workload.main.topk = 2048;
  row.workload.main.s_kv = 32768;
  row.check.passed = true;
  row.check.detail = "sample";
  row.times = summarize_reps(std::vector<double>(reps, 28e-6));
  SmClockStats& c = row.sm_clock;
  c.samples = 5;
  c.min_mhz = 1755;
  c.max_mhz = 1980;
  c.mean_mhz = 1900;
  c.reasons = 0x4;
  c.span_s = 0.4;
  c.energy_read = true;
  return row;
}

BenchReport gpu_report() {
  BenchReport report;
  report.backend = "cuda:0 stand-in";
  report.gpu = true;
  return report;
}

std::string printed(const BenchReport& report) {
  testing::internal::CaptureStdout();
  print_report(report);
  return testing::internal::GetCapturedStdout();
}

bool has_line(const std::string& text, const std::string& pattern) {
  return std::regex_search(text, std::regex("(^|\n)" + pattern + "\n"));
}

TEST(BenchReport, EnergyLinesGiveMillijoulesPerRepetitionOrSayWhyNot) {
  BenchReport report = gpu_report();
  // 210 J over 0.3 s between the counter's first and last update: 700 W, and over the runs'
  // 0.4 s that is 280 J, 2800 mJ for each of 100 repetitions.
  BenchRow resolved = sampled_row(2, 100);
  resolved.sm_clock.energy_updates = 4;
  resolved.sm_clock.energy_window_s = 0.3;
  resolved.sm_clock.energy_window_mj = 210000;
  report.rows.push_back(resolved);
  BenchRow unresolved = sampled_row(64, 3);
  unresolved.sm_clock.energy_updates = 1;
  report.rows.push_back(unresolved);

  const std::string text = printed(report);
  EXPECT_TRUE(has_line(text,
                       R"(energy \| V3\.2 decode b=2 s_q=2 h_q=128 d_qk=576 topk=2048 s_kv=32768 )"
                       R"(\| 2800\.0 mJ \| 700 W \| 4 updates in 400\.0 ms)"))
      << text;
  EXPECT_TRUE(has_line(text, R"(energy \| V3\.2 decode b=64 [^|]+\| not resolved: 1 counter )"
                             R"(updates in 400\.0 ms \(the mean power needs two, 20 ms apart; )"
                             R"(more --reps give more\))"))
      << text;
  EXPECT_TRUE(has_line(text, R"(sm-clock \| V3\.2 decode b=2 [^|]+\| 5 \| 1755 / 1900 / 1980 )"
                             R"(\| SwPowerCap)"))
      << text;

  const std::string json = report_json(report).str();
  EXPECT_NE(json.find("\"energy_updates\":4,\"energy_mj_per_rep\":2800,\"mean_w\":700"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"energy_updates\":1}"), std::string::npos) << json;
}

TEST(BenchReport, PowerLinesOnlyWhereTheDriverGaveTheField) {
  BenchReport report = gpu_report();
  report.rows.push_back(sampled_row(2, 100));
  const std::string without = printed(report);
  EXPECT_EQ(without.find("Instant power"), std::string::npos) << without;
  EXPECT_EQ(without.find("\npower |"), std::string::npos) << without;
  EXPECT_EQ(report_json(report).str().find("power_"), std::string::npos);

  BenchRow with = sampled_row(64, 100);
  with.sm_clock.power_readings = 5;
  with.sm_clock.power_changes = 2;
  with.sm_clock.power_mean_w = 312.4;
  report.rows.push_back(with);
  const std::string text = printed(report);
  EXPECT_TRUE(has_line(text, R"(power \| V3\.2 decode b=64 s_q=2 h_q=128 d_qk=576 topk=2048 )"
                             R"(s_kv=32768 \| 312 W \| 5 readings, 2 changes)"))
      << text;
  EXPECT_FALSE(has_line(text, R"(power \| V3\.2 decode b=2 .*)")) << text;
  EXPECT_NE(report_json(report).str().find(
                "\"power_readings\":5,\"power_changes\":2,\"power_mean_w\":312.4"),
            std::string::npos);
}

// --placements: each upload's median, the first upload's first, and their spread, on the rows
// that have them; no heading where none does.
TEST(BenchReport, PlacementLinesOnlyForRowsWithPlacements) {
  BenchReport report = gpu_report();
  report.rows.push_back(sampled_row(2, 100));
  EXPECT_EQ(printed(report).find("Placements"), std::string::npos);
  BenchRow placed = sampled_row(64, 100);
  placed.placement_seconds = {28e-6, 30e-6, 28.5e-6};
  report.rows.push_back(placed);
  const std::string text = printed(report);
  EXPECT_TRUE(has_line(text, R"(placements \| V3\.2 decode b=64 s_q=2 h_q=128 d_qk=576 )"
                             R"(topk=2048 s_kv=32768 \| 28\.0 / 30\.0 / 28\.5 \| 7\.1%)"))
      << text;
  EXPECT_FALSE(has_line(text, R"(placements \| V3\.2 decode b=2 .*)")) << text;
}

// A row that was not timed (its check failed) has no NVML lines, whatever its stats hold.
TEST(BenchReport, AnUntimedRowHasNoSampledLines) {
  BenchReport report = gpu_report();
  BenchRow failed = sampled_row(2, 0);
  failed.check.passed = false;
  failed.check.detail = "max |out err| 2e-2";
  failed.sm_clock.power_readings = 1;
  report.rows.push_back(failed);
  const std::string text = printed(report);
  EXPECT_EQ(text.find("energy |"), std::string::npos) << text;
  EXPECT_EQ(text.find("power |"), std::string::npos) << text;
  EXPECT_NE(text.find("FAIL: max |out err| 2e-2"), std::string::npos) << text;
}

// The contract itself: tools/bench-table reads the text a report prints, an anchor row's ratio
// and time, its clock, energy and power, by the row's kind and shape.
TEST(BenchReport, BenchTableReadsWhatTheReportPrints) {
  BenchReport report = gpu_report();
  BenchRow row = sampled_row(2, 100);
  row.workload.name = "decode";  // the anchor rows' name: their kind (bench_anchors.cpp)
  row.path = "hopper";
  row.anchor_us = 20.0;
  row.check.detail = "2 tokens, outputs 0123abcd";
  row.sm_clock.energy_updates = 4;
  row.sm_clock.energy_window_s = 0.3;
  row.sm_clock.energy_window_mj = 210000;
  row.sm_clock.power_readings = 5;
  row.sm_clock.power_changes = 2;
  row.sm_clock.power_mean_w = 312.4;
  report.rows.push_back(row);

  const std::filesystem::path log = std::filesystem::temp_directory_path() /
                                    ("smla_test_bench_report." + std::to_string(getpid()) + ".log");
  std::ofstream(log) << printed(report);
  const std::string command = std::string(SMLA_BENCH_TABLE_PATH) + " new=" + log.string();
  std::FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string table;
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) table.append(buffer, n);
  EXPECT_EQ(pclose(pipe), 0) << table;
  std::filesystem::remove(log);

  const std::string label = R"(decode b=2 s_q=2 h_q=128 d_qk=576 topk=2048 s_kv=32768 +)";
  EXPECT_TRUE(has_line(table, label + R"(0\.71 \(28\.0\) *)")) << table;
  EXPECT_TRUE(has_line(table, label + R"(1900 \(1755\) *)")) << table;
  EXPECT_TRUE(has_line(table, label + R"(2800\.0 \(700\) *)")) << table;
  EXPECT_TRUE(has_line(table, label + R"(312 \(2\) *)")) << table;
  EXPECT_TRUE(has_line(table, R"(outputs digests unlike column 1 +- *)")) << table;
}

}  // namespace
}  // namespace smla::cli
