// The seam between the API layer and the CUDA backends. Implemented in src/cuda/ when the
// build has CUDA, by src/cuda_disabled/ (answering not_built) otherwise. Arguments reaching
// the op entry points are already validated by src/api; these functions check only what
// needs the device (its presence, its architecture, pointer placement, compiled variants).
#pragma once

#include <cstddef>

#include "smla/ops.hpp"

namespace smla::cuda_backend {

int device_count();
const char* compiled_architectures();
const char* kernel_preset();
const char* compiled_paths();  // see smla::compiled_gpu_paths

// Fails (unsupported / not_built) unless `device` exists and this build has code for it.
Status check_device(Device device, const char* op);
// Fails (invalid_argument) unless `ptr` is memory of `device` (device or managed memory
// visible to it). `what` names the argument in the message.
Status check_pointer(const void* ptr, Device device, const char* op, const char* what);

Status plan_size(const AttendArgs& args, size_t* bytes);
Status make_plan(const AttendArgs& args, Plan* plan, Stream stream);
Status attend_workspace_size(const AttendArgs& args, size_t* bytes);
Status attend(const AttendArgs& args, Workspace workspace, Stream stream, const Plan* plan);
Status combine(const CombineArgs& args, Stream stream);
Status quantize(const TensorView& rows, const KvPool& pool, Stream stream);
Status dequantize(const KvPool& pool, const TensorView& rows, Stream stream);
Status write_cache(const TensorView& rows, const TensorView& slots, const KvPool& pool,
                   Stream stream);

}  // namespace smla::cuda_backend
