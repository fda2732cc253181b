// The GPU half of `smla bench`: BENCHMARKS.md's anchor rows through the public API on CUDA
// device pointers, each checked on a sample of tokens against float64 on the host, then
// timed with CUDA events (L2 flushed before each repetition, median after warm-up; plan and
// workspace made outside the timed region), next to the device's copy and GEMM ceilings.
#include "bench_backends.hpp"

#if SMLA_WITH_CUDA

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iterator>
#include <memory>
#include <thread>
#include <utility>
#include <vector>
#include <string>

#include "bench_anchors.hpp"
#include "bench_timeline.hpp"
#include "cli.hpp"
#include "cuda/timeline.hpp"
#include "cuda_devices.hpp"
#include "rep_times.hpp"
#include "sm_clock_sampler.hpp"
#include "smla/ops.hpp"
#include "stopwatch.hpp"

namespace smla::cli {

namespace {

// BENCHMARKS.md: write at least 256 MiB before each repetition (an H200's L2 is 60 MB).
constexpr size_t kFlushBytes = size_t{256} << 20;
constexpr int kWarmups = 3;
constexpr int kSampleTokens = 8;  // tokens checked per row (each costs up to ~2 GFLOP of float64)
constexpr int kGemmN = 8192;
constexpr size_t kCopyBytes = size_t{1} << 30;

void cuda_check(cudaError_t err, const char* what) {
  if (err != cudaSuccess) {
    throw failure(std::string("bench: ") + what + ": " + cudaGetErrorString(err));
  }
}

// Device memory owned by the bench for the duration of one row.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t bytes) : bytes_(bytes) {
    if (bytes > 0) cuda_check(cudaMalloc(&ptr_, bytes), "cudaMalloc");
  }
  template <class T, class Allocator>
  explicit DeviceBuffer(const std::vector<T, Allocator>& host)
      : DeviceBuffer(host.size() * sizeof(T)) {
    if (bytes_ > 0) {
      cuda_check(cudaMemcpy(ptr_, host.data(), bytes_, cudaMemcpyHostToDevice), "upload");
    }
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (ptr_ != nullptr) cudaFree(ptr_);
  }
  void* get() const { return ptr_; }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

// Times work on a stream: L2 flush, event, work, event; `reps` times, each repetition after
// `gap` of the device idle (the previous repetition synchronized) when that is not zero.
class Timer {
 public:
  Timer(cudaStream_t stream, std::chrono::milliseconds gap)
      : stream_(stream), gap_(gap), flush_(kFlushBytes) {
    cuda_check(cudaEventCreate(&start_), "cudaEventCreate");
    cuda_check(cudaEventCreate(&stop_), "cudaEventCreate");
  }
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;
  ~Timer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }

  // Evicts L2 by writing a buffer larger than it. A different byte each repetition, so the
  // flush is real writes and not a no-op pattern.
  void flush_l2(int rep) {
    cuda_check(cudaMemsetAsync(flush_.get(), rep & 0xff, flush_.bytes(), stream_), "L2 flush");
  }

  RepTimes time_reps(int reps, const std::function<void()>& work) {
    std::vector<double> times;
    for (int r = 0; r < reps; ++r) {
      if (gap_.count() > 0) std::this_thread::sleep_for(gap_);
      flush_l2(r);
      cuda_check(cudaEventRecord(start_, stream_), "cudaEventRecord");
      work();
      cuda_check(cudaEventRecord(stop_, stream_), "cudaEventRecord");
      cuda_check(cudaEventSynchronize(stop_), "cudaEventSynchronize");
      float ms = 0;
      cuda_check(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
      times.push_back(ms * 1e-3);
    }
    return summarize_reps(std::move(times));
  }

 private:
  cudaStream_t stream_;
  std::chrono::milliseconds gap_;
  DeviceBuffer flush_;
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
};

Ceilings measure_ceilings(cudaStream_t stream, Timer& timer, int reps) {
  Ceilings ceilings;
  {
    DeviceBuffer src(kCopyBytes), dst(kCopyBytes);
    cuda_check(cudaMemsetAsync(src.get(), 1, kCopyBytes, stream), "cudaMemset");
    const double t = timer.time_reps(reps, [&] {
      cuda_check(
          cudaMemcpyAsync(dst.get(), src.get(), kCopyBytes, cudaMemcpyDeviceToDevice, stream),
          "device-to-device copy");
    }).median_s;
    ceilings.copy_gbps = 2.0 * kCopyBytes / t * 1e-9;  // bytes read + written
  }
  const size_t matrix_bytes = size_t{kGemmN} * kGemmN * 2;
  DeviceBuffer a(matrix_bytes), b(matrix_bytes), c(matrix_bytes);
  // 0x3c3c is the bf16 0.0115: finite operands, so the GEMM runs at its real rate.
  cuda_check(cudaMemsetAsync(a.get(), 0x3c, matrix_bytes, stream), "cudaMemset");
  cuda_check(cudaMemsetAsync(b.get(), 0x3c, matrix_bytes, stream), "cudaMemset");
  cublasHandle_t handle = nullptr;
  if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) throw failure("bench: cublasCreate failed");
  cublasSetStream(handle, stream);
  const float alpha = 1.0f, beta = 0.0f;
  cublasStatus_t status = CUBLAS_STATUS_SUCCESS;
  auto gemm = [&] {
    const cublasStatus_t s =
        cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, kGemmN, kGemmN, kGemmN, &alpha, a.get(),
                     CUDA_R_16BF, kGemmN, b.get(), CUDA_R_16BF, kGemmN, &beta, c.get(), CUDA_R_16BF,
                     kGemmN, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    if (s != CUBLAS_STATUS_SUCCESS) status = s;
  };
  for (int i = 0; i < kWarmups; ++i) gemm();
  const double t = timer.time_reps(reps, gemm).median_s;
  cublasDestroy(handle);
  if (status != CUBLAS_STATUS_SUCCESS) throw failure("bench: cublasGemmEx failed");
  ceilings.gemm_tflops = 2.0 * kGemmN * kGemmN * static_cast<double>(kGemmN) / t * 1e-12;
  return ceilings;
}

void to_device(TensorView& view, const DeviceBuffer& buffer) {
  if (!view.present()) return;
  view.data = buffer.get();
  view.device = Device::cuda(0);
}

void to_device(KvPool& pool, const DeviceBuffer& buffer) {
  if (!pool.present()) return;
  pool.data = buffer.get();
  pool.device = Device::cuda(0);
}

bool backend_missing(const Status& status) {
  return status.code() == StatusCode::not_built || status.code() == StatusCode::unsupported;
}

// A forced GPU path declining a call it does not cover (src/cuda/backend.cu): the row says
// so and the others still run on that path.
bool forced_path_declined(const Status& status) {
  return status.code() == StatusCode::unsupported &&
         status.message().find("SMLA_BACKEND=") != std::string::npos;
}

// The GPU path a row runs on: the forced one, or "auto" (the library picks per call:
// docs/hopper-path.md says which calls take the Hopper path).
std::string gpu_path() {
  const char* forced = std::getenv("SMLA_BACKEND");
  return forced != nullptr && forced[0] != '\0' ? forced : "auto";
}

// Kernel faults surface at synchronization, not at the launch attend returned from.
Status synchronize(cudaStream_t stream) {
  const cudaError_t err = cudaStreamSynchronize(stream);
  if (err == cudaSuccess) return Status::success();
  return Status(StatusCode::cuda_error, std::string("attend: ") + cudaGetErrorString(err));
}

std::string describe(const Status& status) {
  return status.message() + " [" + status_code_name(status.code()) + "]";
}

// One more call of a timed row, L2 flushed, into zeroed records (a point it does not reach
// stays 0 rather than showing an earlier call's time); prints its timeline to stderr. The
// records are the head of the Hopper path's workspace (src/cuda/timeline.hpp).
Status print_timeline(const Workload& workload, const std::function<Status()>& call,
                      void* workspace, cudaStream_t stream, Timer& timer) {
  cuda_check(cudaMemsetAsync(workspace, 0, timeline::kBytes, stream), "zeroing the timeline");
  timer.flush_l2(0);
  Status status = call();
  if (status.ok()) status = synchronize(stream);
  if (!status.ok()) return status;
  std::vector<uint64_t> records(timeline::kBytes / 8);
  cuda_check(cudaMemcpy(records.data(), workspace, timeline::kBytes, cudaMemcpyDeviceToHost),
             "copying the timeline back");
  std::fprintf(stderr, "timeline of %s %s %s:\n%s", workload.name.c_str(),
               workload.shape_text().c_str(), workload.format_text().c_str(),
               describe_timeline(records).c_str());
  return status;
}

// One placement of a row in device memory: its inputs uploaded from the host problem, its
// outputs, plan and workspace, and the call's arguments pointing at them. A row can hold
// several at once (--placements) to time the same call at other addresses.
class RowPlacement {
 public:
  RowPlacement(const HostProblem& problem, int64_t outputs)
      : q_(problem.q),
        sink_(problem.sink),
        kv_(problem.main.bytes),
        indices_(problem.main.indices),
        extra_kv_(problem.extra.bytes),
        extra_indices_(problem.extra.indices),
        out_(static_cast<size_t>(outputs) * kDv * 2),
        lse_(static_cast<size_t>(outputs) * 4),
        max_logits_(static_cast<size_t>(outputs) * 4),
        args_(problem.attend_args(out_.get(), lse_.get(), max_logits_.get())) {
    to_device(args_.q, q_);
    to_device(args_.kv, kv_);
    to_device(args_.indices, indices_);
    to_device(args_.extra_kv, extra_kv_);
    to_device(args_.extra_indices, extra_indices_);
    to_device(args_.sink, sink_);
    for (TensorView* view : {&args_.out, &args_.lse, &args_.max_logits}) {
      view->device = Device::cuda(0);
    }
  }
  RowPlacement(const RowPlacement&) = delete;
  RowPlacement& operator=(const RowPlacement&) = delete;

  // Plan, workspace and the warm-up calls, all outside the timed region (SPEC §3.2).
  Status prepare(cudaStream_t stream) {
    size_t plan_bytes = 0;
    Status status = plan_size(args_, &plan_bytes);
    if (status.ok()) status = attend_workspace_size(args_, &workspace_bytes_);
    if (!status.ok()) return status;
    plan_buffer_ = std::make_unique<DeviceBuffer>(plan_bytes);
    workspace_ = std::make_unique<DeviceBuffer>(workspace_bytes_);
    plan_.data = plan_buffer_->get();
    plan_.bytes = plan_bytes;
    status = make_plan(args_, &plan_, stream);
    for (int i = 0; i < kWarmups && status.ok(); ++i) status = call(stream);
    return status.ok() ? synchronize(stream) : status;
  }

  Status call(cudaStream_t stream) {
    return attend(args_, {workspace_->get(), workspace_bytes_}, stream, &plan_);
  }
  void* workspace() const { return workspace_->get(); }

  // The outputs of `tokens` (the check's sample), copied back to the host.
  SampledOutputs sampled_outputs(const std::vector<int64_t>& tokens, int h_q) const {
    SampledOutputs got;
    got.tokens = tokens;
    const size_t head_row = static_cast<size_t>(h_q);
    got.out.resize(tokens.size() * head_row * kDv);
    got.lse.resize(tokens.size() * head_row);
    got.max_logits.resize(tokens.size() * head_row);
    for (size_t s = 0; s < tokens.size(); ++s) {
      const size_t t = static_cast<size_t>(tokens[s]);
      cuda_check(cudaMemcpy(got.out.data() + s * head_row * kDv,
                            static_cast<const uint16_t*>(out_.get()) + t * head_row * kDv,
                            head_row * kDv * 2, cudaMemcpyDeviceToHost),
                 "copying out back");
      cuda_check(cudaMemcpy(got.lse.data() + s * head_row,
                            static_cast<const float*>(lse_.get()) + t * head_row, head_row * 4,
                            cudaMemcpyDeviceToHost),
                 "copying lse back");
      cuda_check(cudaMemcpy(got.max_logits.data() + s * head_row,
                            static_cast<const float*>(max_logits_.get()) + t * head_row,
                            head_row * 4, cudaMemcpyDeviceToHost),
                 "copying max_logits back");
    }
    return got;
  }

 private:
  DeviceBuffer q_, sink_, kv_, indices_, extra_kv_, extra_indices_;
  DeviceBuffer out_, lse_, max_logits_;
  AttendArgs args_;
  std::unique_ptr<DeviceBuffer> plan_buffer_, workspace_;
  size_t workspace_bytes_ = 0;
  Plan plan_;
};

// One anchor row. Returns false, with `*why_not` set, when the GPU backend cannot run it. With
// `timeline`, one more call prints the kernels' timeline. With `clock`, the SM clock is
// sampled while the timed repetitions run. With `placements` > 1, the row is timed again on
// that many more uploads of its data, each checked to give the first one's outputs.
bool run_row(const Workload& workload, int reps, int placements, uint64_t seed, bool timeline,
             cudaStream_t stream, Timer& timer, SmClockSampler* clock, BenchRow* row,
             std::string* why_not) {
  row->workload = workload;
  row->path = gpu_path();
  Stopwatch wall;
  const HostProblem problem = make_problem(workload, seed);
  const int64_t outputs = workload.tokens * workload.h_q;
  // Every placement stays allocated until the row ends, so no two share their addresses.
  std::vector<std::unique_ptr<RowPlacement>> held;
  held.push_back(std::make_unique<RowPlacement>(problem, outputs));
  RowPlacement& first = *held.front();
  const Status status = first.prepare(stream);
  row->setup_wall_s = wall.lap();
  if (!status.ok()) {
    if (forced_path_declined(status)) {
      row->not_covered = status.message();
      return true;
    }
    if (backend_missing(status)) {
      *why_not = describe(status);
      return false;
    }
    row->error = describe(status);
    return true;
  }

  // The sampled tokens' outputs against the host problem's float64 evaluation.
  const std::vector<int64_t> sample = sample_tokens(workload.tokens, kSampleTokens);
  row->check = check_against_float64(problem, first.sampled_outputs(sample, workload.h_q));
  row->check_wall_s = wall.lap();
  if (!row->check.passed) return true;

  Status timed_status;
  const auto time_placement = [&](RowPlacement& placement) {
    return timer.time_reps(reps, [&] {
      const Status s = placement.call(stream);
      if (!s.ok()) timed_status = s;
    });
  };
  if (clock != nullptr) clock->start();
  RepTimes times = time_placement(first);
  if (clock != nullptr) row->sm_clock = clock->stop();
  std::vector<double> placement_seconds{times.median_s};
  if (timed_status.ok() && timeline) {
    timed_status = print_timeline(workload, [&] { return first.call(stream); }, first.workspace(),
                                  stream, timer);
  }
  for (int p = 1; p < placements && timed_status.ok(); ++p) {
    held.push_back(std::make_unique<RowPlacement>(problem, outputs));
    RowPlacement& other = *held.back();
    timed_status = other.prepare(stream);
    if (!timed_status.ok()) break;
    if (outputs_digest(other.sampled_outputs(sample, workload.h_q)) !=
        row->check.outputs_digest) {
      row->error = "placement " + std::to_string(p + 1) + " gave other outputs than the first";
      return true;
    }
    placement_seconds.push_back(time_placement(other).median_s);
  }
  row->timing_wall_s = wall.lap();
  if (!timed_status.ok()) {
    row->error = describe(timed_status);
    return true;
  }
  row->times = std::move(times);
  if (placements > 1) row->placement_seconds = std::move(placement_seconds);
  row->bytes = problem.bytes_moved();
  return true;
}

}  // namespace

std::optional<BenchReport> run_gpu_bench(const BenchOptions& options, std::string* why_not) {
  // The rows that run, chosen before the ceilings' seconds of GEMM and copies: a selection
  // without rows is a usage error (cmd_bench.cpp).
  struct SelectedRow {
    size_t anchor;  // index into kAnchors
    Workload workload;
  };
  std::vector<SelectedRow> selected;
  bool first_prefill = true, first_decode = true;
  for (size_t i = 0; i < std::size(kAnchors); ++i) {
    bool& first = kAnchors[i].decode ? first_decode : first_prefill;
    const Workload workload = options.adjusted(anchor_workload(kAnchors[i]));
    if (!options.selects(workload) || (options.quick && !first)) continue;
    first = false;
    selected.push_back({i, workload});
  }
  if (selected.empty()) {
    BenchReport none;
    none.gpu = true;
    return none;
  }
  const CudaDevice device = cuda_devices().devices.at(0);
  cuda_check(cudaSetDevice(0), "cudaSetDevice");
  cudaStream_t stream = nullptr;
  cuda_check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  const int reps = options.reps > 0 ? options.reps : 20;

  BenchReport report;
  report.gpu = true;
  report.rep_gap_ms = options.rep_gap_ms;
  const char* forced = std::getenv("SMLA_BACKEND");
  report.backend = "cuda:0 " + device.name + " (cc " + std::to_string(device.cc_major) + "." +
                   std::to_string(device.cc_minor) + ", " + std::to_string(device.sm_count) +
                   " SMs; SMLA_BACKEND=" + (forced ? forced : "auto") + ")";
  // SMLA_BENCH_SM_CLOCK=0 runs the rows without the sampling thread: how to check that it does
  // not move the times it reports on (tools/bench-env-ab).
  std::unique_ptr<SmClockSampler> clock;
  const char* sample_clock = std::getenv("SMLA_BENCH_SM_CLOCK");
  if (sample_clock != nullptr && std::string(sample_clock) == "0") {
    report.sm_clock_unavailable = "SMLA_BENCH_SM_CLOCK=0";
  } else {
    clock = std::make_unique<SmClockSampler>(device.pci_bus_id);
    report.sm_clock_unavailable = clock->why_unavailable();
  }
  {
    Timer timer(stream, std::chrono::milliseconds(options.rep_gap_ms));
    report.ceilings = measure_ceilings(stream, timer, reps);
    for (const SelectedRow& selection : selected) {
      const Anchor& anchor = kAnchors[selection.anchor];
      BenchRow row;
      // FlashMLA's figure is for the anchor's own token and head counts and formats: a row
      // run with others (--tokens, --heads, --format) has none to compare. It stands at any
      // --sigma: FlashMLA's kernels do the same work whatever the values (it has no residual
      // product to add).
      const Workload own = anchor_workload(anchor);
      const Workload& ran = selection.workload;
      if (ran.tokens == own.tokens && ran.h_q == own.h_q &&
          ran.main.format == own.main.format && ran.extra.format == own.extra.format) {
        row.anchor_us = anchor.flashmla_us;
      }
      // A row's seed is its position, so a row has the same data whichever rows run with it.
      if (!run_row(selection.workload, reps, options.placements, 2026 + selection.anchor,
                   options.timeline, stream, timer, clock.get(), &row, why_not)) {
        cudaStreamDestroy(stream);
        return std::nullopt;
      }
      report.rows.push_back(row);
    }
  }
  cudaStreamDestroy(stream);
  return report;
}

}  // namespace smla::cli

#else  // CPU-only build: the caller sees no device and never gets here.

namespace smla::cli {

std::optional<BenchReport> run_gpu_bench(const BenchOptions&, std::string* why_not) {
  *why_not = "CPU-only build";
  return std::nullopt;
}

}  // namespace smla::cli

#endif
