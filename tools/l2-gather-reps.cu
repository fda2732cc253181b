// Whether the card's own gather rate moves between launches, as the h_q = 128 d_qk 576 prefill
// rows' repetitions do (perf-notes Findings s68: 5-14% between the fastest and the slowest of
// twenty, while the h_q = 64 rows stay within 1%). On an H100 they do not (perf-log s69): the
// attention rows' slow repetitions are the SM clock after back-to-back load. No
// attention here: each CTA reads the 1152-byte rows (a bf16 d_qk 576 row) that random indices
// select, 2048 per token, 4096 tokens, with 16-byte loads and nothing else, and every launch is
// timed as `smla bench` times a row: 256 MiB written before it (the L2 flush), CUDA events
// around it, twenty repetitions after a warm-up.
//   pool rows  8192 (9.4 MB, inside the L2, as the s_kv 8192 row) or 131072 (151 MB, past it)
//   CTAs/token 2: 132 CTAs, a token's two in consecutive block indices walking the same tokens,
//              as the two head tiles of h_q = 128 do (so the second read of a row meets the
//              first in L2); 1: each CTA its own tokens, as h_q = 64
//   threads    512 per CTA (as many loads in flight as the card takes), or 128 (fewer: a
//              rate nearer the attention rows' ~5 TB/s, in case the spread needs a given load)
// Prints per case the fastest, median and slowest repetition, (slowest - fastest) / median, and
// the rows' bytes per second at the median. If the 2-CTA cases spread like the attention rows,
// the spread is the card's (its L2 and fabric), not the kernel's; if they stay within ~1%, it is
// something of the kernel's own.
//
// Usage: l2-gather-reps [repetitions]   (default 20; exit 1 on a CUDA error)
// Build: nvcc -std=c++17 -arch=sm_90 tools/l2-gather-reps.cu -o l2-gather-reps
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

namespace {

constexpr int kMaxThreads = 512;
constexpr int kRowBytes = 1152;                // 576 bf16 values
constexpr int kRowChunks = kRowBytes / 16;     // 72 loads of 16 bytes
constexpr int kTopk = 2048;
constexpr int kTokens = 4096;
constexpr int64_t kFlushBytes = int64_t{256} << 20;
constexpr int kUnroll = 8;                     // loads in flight per thread

struct Case {
  int pool_rows;
  int ctas_per_token;
  int threads;
};

// CTA b walks tokens b / per_token, + units, ...; its threads read every chunk of the token's
// rows, kUnroll loads issued before any is used. The XOR of what was read goes to `sink` so that
// no load is dropped.
__global__ void __launch_bounds__(kMaxThreads)
    gather_kernel(const uint4* pool, const int32_t* indices, int per_token, uint4* sink) {
  const int threads = static_cast<int>(blockDim.x);
  const int units = static_cast<int>(gridDim.x) / per_token;
  const int unit = static_cast<int>(blockIdx.x) / per_token;
  uint4 acc = make_uint4(0, 0, 0, 0);
  constexpr int kChunks = kTopk * kRowChunks;
  for (int t = unit; t < kTokens; t += units) {
    const int32_t* token_rows = indices + static_cast<int64_t>(t) * kTopk;
    for (int base = static_cast<int>(threadIdx.x); base < kChunks; base += threads * kUnroll) {
      uint4 v[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int i = base + u * threads;
        v[u] = make_uint4(0, 0, 0, 0);
        if (i < kChunks) {
          const int64_t row = token_rows[i / kRowChunks];
          v[u] = __ldcg(pool + row * kRowChunks + i % kRowChunks);
        }
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        acc.x ^= v[u].x;
        acc.y ^= v[u].y;
        acc.z ^= v[u].z;
        acc.w ^= v[u].w;
      }
    }
  }
  sink[blockIdx.x * threads + threadIdx.x] = acc;
}

bool check(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return true;
  std::fprintf(stderr, "l2-gather-reps: %s: %s\n", what, cudaGetErrorString(err));
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 20;
  if (reps < 1) {
    std::fprintf(stderr, "usage: l2-gather-reps [repetitions >= 1]\n");
    return 2;
  }
  cudaDeviceProp prop{};
  if (!check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties")) return 1;
  const int ctas = prop.multiProcessorCount / 2 * 2;  // whole pairs of CTAs
  std::printf("%s, %d CTAs, %d tokens x %d rows of %d B, %d repetitions\n", prop.name, ctas,
              kTokens, kTopk, kRowBytes, reps);

  const Case cases[] = {{8192, 2, 512},   {8192, 2, 128},   {8192, 1, 512},
                        {131072, 2, 512}, {131072, 2, 128}, {131072, 1, 512}};
  constexpr int kMaxRows = 131072;
  void* pool = nullptr;
  int32_t* indices = nullptr;
  void* flush = nullptr;
  uint4* sink = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  if (!check(cudaMalloc(&pool, size_t{kMaxRows} * kRowBytes), "cudaMalloc(pool)") ||
      !check(cudaMalloc(&indices, sizeof(int32_t) * kTokens * kTopk), "cudaMalloc(indices)") ||
      !check(cudaMalloc(&flush, kFlushBytes), "cudaMalloc(flush)") ||
      !check(cudaMalloc(&sink, sizeof(uint4) * ctas * kMaxThreads), "cudaMalloc(sink)") ||
      !check(cudaMemset(pool, 0x3c, size_t{kMaxRows} * kRowBytes), "cudaMemset(pool)") ||
      !check(cudaEventCreate(&start), "cudaEventCreate") ||
      !check(cudaEventCreate(&stop), "cudaEventCreate")) {
    return 1;
  }
  std::mt19937 rng(1234);
  std::vector<int32_t> host_indices(size_t{kTokens} * kTopk);
  std::printf("%-10s %-10s %-8s %10s %10s %10s %8s %8s\n", "pool rows", "CTAs/token",
              "threads", "min us", "median us", "max us", "spread", "GB/s");
  for (const Case& c : cases) {
    std::uniform_int_distribution<int32_t> slot(0, c.pool_rows - 1);
    for (int32_t& i : host_indices) i = slot(rng);
    if (!check(cudaMemcpy(indices, host_indices.data(), sizeof(int32_t) * host_indices.size(),
                          cudaMemcpyHostToDevice),
               "cudaMemcpy(indices)")) {
      return 1;
    }
    std::vector<float> times;
    for (int r = -1; r < reps; ++r) {  // r = -1: the warm-up
      if (!check(cudaMemsetAsync(flush, r & 0xff, kFlushBytes), "cudaMemsetAsync(flush)") ||
          !check(cudaEventRecord(start), "cudaEventRecord")) {
        return 1;
      }
      gather_kernel<<<ctas, c.threads>>>(static_cast<const uint4*>(pool), indices,
                                         c.ctas_per_token, sink);
      float ms = 0;
      if (!check(cudaGetLastError(), "gather_kernel") ||
          !check(cudaEventRecord(stop), "cudaEventRecord") ||
          !check(cudaEventSynchronize(stop), "cudaEventSynchronize") ||
          !check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime")) {
        return 1;
      }
      if (r >= 0) times.push_back(1000.0f * ms);
    }
    std::sort(times.begin(), times.end());
    const float median = times[times.size() / 2];
    // Every token's rows, read by each of its CTAs.
    const double read = double{kTokens} * c.ctas_per_token * kTopk * kRowBytes;
    std::printf("%-10d %-10d %-8d %10.1f %10.1f %10.1f %7.1f%% %8.0f\n", c.pool_rows,
                c.ctas_per_token, c.threads, times.front(), median, times.back(),
                100.0 * (times.back() - times.front()) / median, read / (median * 1e-6) / 1e9);
  }
  return 0;
}
