// `smla bench`: checked, then timed. On a CUDA device it reproduces BENCHMARKS.md's anchor
// rows; without one (or with --backend cpu, or when the GPU backend is not built) it runs the
// CPU reference on scaled-down DeepSeek workloads and says so, unless --backend forced a GPU
// path, which then fails.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "args.hpp"
#include "bench_backends.hpp"
#include "cli.hpp"
#include "cuda/timeline.hpp"
#include "cuda_devices.hpp"
#include "tensor_io.hpp"

namespace smla::cli {

namespace {

const CommandSpec kSpec{
    "bench",
    "smla bench [--rows prefill|decode|all] [--match TEXT] [--heads N] [--tokens N] [--format F]\n"
    "                  [--sigma S] [--reps N] [--backend B] [--quick] [--timeline]\n"
    "                  [--placements N] [--rep-gap MS]",
    "Runs DeepSeek-V3.2 (d_qk 576, fp8_v32, 128 heads, top-k 2048) and V4 (d_qk 512, fp8_ds_mla,\n"
    "64 heads, sink, extra pool) shaped prefill and decode workloads. Each row is first checked\n"
    "against a float64 evaluation of SPEC section 1 on a sample of tokens with SPEC's tolerances;\n"
    "a row that fails reports no time, and the command exits 1.\n"
    "With a CUDA device: BENCHMARKS.md's anchor rows (L2 flushed before each repetition, CUDA\n"
    "events, median), the device's copy and bf16 GEMM ceilings, and FlashMLA's H200 time per row.\n"
    "Without one: the CPU reference backend, T scaled down so it finishes in seconds.",
    {{"--rows", "R", "prefill | decode | all (default all)"},
     {"--match", "TEXT",
      "only the rows whose shape and format, as printed, contain TEXT (e.g. 'topk=16384')"},
     {"--heads", "N",
      "run every row with h_q = N (1..128) instead of its own; such a GPU row has no FlashMLA "
      "figure"},
     {"--tokens", "N",
      "run every prefill row with T = N query tokens (1..65536) instead of its own (4096 on a "
      "GPU); such a GPU row has no FlashMLA figure. Decode rows keep theirs"},
     {"--format", "F",
      "run every row with its pools in format F (bf16, fp8_v32, fp8_ds_mla, int8_ds_mla), "
      "leaving out the rows whose d_qk F cannot hold; a GPU row whose formats then differ from "
      "its anchor's has no FlashMLA figure"},
     {"--sigma", "S",
      "q and kv ~ N(0, S^2) (default 0.1, BENCHMARKS.md's data, on which FlashMLA's figures were "
      "measured). S = 1 is closer to a model's normalized latents: the Hopper path then takes "
      "its P-rounding residual product on most steps (docs/hopper-path.md)"},
     {"--reps", "N", "timed repetitions, median reported (default: CPU 3, 1 with --quick; GPU 20)"},
     {"--backend", "B",
      "auto | cpu | portable | hopper (default auto; portable and hopper set SMLA_BACKEND and "
      "fail where no GPU can run them)"},
     {"--quick", nullptr, "fewer tokens on the CPU, the first row of each kind on the GPU"},
     {"--timeline", nullptr,
      "with --backend hopper, after each row one more call whose kernels' per-CTA timeline is "
      "printed to stderr (builds configured with -DSMLA_KERNEL_TIMELINE=ON)"},
     {"--placements", "N",
      "with --backend hopper or portable, time each row again on N - 1 more uploads of its data "
      "(1..8, default 1), all held at once so that each sits at other addresses, and print "
      "each upload's median: whether a row's time depends on where its buffers lie"},
     {"--rep-gap", "MS",
      "on a GPU, leave the device idle MS milliseconds (0..1000, default 0) before each timed "
      "repetition: whether a row's slow repetitions come from the card's power or clock state "
      "after the previous ones"}},
    0,
    0};

RowSelection parse_rows(const Args& args) {
  const std::string rows = args.value("--rows").value_or("all");
  if (rows == "prefill") return RowSelection::prefill;
  if (rows == "decode") return RowSelection::decode;
  if (rows == "all") return RowSelection::all;
  throw usage_error("--rows expects prefill, decode or all, got '" + rows + "'");
}

BenchReport run(const BenchOptions& options) {
  if (options.backend == "cpu") return run_cpu_bench(options, "forced by --backend cpu");
  // A forced GPU path that cannot run is a failure, not a silent run of the CPU reference.
  const bool forced_gpu = options.backend != "auto";
  const CudaDeviceList list = cuda_devices();
  if (list.devices.empty()) {
    if (forced_gpu) throw failure("--backend " + options.backend + ": " + list.why_none);
    return run_cpu_bench(options, list.why_none);
  }
  std::string why_not;
  if (std::optional<BenchReport> report = run_gpu_bench(options, &why_not)) return *report;
  if (forced_gpu) throw failure("--backend " + options.backend + ": " + why_not);
  return run_cpu_bench(options,
                       "GPU backend unavailable: " + why_not + "; fell back to the CPU reference");
}

}  // namespace

int bench_command(const std::vector<std::string>& argv) {
  const Args args(kSpec, argv);
  if (args.print_help_if_asked()) return kExitOk;
  BenchOptions options;
  options.rows = parse_rows(args);
  options.reps = static_cast<int>(args.integer("--reps", 0, 1, 10000));
  options.backend = args.value("--backend").value_or("auto");
  options.quick = args.flag("--quick");
  options.json = args.json();
  options.match = args.value("--match").value_or("");
  options.heads = static_cast<int>(args.integer("--heads", 0, 1, 128));
  options.prefill_tokens = args.integer("--tokens", 0, 1, 65536);
  if (args.value("--format")) options.format = format_option(args, "--format");
  // Up to 8: beyond |V| ~ 65 SPEC's bound cannot hold for bf16 products at all
  // (src/cuda/hopper/p_rounding.hpp), and N(0, 8^2) peaks near 45.
  options.sigma = args.real("--sigma", kBenchSigma, 1e-3, 8.0);
  if (options.backend != "auto" && options.backend != "cpu" && options.backend != "portable" &&
      options.backend != "hopper") {
    throw usage_error("--backend expects auto, cpu, portable or hopper, got '" + options.backend +
                      "'");
  }
  options.timeline = args.flag("--timeline");
  if (options.timeline && !timeline::kEnabled) {
    throw usage_error(
        "--timeline: this build records no kernel timeline (configure with "
        "-DSMLA_KERNEL_TIMELINE=ON)");
  }
  // Only the Hopper path's kernels mark a timeline, into the head of its workspace.
  if (options.timeline && options.backend != "hopper") {
    throw usage_error("--timeline records the Hopper path's kernels: add --backend hopper");
  }
  options.placements = static_cast<int>(args.integer("--placements", 1, 1, 8));
  if (options.placements > 1 && options.backend != "hopper" && options.backend != "portable") {
    throw usage_error(
        "--placements times GPU rows at several addresses: add --backend hopper or portable");
  }
  options.rep_gap_ms = static_cast<int>(args.integer("--rep-gap", 0, 0, 1000));
  if (options.rep_gap_ms > 0 && options.backend != "hopper" && options.backend != "portable") {
    throw usage_error(
        "--rep-gap idles a GPU between repetitions: add --backend hopper or portable");
  }
  // The library reads SMLA_BACKEND to force a GPU path (SPEC §6); set it before any call.
  if (options.backend == "portable" || options.backend == "hopper") {
    setenv("SMLA_BACKEND", options.backend.c_str(), 1);
  }

  const BenchReport report = run(options);
  if (report.rows.empty()) {
    throw usage_error("no " + std::string(report.gpu ? "GPU" : "CPU") +
                      " bench row matches --rows, --format and --match '" + options.match + "'");
  }
  if (options.json) {
    std::printf("%s\n", report_json(report).str().c_str());
  } else {
    print_report(report);
  }
  return report.all_passed() ? kExitOk : kExitFailure;
}

}  // namespace smla::cli
