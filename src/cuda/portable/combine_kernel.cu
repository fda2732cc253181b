// The combine kernel: one warp per (token, head) merges that row's partials by log-sum-exp and
// applies the sink once to the merged result. The lanes read a row's partials side by side (32
// lse at once, four partials' outputs in flight) rather than one memory round trip per partial:
// a decode token can have ~17 partials. Every reduction has a fixed order: deterministic.
#include <cmath>

#include "cuda/cuda_check.hpp"
#include "cuda/portable/combine_kernel.hpp"
#include "cuda/ptx/grid_dependency.cuh"
#include "cuda/ptx/warp_reduce.cuh"
#include "cuda/timeline.hpp"
#include "formats/numeric.hpp"

namespace smla::portable {
namespace {

constexpr int kDv = 512;
// Warps (rows) per block. Four rather than eight: a small split call's combine (decode b = 2:
// 512 rows) then spreads over twice the SMs, each with as many loads in flight as before.
constexpr int kWarps = 4;
constexpr int kColsPerLane = kDv / 32;  // lane l owns columns l + 32 c: coalesced, any alignment
// Partials whose outputs are loaded before any of them is accumulated: 4 x 16 loads in flight
// per lane (122 registers: four blocks, 16 warps, per SM). Two groups in flight took 182
// registers and made large combines slower (docs/perf-notes.md, s43).
constexpr int kGroup = 4;
static_assert(32 % kGroup == 0, "a group of partials never straddles two 32-partial chunks");
constexpr unsigned kFullWarp = 0xffffffffu;

__device__ float to_float(float v) { return v; }
__device__ float to_float(uint16_t v) { return fmt::bf16_to_float(v); }

template <typename PartialT>
__global__ void __launch_bounds__(kWarps * 32)
    combine_kernel(const __grid_constant__ CombineParams<PartialT> p) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int64_t row = int64_t{blockIdx.x} * kWarps + threadIdx.x / 32;
  // Warp 0 of every block has a row, so thread 0 still marks the timeline below.
  if (row >= int64_t{p.tokens} * p.h_q) return;  // whole warps: the shuffles see 32 lanes
  const int64_t t = row / p.h_q;
  const int64_t h = row % p.h_q;
  // The row's partial range and sink are read before the wait: they were complete before the
  // previous kernel started (CombineParams), so beside attend they load while its tail runs.
  const int32_t begin = p.token_partials ? p.token_partials[t] : 0;
  const int32_t end = p.token_partials ? p.token_partials[t + 1] : p.num_partials;
  const float sink = p.sink ? p.sink[h * p.sink_stride] : 0.0f;
  // Launched beside attend (CombineLaunch::beside_previous), the block waits here for its
  // partials; in a plain launch this returns at once.
  ptx::wait_for_prerequisite_grids();
  timeline::mark(p.timeline, timeline::kCombinePoints, timeline::kCombineEntry, threadIdx.x == 0);
  if (p.token_partials != nullptr && end - begin == 1) {  // it ran whole: attend wrote it
    timeline::mark(p.timeline, timeline::kCombinePoints, timeline::kCombineExit, lane == 0);
    return;
  }
  const int64_t stat_offset = t * p.lse_stride_t + h * p.lse_stride_h;
  // Lane l holds partial chunk + l of each 32-partial chunk. Past the row's end the lse is -inf,
  // which every pass treats as an empty partial, so out-of-range lanes drop out.
  auto lse_or_empty = [&](int32_t i) {
    return i < end ? p.part_lse[i * p.lse_stride_s + stat_offset] : -INFINITY;
  };
  // The first chunk (all of a row with <= 32 partials) stays in a register for all three passes.
  const float first_lse = lse_or_empty(begin + lane);
  auto chunk_lse = [&](int32_t chunk) {
    return chunk == begin ? first_lse : lse_or_empty(chunk + lane);
  };
  // This lane's first column of partial 0's row; partial i is i * out_stride_s further.
  const PartialT* row_out = p.part_out + t * p.out_stride_t + h * p.out_stride_h + lane;
  // The first group's outputs load beside the lse: their addresses do not depend on it. An
  // empty partial's outputs may be anything, NaN included: they may be loaded, never added.
  PartialT values[kGroup][kColsPerLane];
#pragma unroll
  for (int u = 0; u < kGroup; ++u) {
    if (begin + u >= end) break;
#pragma unroll
    for (int c = 0; c < kColsPerLane; ++c) {
      values[u][c] = row_out[(begin + u) * p.out_stride_s + 32 * c];
    }
  }

  // An empty partial (lse +-inf or NaN) has weight 0 and its outputs are never added.
  float top = -INFINITY;
  float max_logit = -INFINITY;
  for (int32_t chunk = begin; chunk < end; chunk += 32) {
    const int32_t i = chunk + lane;
    const float l = chunk_lse(chunk);
    // Loaded beside the lse rather than after it: attend writes part_max for every partial.
    const float m = p.part_max && i < end ? p.part_max[i * p.lse_stride_s + stat_offset]
                                          : -INFINITY;
    if (!fmt::is_finite(l)) continue;
    top = fmaxf(top, l);
    max_logit = fmaxf(max_logit, m);
  }
  top = ptx::warp_max(top);
  max_logit = ptx::warp_max(max_logit);

  float acc[kColsPerLane] = {};
  float lse = INFINITY;
  if (top != -INFINITY) {
    float lane_total = 0.0f;
    for (int32_t chunk = begin; chunk < end; chunk += 32) {
      const float l = chunk_lse(chunk);
      if (fmt::is_finite(l)) lane_total += expf(l - top);
    }
    const float total = ptx::warp_sum(lane_total);
    lse = top + logf(total);
    const float f = p.sink ? 1.0f / (1.0f + expf(sink - lse)) : 1.0f;

    // acc sums the partials in partial order, as a sequential loop would: the same rounding
    // on every run. Each group's loads are all issued before its first FMA.
    for (int32_t chunk = begin; chunk < end; chunk += 32) {
      const float lane_lse = chunk_lse(chunk);
      for (int32_t g = 0; g < 32 && chunk + g < end; g += kGroup) {
        // Member u is partial chunk + g + u, whose lse lane g + u holds. An empty member, or
        // one past the row's end, is skipped by a warp-uniform branch: never added, and
        // loaded only in the row's first group, beside the lse: its NaN outputs never reach acc.
        float member_lse[kGroup];
#pragma unroll
        for (int u = 0; u < kGroup; ++u) member_lse[u] = __shfl_sync(kFullWarp, lane_lse, g + u);
#pragma unroll
        for (int u = 0; u < kGroup; ++u) {
          if ((chunk == begin && g == 0) || !fmt::is_finite(member_lse[u])) continue;
          const PartialT* src = row_out + (chunk + g + u) * p.out_stride_s;
#pragma unroll
          for (int c = 0; c < kColsPerLane; ++c) values[u][c] = src[32 * c];
        }
#pragma unroll
        for (int u = 0; u < kGroup; ++u) {
          if (!fmt::is_finite(member_lse[u])) continue;
          const float w = expf(member_lse[u] - top) / total * f;
#pragma unroll
          for (int c = 0; c < kColsPerLane; ++c) acc[c] += w * to_float(values[u][c]);
        }
      }
    }
  }
  uint16_t* dst = p.out + t * p.res_stride_t + h * p.res_stride_h;
#pragma unroll
  for (int c = 0; c < kColsPerLane; ++c) dst[lane + 32 * c] = fmt::float_to_bf16_rne(acc[c]);
  if (lane == 0) {
    if (p.lse) p.lse[t * p.res_lse_stride_t + h * p.res_lse_stride_h] = lse;
    if (p.max_logits) p.max_logits[t * p.res_max_stride_t + h * p.res_max_stride_h] = max_logit;
  }
  // The block's last warp to get here sets the exit (warps in order of finishing overwrite).
  timeline::mark(p.timeline, timeline::kCombinePoints, timeline::kCombineExit, lane == 0);
}

}  // namespace

template <typename PartialT>
Status launch_combine(const CombineParams<PartialT>& params, CombineLaunch how,
                      cudaStream_t stream, const char* op) {
  const int64_t rows = int64_t{params.tokens} * params.h_q;
  if (rows == 0) return Status::success();
  const int64_t blocks = (rows + kWarps - 1) / kWarps;
  cudaLaunchAttribute beside_previous;
  beside_previous.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  beside_previous.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(static_cast<unsigned>(blocks));
  config.blockDim = dim3(kWarps * 32);
  config.stream = stream;
  if (how.beside_previous && blocks <= how.sm_count) {
    config.attrs = &beside_previous;
    config.numAttrs = 1;
    // Two such blocks, with the 1 KB the runtime reserves for each, need more than the
    // opt-in limit plus 1 KB: all of an SM's shared memory. Set on every launch: a cache of
    // it would outlive a cudaDeviceReset, which drops it.
    const int one_per_sm = how.smem_per_block_optin / 2 + 1024;
    SMLA_CUDA_TRY(cudaFuncSetAttribute(combine_kernel<PartialT>,
                                       cudaFuncAttributeMaxDynamicSharedMemorySize, one_per_sm),
                  op, "cudaFuncSetAttribute(combine_kernel)");
    config.dynamicSmemBytes = static_cast<size_t>(one_per_sm);
  }
  // A failed launch's error is also the last error, which launch_status reads and clears.
  (void)cudaLaunchKernelEx(&config, combine_kernel<PartialT>, params);
  return cuda_backend::launch_status(op, "combine_kernel");
}

template Status launch_combine<float>(const CombineParams<float>&, CombineLaunch, cudaStream_t,
                                      const char*);
template Status launch_combine<uint16_t>(const CombineParams<uint16_t>&, CombineLaunch,
                                         cudaStream_t, const char*);

}  // namespace smla::portable
