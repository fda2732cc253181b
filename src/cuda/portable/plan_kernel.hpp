// The split-KV plan: launched by make_plan (or by attend into its workspace), read by the
// attention kernel (a partition's segments) and the combine kernel (a token's segments).
#pragma once

#include <cuda_runtime.h>

#include "cuda/portable/attend_params.hpp"
#include "smla/status.hpp"

namespace smla::portable {

// Fills the plan buffer `plan_data` (layout.bytes() bytes of device memory) on `stream`.
Status launch_plan(const SelectionView& main_sel, const SelectionView& extra_sel,
                   const PlanLayout& layout, void* plan_data, cudaStream_t stream);

// Device pointers to the arrays of a plan buffer.
PlanView plan_view(const PlanLayout& layout, const void* plan_data);

}  // namespace smla::portable
