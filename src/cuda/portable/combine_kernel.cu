// The combine kernel: one warp per (token, head) merges that row's partials by log-sum-exp,
// in partial order (deterministic), and applies the sink once to the merged result.
#include <cmath>

#include "cuda/cuda_check.hpp"
#include "cuda/portable/combine_kernel.hpp"
#include "formats/numeric.hpp"

namespace smla::portable {
namespace {

constexpr int kDv = 512;
constexpr int kWarps = 8;
constexpr int kColsPerLane = kDv / 32;  // lane l owns columns l + 32 c: coalesced, any alignment

__device__ float load_value(const float* p) { return *p; }
__device__ float load_value(const uint16_t* p) { return fmt::bf16_to_float(*p); }

template <typename PartialT>
__global__ void __launch_bounds__(kWarps * 32) combine_kernel(const __grid_constant__ CombineParams<PartialT> p) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int64_t row = int64_t{blockIdx.x} * kWarps + threadIdx.x / 32;
  if (row >= int64_t{p.tokens} * p.h_q) return;
  const int64_t t = row / p.h_q;
  const int64_t h = row % p.h_q;
  const int32_t begin = p.token_partials ? p.token_partials[t] : 0;
  const int32_t end = p.token_partials ? p.token_partials[t + 1] : p.num_partials;
  auto lse_at = [&](int32_t i) {
    return p.part_lse[i * p.lse_stride_s + t * p.lse_stride_t + h * p.lse_stride_h];
  };

  // An empty partial (lse +-inf) has weight 0 and is never read: its values may be anything.
  float top = -INFINITY;
  float max_logit = -INFINITY;
  for (int32_t i = begin; i < end; ++i) {
    const float l = lse_at(i);
    if (!fmt::is_finite(l)) continue;
    top = fmaxf(top, l);
    if (p.part_max) {
      max_logit = fmaxf(max_logit, p.part_max[i * p.lse_stride_s + t * p.lse_stride_t +
                                              h * p.lse_stride_h]);
    }
  }
  float acc[kColsPerLane] = {};
  float lse = INFINITY;
  if (top != -INFINITY) {
    float total = 0.0f;
    for (int32_t i = begin; i < end; ++i) {
      const float l = lse_at(i);
      if (fmt::is_finite(l)) total += expf(l - top);
    }
    lse = top + logf(total);
    const float f = p.sink ? 1.0f / (1.0f + expf(p.sink[h * p.sink_stride] - lse)) : 1.0f;
    for (int32_t i = begin; i < end; ++i) {
      const float l = lse_at(i);
      if (!fmt::is_finite(l)) continue;
      const float w = expf(l - top) / total * f;
      const PartialT* src = p.part_out + i * p.out_stride_s + t * p.out_stride_t + h * p.out_stride_h;
#pragma unroll
      for (int c = 0; c < kColsPerLane; ++c) acc[c] += w * load_value(src + lane + 32 * c);
    }
  }
  uint16_t* dst = p.out + t * p.res_stride_t + h * p.res_stride_h;
#pragma unroll
  for (int c = 0; c < kColsPerLane; ++c) dst[lane + 32 * c] = fmt::float_to_bf16_rne(acc[c]);
  if (lane == 0) {
    if (p.lse) p.lse[t * p.res_lse_stride_t + h * p.res_lse_stride_h] = lse;
    if (p.max_logits) p.max_logits[t * p.res_max_stride_t + h * p.res_max_stride_h] = max_logit;
  }
}

}  // namespace

template <typename PartialT>
Status launch_combine(const CombineParams<PartialT>& params, cudaStream_t stream, const char* op) {
  const int64_t rows = int64_t{params.tokens} * params.h_q;
  if (rows == 0) return Status::success();
  const auto blocks = static_cast<unsigned>((rows + kWarps - 1) / kWarps);
  combine_kernel<PartialT><<<blocks, kWarps * 32, 0, stream>>>(params);
  return cuda_backend::launch_status(op, "combine_kernel");
}

template Status launch_combine<float>(const CombineParams<float>&, cudaStream_t, const char*);
template Status launch_combine<uint16_t>(const CombineParams<uint16_t>&, cudaStream_t,
                                         const char*);

}  // namespace smla::portable
