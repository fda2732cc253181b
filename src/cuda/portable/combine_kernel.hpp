// The log-sum-exp merge of partial attention results, shared by the split strategy of attend
// (f32 partials, one per plan segment) and the public combine op (f32 or bf16 partials from
// any source, e.g. other GPUs under context parallelism).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "smla/status.hpp"

namespace smla::portable {

// Partial i of (t, h): out at part_out + i * out_stride_s + t * out_stride_t + h * out_stride_h
// (512 values, unit stride), lse and max at the same indexing with the lse strides.
template <typename PartialT>  // float or uint16_t (bf16 bits)
struct CombineParams {
  const PartialT* part_out = nullptr;  // [S, T, h_q, 512]
  int64_t out_stride_s = 0;
  int64_t out_stride_t = 0;
  int64_t out_stride_h = 0;
  const float* part_lse = nullptr;  // [S, T, h_q] natural log; +-inf: an empty partial
  int64_t lse_stride_s = 0;
  int64_t lse_stride_t = 0;
  int64_t lse_stride_h = 0;
  const float* part_max = nullptr;  // optional [S, T, h_q] (attend's split partials only)
  // The partials of token t: [token_partials[t], token_partials[t + 1]) when given (a plan's
  // segments), else all [0, num_partials). A plan's token of exactly one row lay inside one
  // partition and ran whole (plan_kernel.cu): attend wrote its results, the kernel leaves them.
  const int32_t* token_partials = nullptr;  // optional [T + 1]
  int32_t num_partials = 0;
  const float* sink = nullptr;  // optional [h_q]
  int64_t sink_stride = 0;
  int32_t tokens = 0;
  int32_t h_q = 0;
  uint16_t* out = nullptr;  // [T, h_q, 512] bf16
  int64_t res_stride_t = 0;
  int64_t res_stride_h = 0;
  float* lse = nullptr;  // optional [T, h_q]
  int64_t res_lse_stride_t = 0;
  int64_t res_lse_stride_h = 0;
  float* max_logits = nullptr;  // optional [T, h_q]
  int64_t res_max_stride_t = 0;
  int64_t res_max_stride_h = 0;
  // Timeline builds (cuda/timeline.hpp): per-block entry and exit marks, else null.
  uint64_t* timeline = nullptr;
};

// How the combine kernel's launch follows the kernel before it on the stream. Value-
// initialized: a plain launch, which starts once the previous kernel has ended.
struct CombineLaunch {
  // Programmatic dependent launch (taken when the grid has at most one block per SM): the
  // blocks start while the previous kernel, which allows it (ptx::allow_dependent_launch),
  // still runs, and wait for that kernel's end before their first read, so the launch's
  // latency hides behind its tail. Set it only where this binary's code for the device is
  // built for sm_90+ (cuda_backend::kernel_image_version): older code runs there through PTX
  // whose wait compiled to nothing. Each block then asks for over half an SM's shared memory
  // (unused) so that no two share an SM: the blocks placed early would otherwise crowd the
  // few SMs that the previous kernel leaves idle. The blocks read token_partials and sink
  // before that wait: both must have been complete when the previous kernel started
  // (attend's plan and inputs are).
  bool beside_previous = false;
  int sm_count = 0;
  int smem_per_block_optin = 0;  // bytes
};

template <typename PartialT>
Status launch_combine(const CombineParams<PartialT>& params, CombineLaunch how,
                      cudaStream_t stream, const char* op);

}  // namespace smla::portable
