// The CUDA seam of a build without CUDA (-DSMLA_WITH_CUDA=OFF): no device exists, CPU memory
// is the only memory, and every GPU operation answers not_built with the way to get it.
#include <string>

#include "api/cuda_backend.hpp"

namespace smla::cuda_backend {
namespace {

Status no_cuda(const char* op) {
  return Status(StatusCode::not_built,
                std::string(op) +
                    ": this build of smla has no CUDA backend (configure with "
                    "-DSMLA_WITH_CUDA=ON to run on a GPU)");
}

}  // namespace

int device_count() { return 0; }
const char* compiled_architectures() { return ""; }
const char* kernel_preset() { return ""; }
const char* compiled_paths() { return ""; }

Status check_device(Device device, const char* op) {
  if (device.kind == DeviceKind::cpu) return Status::success();
  return no_cuda(op);
}

// Without a CUDA runtime nothing can tell a device pointer from a host one, and none can
// exist in this process: every CPU pointer is taken as host memory.
Status check_pointer(const void*, Device device, const char* op, const char*) {
  return check_device(device, op);
}

Status plan_size(const AttendArgs&, size_t*) { return no_cuda("smla::plan_size"); }
Status make_plan(const AttendArgs&, Plan*, Stream) { return no_cuda("smla::make_plan"); }
Status attend_workspace_size(const AttendArgs&, size_t*) {
  return no_cuda("smla::attend_workspace_size");
}
Status attend(const AttendArgs&, Workspace, Stream, const Plan*) {
  return no_cuda("smla::attend");
}
Status combine(const CombineArgs&, Stream) { return no_cuda("smla::combine"); }
Status quantize(const TensorView&, const KvPool&, Stream) { return no_cuda("smla::quantize"); }
Status dequantize(const KvPool&, const TensorView&, Stream) {
  return no_cuda("smla::dequantize");
}
Status write_cache(const TensorView&, const TensorView&, const KvPool&, Stream) {
  return no_cuda("smla::write_cache");
}

}  // namespace smla::cuda_backend
