// Host-side pieces of an attention launch that both GPU paths (portable and Hopper) share:
// the kernel parameters of a call, and the split strategy's workspace, plan and combine.
// The paths differ in their kernels and schedules, not in these.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "cuda/portable/attend_params.hpp"
#include "smla/ops.hpp"

namespace smla::portable {

// The kernel parameters of a validated call, for the one-pass form (no plan, no partials).
AttendParams attend_params(const AttendArgs& args, int head_tiles);

// The split strategy's plan layout for this call and `partitions` CTAs' worth of work units.
PlanLayout split_plan_layout(const AttendArgs& args, int64_t partitions);
// Bytes of workspace a split call needs: the f32 partials, plus room for a plan that attend
// makes itself when the caller brings none.
size_t split_workspace_bytes(const AttendArgs& args, const PlanLayout& layout);
// Fills a caller's plan buffer for a split schedule on `stream` (device kernel, no sync).
Status make_split_plan(const AttendArgs& args, const PlanLayout& layout, void* plan_data,
                       cudaStream_t stream);

using AttendLaunch = Status (*)(const AttendParams& params, int units, cudaStream_t stream);

// The split strategy: partials in the workspace, the plan (the caller's, or one made into
// the workspace), `launch` over layout.partitions work units, then the combine kernel.
Status run_split(const AttendArgs& args, AttendParams params, const PlanLayout& layout,
                 Workspace ws, const Plan* plan, AttendLaunch launch, cudaStream_t stream);

}  // namespace smla::portable
