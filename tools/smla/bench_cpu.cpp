// The CPU half of `smla bench`: DeepSeek-V3.2 and V4 shapes at full width (heads, top-k,
// formats, page sizes as in production), scaled down only in the number of query tokens.

#include <utility>
#include <vector>

#include "bench_backends.hpp"
#include "cli.hpp"
#include "smla/ops.hpp"
#include "stopwatch.hpp"

namespace smla::cli {

namespace {

// Query tokens per workload. The reference spends ~0.5 GFLOP per V3.2 token (128 heads x
// 2048 slots x 1088 x 2), so a handful of tokens is already a second of work on two cores.
struct CpuWorkload {
  Workload shape;  // tokens filled in below
  int64_t tokens;
  int64_t quick_tokens;
};

std::vector<CpuWorkload> cpu_workloads() {
  // V3.2: d_qk 576, fp8_v32 pages of 64, 128 heads, top-k 2048; decode with the sink on,
  // as in BENCHMARKS.md's decode rows.
  const Workload v32_prefill{
      .name = "V3.2 prefill", .d_qk = 576, .h_q = 128, .main = {KvFormat::fp8_v32, 64, 8192, 2048}};
  const Workload v32_decode{.name = "V3.2 decode",
                            .decode = true,
                            .d_qk = 576,
                            .h_q = 128,
                            .batch = 2,
                            .main = {KvFormat::fp8_v32, 64, 4096, 2048},
                            .sink = true};
  // V4: d_qk 512, fp8_ds_mla, 64 heads, sink on; a compressed-cache selection of 512 plus a
  // second pool (prefill: a 128-token window in pages of 256; decode: BENCHMARKS.md's
  // 128-wide main pool in pages of 256 plus 512 selected from an extra pool of pages of 64).
  const Workload v4_prefill{.name = "V4 prefill",
                            .d_qk = 512,
                            .h_q = 64,
                            .main = {KvFormat::fp8_ds_mla, 64, 8192, 512},
                            .extra = {KvFormat::fp8_ds_mla, 256, 4096, 128},
                            .sink = true};
  const Workload v4_decode{.name = "V4 decode",
                           .decode = true,
                           .d_qk = 512,
                           .h_q = 64,
                           .batch = 2,
                           .main = {KvFormat::fp8_ds_mla, 256, 4096, 128},
                           .extra = {KvFormat::fp8_ds_mla, 64, 4096, 512},
                           .sink = true};
  // Decode token counts are multiples of the batch: each request gets T / batch tokens.
  return {{v32_prefill, 4, 1}, {v32_decode, 4, 2}, {v4_prefill, 8, 2}, {v4_decode, 4, 2}};
}

double seconds_of(const AttendArgs& args, std::vector<unsigned char>& workspace) {
  Stopwatch call;
  const Status status =
      attend(args, {workspace.empty() ? nullptr : workspace.data(), workspace.size()});
  const double seconds = call.lap();
  check_status(status, "bench: attend");
  return seconds;
}

BenchRow run_row(const Workload& workload, int reps, uint64_t seed) {
  BenchRow row;
  row.workload = workload;
  Stopwatch wall;
  const HostProblem problem = make_problem(workload, seed);
  const int64_t outputs = workload.tokens * workload.h_q;
  SampledOutputs got;
  got.out.resize(static_cast<size_t>(outputs * kDv));
  got.lse.resize(static_cast<size_t>(outputs));
  got.max_logits.resize(static_cast<size_t>(outputs));
  // Every token is checked: T is small on the CPU.
  got.tokens = sample_tokens(workload.tokens, workload.tokens);
  const AttendArgs args =
      problem.attend_args(got.out.data(), got.lse.data(), got.max_logits.data());

  size_t workspace_bytes = 0;
  Status status = attend_workspace_size(args, &workspace_bytes);
  std::vector<unsigned char> workspace(workspace_bytes);
  if (status.ok()) {
    status = attend(args, {workspace_bytes ? workspace.data() : nullptr, workspace_bytes});
  }
  row.setup_wall_s = wall.lap();
  if (!status.ok()) {
    row.error = status.message() + " [" + status_code_name(status.code()) + "]";
    return row;
  }
  row.check = check_against_float64(problem, got);
  row.check_wall_s = wall.lap();
  if (!row.check.passed) return row;

  // The first call above was the warm-up; each timed call rewrites the checked outputs, and
  // the library promises bitwise-equal results for equal inputs (SPEC §1).
  std::vector<double> times;
  for (int r = 0; r < reps; ++r) times.push_back(seconds_of(args, workspace));
  row.times = summarize_reps(std::move(times));
  row.timing_wall_s = wall.lap();
  if (workload.decode) row.bytes = problem.bytes_moved();
  return row;
}

}  // namespace

BenchReport run_cpu_bench(const BenchOptions& options, const std::string& note) {
  BenchReport report;
  report.backend = "cpu";
  report.note = note;
  const int reps = options.reps > 0 ? options.reps : (options.quick ? 1 : 3);
  // A row's seed is its position, so a row has the same data whichever rows run with it.
  uint64_t seed = 2026;
  for (const CpuWorkload& entry : cpu_workloads()) {
    Workload shape = entry.shape;
    shape.tokens = options.quick ? entry.quick_tokens : entry.tokens;
    const Workload workload = options.adjusted(shape);
    if (options.selects(workload)) report.rows.push_back(run_row(workload, reps, seed));
    ++seed;
  }
  return report;
}

}  // namespace smla::cli
