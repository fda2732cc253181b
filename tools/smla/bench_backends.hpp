// The two halves of `smla bench`: scaled-down DeepSeek workloads on the CPU reference, and
// BENCHMARKS.md's anchor rows on a CUDA device.
#pragma once

#include <optional>
#include <string>

#include "bench_report.hpp"

namespace smla::cli {

// Runs V3.2- and V4-shaped prefill and decode workloads, scaled down in T so the whole run
// takes seconds on two cores. `note` says why the CPU runs ("no CUDA device", ...).
BenchReport run_cpu_bench(const BenchOptions& options, const std::string& note);

// Runs the anchor rows on CUDA device 0. Returns nothing, with `*why_not` set, when the GPU
// backend cannot run them (not_built, unsupported): the caller falls back to the CPU. A row
// that a forced path (SMLA_BACKEND) does not cover is reported in its row instead.
std::optional<BenchReport> run_gpu_bench(const BenchOptions& options, std::string* why_not);

}  // namespace smla::cli
