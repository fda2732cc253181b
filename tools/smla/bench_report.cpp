#include "bench_report.hpp"

#include <algorithm>
#include <cstdio>

#include "smla/format.hpp"

namespace smla::cli {

namespace {

std::string number(double value, const char* format) {
  if (std::isnan(value)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, format, value);
  return buf;
}

std::string check_text(const BenchRow& row) {
  if (!row.not_covered.empty()) return "not run: " + row.not_covered;
  if (!row.error.empty()) return "ERROR: " + row.error;
  return (row.check.passed ? "pass (" : "FAIL: ") + row.check.detail +
         (row.check.passed ? ")" : "");
}

// `header`, then one line per timed row that `has` accepts, begun with `label | KIND SHAPE | `
// and ended by `rest`; nothing where no row has them.
template <class Has, class Rest>
void print_sampled_rows(const BenchReport& report, const char* header, const char* label, Has has,
                        Rest rest) {
  bool any = false;
  for (const BenchRow& row : report.rows) {
    if (!row.timed() || !has(row)) continue;
    if (!any) std::printf("%s\n", header);
    any = true;
    std::printf("%s | %s %s | ", label, row.workload.name.c_str(),
                row.workload.shape_text().c_str());
    rest(row);
  }
}

// One line per timed GPU row where NVML gives the energy counter, `energy | KIND SHAPE | MJ mJ |
// W W | N updates in T ms`: the GPU's mean power over the row's timed runs (the flushes and the
// host's gaps between repetitions included, --rep-gap's idle too), that power's energy per
// repetition, and the counter's updates seen in the runs' T ms (so its interval on this card):
// whether a row runs against the card's power limit, which lowers its SM clock (perf-notes
// Findings s69). A row whose timed runs held too few of the counter's updates says so instead.
void print_energy(const BenchReport& report) {
  print_sampled_rows(
      report,
      "Energy of each row's timed runs (NVML's counter; flushes and gaps included): mJ per "
      "repetition, mean W, the counter's updates",
      "energy", [](const BenchRow& row) { return row.sm_clock.energy_read; },
      [](const BenchRow& row) {
        const SmClockStats& c = row.sm_clock;
        if (c.energy_measured()) {
          std::printf("%.1f mJ | %.0f W | %d updates in %.1f ms\n", row.energy_mj_per_rep(),
                      c.mean_watts(), c.energy_updates, c.span_s * 1e3);
        } else {
          std::printf(
              "not resolved: %d counter updates in %.1f ms (the mean power needs two, %.0f ms "
              "apart; more --reps give more)\n",
              c.energy_updates, c.span_s * 1e3, kMinEnergyWindowS * 1e3);
        }
      });
}

// One line per timed GPU row where NVML gives the instant power field, `power | KIND SHAPE |
// W W | N readings, M changes`: the mean of the field's readings over the row's timed runs
// (polled with the clock; flushes, gaps and --rep-gap's idle included) and how often it
// changed between polls, which says how many of the driver's refreshes the mean holds. It
// covers rows whose timed runs are too short for the energy counter (Next 35 in perf-notes).
void print_power(const BenchReport& report) {
  print_sampled_rows(
      report,
      "Instant power in each row's timed runs (NVML's field, polled every 1 ms): mean W, "
      "readings, changes between them",
      "power", [](const BenchRow& row) { return row.sm_clock.power_measured(); },
      [](const BenchRow& row) {
        const SmClockStats& c = row.sm_clock;
        std::printf("%.0f W | %d readings, %d changes\n", c.power_mean_w, c.power_readings,
                    c.power_changes);
      });
}

// One line per timed GPU row, `sm-clock | KIND SHAPE | SAMPLES | MIN / MEAN / MAX | REASONS`
// (tools/bench-table reads them by the row's kind and shape, as in the table).
void print_sm_clocks(const BenchReport& report) {
  if (!report.sm_clock_unavailable.empty()) {
    std::printf("SM clock: not sampled (%s)\n", report.sm_clock_unavailable.c_str());
    return;
  }
  std::printf(
      "SM clock in each row's timed runs (NVML every 1 ms): samples, min / mean / max MHz, "
      "clock event reasons\n");
  for (const BenchRow& row : report.rows) {
    const SmClockStats& c = row.sm_clock;
    if (!row.timed() || !c.measured()) continue;
    std::printf("sm-clock | %s %s | %d | %u / %.0f / %u | %s\n", row.workload.name.c_str(),
                row.workload.shape_text().c_str(), c.samples, c.min_mhz, c.mean_mhz, c.max_mhz,
                clock_event_reason_names(c.reasons).c_str());
  }
}

// One line per timed row, `reps | KIND SHAPE | REPS | MIN / MEDIAN / MAX | SPREAD`, SPREAD
// being (max - min) / median: whether a row's median stands for all of its repetitions.
void print_rep_spreads(const BenchReport& report) {
  std::printf("Repetitions of each row: count, min / median / max us, (max - min) / median\n");
  for (const BenchRow& row : report.rows) {
    if (!row.timed()) continue;
    std::printf("reps | %s %s | %d | %.1f / %.1f / %.1f | %.1f%%\n", row.workload.name.c_str(),
                row.workload.shape_text().c_str(), row.times.count(), row.times.min_s * 1e6,
                row.seconds() * 1e6, row.times.max_s * 1e6,
                100.0 * (row.times.max_s - row.times.min_s) / row.seconds());
  }
}

// With --placements: one line per timed row, `placements | KIND SHAPE | MEDIAN / MEDIAN / ...
// | SPREAD`, the first upload's median first, SPREAD (slowest - fastest) / fastest of them.
void print_placements(const BenchReport& report) {
  print_sampled_rows(
      report,
      "Placements of each row (its data uploaded again, the earlier uploads kept): median us of "
      "each, (slowest - fastest) / fastest",
      "placements", [](const BenchRow& row) { return !row.placement_seconds.empty(); },
      [](const BenchRow& row) {
        std::string medians;
        for (const double seconds : row.placement_seconds) {
          medians += (medians.empty() ? "" : " / ") + number(seconds * 1e6, "%.1f");
        }
        const auto [fastest, slowest] =
            std::minmax_element(row.placement_seconds.begin(), row.placement_seconds.end());
        std::printf("%s | %.1f%%\n", medians.c_str(), 100.0 * (*slowest - *fastest) / *fastest);
      });
}

}  // namespace

Workload BenchOptions::adjusted(Workload workload) const {
  if (heads > 0) workload.h_q = heads;
  if (prefill_tokens > 0 && !workload.decode) workload.tokens = prefill_tokens;
  if (format) {
    workload.main.format = *format;
    // A row without an extra pool keeps its (unused) default: FlashMLA's figure stands
    // while every pool the row has is in the anchor's format.
    if (workload.has_extra()) workload.extra.format = *format;
  }
  workload.sigma = sigma;
  return workload;
}

bool BenchOptions::selects(const Workload& workload) const {
  if (rows != RowSelection::all && (rows == RowSelection::decode) != workload.decode) return false;
  if (!format_supports_d_qk(workload.main.format, workload.d_qk) ||
      (workload.has_extra() && !format_supports_d_qk(workload.extra.format, workload.d_qk))) {
    return false;
  }
  return match.empty() ||
         (workload.shape_text() + " " + workload.format_text()).find(match) != std::string::npos;
}

bool BenchReport::all_passed() const {
  bool any_ran = false;
  for (const BenchRow& row : rows) {
    if (!row.not_covered.empty()) continue;
    if (!row.error.empty() || !row.check.passed) return false;
    any_ran = true;
  }
  return any_ran;
}

void print_report(const BenchReport& report) {
  std::printf("backend: %s%s%s\n", report.backend.c_str(), report.note.empty() ? "" : " (",
              report.note.empty() ? "" : (report.note + ")").c_str());
  if (report.gpu) {
    std::printf("ceilings: device-to-device copy %s GB/s, cuBLAS bf16 GEMM 8192^3 %s TFLOP/s\n",
                number(report.ceilings.copy_gbps, "%.0f").c_str(),
                number(report.ceilings.gemm_tflops, "%.0f").c_str());
    if (report.rep_gap_ms > 0) {
      std::printf("each repetition after %d ms of the device idle (--rep-gap)\n",
                  report.rep_gap_ms);
    }
  }
  // Columns as wide as their widest entry, so that a long pool list or a sigma label does
  // not push the numbers out of line.
  int shape_width = 5, format_width = 6;
  for (const BenchRow& row : report.rows) {
    shape_width = std::max(shape_width, static_cast<int>(row.workload.shape_text().size()));
    format_width = std::max(format_width, static_cast<int>(row.workload.format_text().size()));
  }
  std::printf("%-14s %-*s %-*s", "workload", shape_width, "shape", format_width, "format");
  if (report.gpu) std::printf(" %-8s", "path");
  std::printf(" %10s %12s", "time us", "tokens/s");
  if (report.gpu) {
    std::printf(" %8s %8s %7s %7s %11s %6s", "TFLOP/s", "GB/s", "%gemm", "%copy", "FlashMLA us",
                "ratio");
  }
  std::printf("  check\n");
  for (const BenchRow& row : report.rows) {
    const Workload& w = row.workload;
    // Never a number for a wrong answer: untimed rows show '-' (BENCHMARKS.md, STYLE.md).
    const bool t = row.timed();
    std::printf("%-14s %-*s %-*s", w.name.c_str(), shape_width, w.shape_text().c_str(),
                format_width, w.format_text().c_str());
    if (report.gpu) std::printf(" %-8s", row.path.c_str());
    std::printf(" %10s %12s", number(t ? row.seconds() * 1e6 : kNotMeasured, "%.1f").c_str(),
                number(t ? row.tokens_per_s() : kNotMeasured, "%.1f").c_str());
    if (report.gpu) {
      const double tflops = t ? row.tflops() : kNotMeasured;
      const double gbps = t ? row.gbps() : kNotMeasured;
      std::printf(" %8s %8s %7s %7s %11s %6s", number(tflops, "%.1f").c_str(),
                  number(gbps, "%.0f").c_str(),
                  number(tflops / report.ceilings.gemm_tflops * 100, "%.0f%%").c_str(),
                  number(gbps / report.ceilings.copy_gbps * 100, "%.0f%%").c_str(),
                  number(row.anchor_us, "%.1f").c_str(),
                  number(row.ratio_to_flashmla(), "%.2f").c_str());
    }
    std::printf("  %s\n", check_text(row).c_str());
  }
  print_rep_spreads(report);
  print_placements(report);
  if (report.gpu) {
    print_sm_clocks(report);
    print_energy(report);
    print_power(report);
  }
  double setup = 0, check = 0, timing = 0;
  for (const BenchRow& row : report.rows) {
    setup += row.setup_wall_s;
    check += row.check_wall_s;
    timing += row.timing_wall_s;
  }
  std::printf("host wall time: data and warm-up %.1f s, checks %.1f s, timed runs %.1f s\n", setup,
              check, timing);
}

JsonObject report_json(const BenchReport& report) {
  std::vector<JsonObject> rows;
  for (const BenchRow& row : report.rows) {
    const Workload& w = row.workload;
    JsonObject json;
    json.add("workload", w.name).add("kind", w.decode ? "decode" : "prefill");
    json.add("shape", w.shape_text()).add("format", w.format_text());
    json.add("tokens", w.tokens).add("h_q", w.h_q).add("d_qk", w.d_qk);
    json.add("topk", int64_t{w.main.topk}).add("extra_topk", int64_t{w.extra.topk});
    json.add("s_kv", w.main.s_kv).add("sink", w.sink).add("sigma", w.sigma);
    if (report.gpu) json.add("path", row.path);
    if (!row.not_covered.empty()) json.add("not_covered", row.not_covered);
    if (!row.error.empty()) json.add("error", row.error);
    json.add("check_passed", row.not_covered.empty() && row.error.empty() && row.check.passed);
    json.add("check", check_text(row));
    if (row.check.passed) {
      char digest[9];
      std::snprintf(digest, sizeof digest, "%08x", row.check.outputs_digest);
      json.add("outputs_digest", std::string(digest));
    }
    json.add("reps", row.times.count());
    const bool t = row.timed();
    json.add("us", t ? row.seconds() * 1e6 : kNotMeasured);
    json.add("us_min", t ? row.times.min_s * 1e6 : kNotMeasured);
    json.add("us_max", t ? row.times.max_s * 1e6 : kNotMeasured);
    if (t) {
      std::vector<double> reps_us;
      for (const double seconds : row.times.in_order_s) reps_us.push_back(seconds * 1e6);
      json.add("reps_us", reps_us);
    }
    json.add("tokens_per_s", t ? row.tokens_per_s() : kNotMeasured);
    json.add("tflops", t ? row.tflops() : kNotMeasured);
    json.add("gbps", t ? row.gbps() : kNotMeasured);
    json.add("flashmla_us", row.anchor_us);
    json.add("ratio", row.ratio_to_flashmla());
    if (t && !row.placement_seconds.empty()) {
      std::vector<double> medians;
      for (const double seconds : row.placement_seconds) medians.push_back(seconds * 1e6);
      json.add("placements_us", medians);
    }
    json.add("setup_s", row.setup_wall_s).add("check_s", row.check_wall_s);
    json.add("timing_s", row.timing_wall_s);
    if (row.timed() && row.sm_clock.measured()) {
      const SmClockStats& c = row.sm_clock;
      JsonObject clock;
      clock.add("samples", c.samples)
          .add("min_mhz", int64_t{c.min_mhz})
          .add("mean_mhz", c.mean_mhz)
          .add("max_mhz", int64_t{c.max_mhz})
          .add("event_reasons", clock_event_reason_names(c.reasons));
      if (c.energy_read) clock.add("energy_updates", c.energy_updates);
      if (c.energy_measured()) {
        clock.add("energy_mj_per_rep", row.energy_mj_per_rep())
            .add("mean_w", c.mean_watts());
      }
      if (c.power_measured()) {
        clock.add("power_readings", c.power_readings)
            .add("power_changes", c.power_changes)
            .add("power_mean_w", c.power_mean_w);
      }
      json.add("sm_clock", clock);
    }
    rows.push_back(json);
  }
  JsonObject out;
  out.add("command", "bench").add("ok", report.all_passed()).add("backend", report.backend);
  out.add("note", report.note).add("gpu", report.gpu);
  if (report.gpu && !report.sm_clock_unavailable.empty()) {
    out.add("sm_clock_unavailable", report.sm_clock_unavailable);
  }
  if (report.gpu) {
    out.add("rep_gap_ms", report.rep_gap_ms);
    out.add("ceilings", JsonObject()
                            .add("copy_gbps", report.ceilings.copy_gbps)
                            .add("gemm_bf16_tflops", report.ceilings.gemm_tflops));
  }
  out.add("rows", rows);
  return out;
}

}  // namespace smla::cli
