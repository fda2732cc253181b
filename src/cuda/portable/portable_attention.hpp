// The portable CUDA path (sm_80 and newer: mma.sync, ldmatrix, cp.async): the seam between
// the backend dispatcher (src/cuda/backend.cu) and the portable kernels. Arguments arrive
// validated by src/api, with every pointer on `info.ordinal`'s device; these functions only
// choose a schedule, check that the kernel variant is compiled, and launch.
//
// Strategies (Plan::strategy): a one-pass kernel per (token, head tile) for prefill-shaped
// calls, or split-KV for decode-shaped calls (a plan kernel spreads the selected entries of
// all tokens over a fixed number of partitions; a combine kernel merges the f32 partials).
// The choice is a pure function of (T, h_q, k + k_x, SM count), so it is reproducible.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "api/cuda_backend.hpp"
#include "cuda/device_info.hpp"
#include "smla/ops.hpp"

namespace smla::portable {

// Bytes of the plan buffer (0 for the one-pass strategy, which needs no schedule).
Status plan_size(const AttendArgs& args, const cuda_backend::DeviceInfo& info, size_t* bytes);
// Fills plan->data (caller-owned, plan->bytes >= plan_size) on `stream` with a device
// kernel, and sets plan->strategy to the schedule's id (strategy, head tile, partitions).
// No host synchronization. plan->key is stamped and checked by src/api.
Status make_plan(const AttendArgs& args, const cuda_backend::DeviceInfo& info, Plan* plan,
                 cudaStream_t stream);
// Bytes of workspace attend needs: f32 partials of the split strategy, plus room for an
// internal plan when attend is called with plan == nullptr.
Status workspace_size(const AttendArgs& args, const cuda_backend::DeviceInfo& info,
                      size_t* bytes);
// Runs attention on `stream`. A non-null plan must carry this call's schedule id (a plan made
// on a GPU with another SM count is rejected); nullptr plans into the workspace.
Status attend(const AttendArgs& args, const cuda_backend::DeviceInfo& info, Workspace ws,
              cudaStream_t stream, const Plan* plan);
// The public combine op: merges [S, T, h_q, 512] f32 or bf16 partials by log-sum-exp.
Status combine(const CombineArgs& args, const cuda_backend::DeviceInfo& info,
               cudaStream_t stream);

}  // namespace smla::portable
