// The Hopper path (sm_90a: wgmma, mbarrier pipelines, setmaxnreg warp specialization): the
// seam between the backend dispatcher (src/cuda/backend.cu) and the Hopper kernels, with the
// same contract as src/cuda/portable/portable_attention.hpp. Arguments arrive validated by
// src/api, with every pointer on `info.ordinal`'s device.
//
// The dispatcher asks `why_not_covered` first: the Hopper kernels exist only in builds whose
// architecture list holds 90a (SMLA_HOPPER_PATH is then defined for libsmla), run only on
// sm_90 devices, and cover the shapes `why_not_covered` accepts; everything else goes to the
// portable path. A covered call runs here by default: on the H200 this path measured faster
// than the portable one on every anchor shape, in every format, at every head count tried
// (docs/perf-notes.md).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>

#include "api/cuda_backend.hpp"
#include "cuda/device_info.hpp"
#include "smla/ops.hpp"

namespace smla::hopper {

// Whether this build holds the Hopper kernels (the architecture list names 90a).
constexpr bool compiled() {
#if defined(SMLA_HOPPER_PATH)
  return true;
#else
  return false;
#endif
}

// Empty when the Hopper kernels run this call on `info`'s device; otherwise why not (for
// the error of a call that forces SMLA_BACKEND=hopper), e.g. "the device is sm_80".
std::string why_not_covered(const AttendArgs& args, const cuda_backend::DeviceInfo& info);

// Whether the block-pair kernel (bf16 pools) reads |V| bounds from per-slot tables made by a
// pass over the pools (src/cuda/hopper/v_bounds.hpp) instead of scanning V: when the pools
// hold at most one slot per 16 selected entries, so that the pass costs little beside the
// kernel and the tables fit the workspace the selection sizes. Shapes only.
bool uses_v_bounds(const AttendArgs& args);

// The schedule this path takes for a call's shapes on `info`'s device: "one pass" (one round
// of tokens), "one pass, claimed tokens" (several rounds, each CTA claiming its next token at
// run time), "split" or "rounds and tail" (make_schedule in hopper_attention.cu), for tests
// and messages.
const char* schedule_name(const AttendArgs& args, const cuda_backend::DeviceInfo& info);

Status plan_size(const AttendArgs& args, const cuda_backend::DeviceInfo& info, size_t* bytes);
Status make_plan(const AttendArgs& args, const cuda_backend::DeviceInfo& info, Plan* plan,
                 cudaStream_t stream);
Status workspace_size(const AttendArgs& args, const cuda_backend::DeviceInfo& info,
                      size_t* bytes);
Status attend(const AttendArgs& args, const cuda_backend::DeviceInfo& info, Workspace ws,
              cudaStream_t stream, const Plan* plan);

}  // namespace smla::hopper
