// What `smla bench` measured, and how it is shown: a text table or one JSON object.
#pragma once

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "bench_check.hpp"
#include "bench_workload.hpp"
#include "json.hpp"
#include "rep_times.hpp"
#include "sm_clock_sampler.hpp"

namespace smla::cli {

enum class RowSelection { prefill, decode, all };

struct BenchOptions {
  RowSelection rows = RowSelection::all;
  int reps = 0;         // 0: the backend's default (CPU 3, GPU 20)
  std::string backend;  // auto | cpu | portable | hopper
  bool quick = false;
  bool json = false;
  std::string match;  // non-empty: only rows whose "shape format" text contains it
  int heads = 0;      // > 0: every row runs with this h_q instead of its own (--heads)
  int64_t prefill_tokens = 0;      // > 0: every prefill row runs with this T (--tokens)
  std::optional<KvFormat> format;  // every row's pools in this format (--format)
  double sigma = kBenchSigma;      // spread of the random q and kv (--sigma)
  bool timeline = false;  // print each GPU row's kernel timeline (--timeline, timeline builds)
  int placements = 1;     // GPU rows: timed on this many uploads of their data (--placements)
  int rep_gap_ms = 0;     // GPU: the device left idle this long before each repetition

  // `workload` with --heads, --tokens, --format and --sigma applied: what a row runs and what
  // --match sees.
  Workload adjusted(Workload workload) const;
  // Whether a row of (adjusted) `workload` runs: its kind per --rows, its text per --match,
  // and pools whose format holds its d_qk (--format int8_ds_mla leaves out the d_qk 576 rows).
  bool selects(const Workload& workload) const;
};

inline constexpr double kNotMeasured = NAN;

struct BenchRow {
  Workload workload;
  std::string path;         // GPU rows: the forced path ("hopper", "portable") or "auto"
  std::string not_covered;  // the forced GPU path refused the row: its message (not a failure)
  std::string error;        // attend failed: its message; nothing else is set
  CheckResult check;
  RepTimes times;                   // the timed repetitions; set only when the check passed
  double bytes = kNotMeasured;      // decode rows: BENCHMARKS.md byte count
  double anchor_us = kNotMeasured;  // FlashMLA on an H200, for GPU anchor rows
  // Host wall seconds of the row's phases, to plan runs by: making its data (and on the GPU
  // uploading it, the plan and the warm-up calls), the check, the timed repetitions.
  double setup_wall_s = 0;
  double check_wall_s = 0;
  double timing_wall_s = 0;
  // GPU rows: the SM clock while the timed repetitions ran (samples 0 where NVML is absent).
  SmClockStats sm_clock;
  // GPU rows with --placements N: the median of every upload of the row's data, each at
  // addresses of its own; the first is seconds() (`times` is the first upload's).
  std::vector<double> placement_seconds;

  // The median repetition: the row's time (NaN when it was not timed).
  double seconds() const { return times.median_s; }
  bool timed() const { return !std::isnan(seconds()); }
  double tflops() const { return workload.flops() / seconds() * 1e-12; }
  double gbps() const { return bytes / seconds() * 1e-9; }
  double tokens_per_s() const { return static_cast<double>(workload.tokens) / seconds(); }
  // FlashMLA's time over ours: above 1 where we are faster (NaN untimed or without an anchor).
  double ratio_to_flashmla() const { return anchor_us / (seconds() * 1e6); }
  // The GPU's energy over the timed runs per repetition, mJ: their mean power (between the
  // counter's updates, sm_clock.mean_watts) times their span (NaN unless energy_measured()).
  double energy_mj_per_rep() const {
    return sm_clock.mean_watts() * sm_clock.span_s * 1e3 / times.count();
  }
};

struct Ceilings {
  double copy_gbps = kNotMeasured;    // device-to-device copy, bytes read + written
  double gemm_tflops = kNotMeasured;  // cuBLAS bf16 8192^3
};

struct BenchReport {
  std::string backend;  // "cpu" or "cuda:0 NVIDIA H200 (SMLA_BACKEND=...)"
  std::string note;     // why the CPU ran ("no CUDA device"), or "" on the GPU
  bool gpu = false;
  Ceilings ceilings;
  std::vector<BenchRow> rows;
  std::string sm_clock_unavailable;  // GPU: why no row's SM clock was sampled ("" if sampled)
  int rep_gap_ms = 0;                // GPU: the device idle this long before each repetition

  // Every row that ran passed its check, and at least one ran.
  bool all_passed() const;
};

void print_report(const BenchReport& report);
JsonObject report_json(const BenchReport& report);

}  // namespace smla::cli
