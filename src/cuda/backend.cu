// The CUDA side of src/api/cuda_backend.hpp: device and pointer checks, and the dispatcher
// that runs each op on the path chosen for the device (portable today; Hopper once built)
// with the tensors' device made current for the duration of the call.
#include <cuda_runtime.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "api/cuda_backend.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/device_info.hpp"
#include "cuda/formats/format_ops.hpp"
#include "cuda/portable/portable_attention.hpp"

namespace smla::cuda_backend {
namespace {

// Never launched: check_device asks the runtime for its attributes, which fails with
// cudaErrorNoKernelImageForDevice exactly when this binary holds neither SASS for the
// device's architecture nor PTX it can JIT (the same test every smla kernel would fail).
__global__ void arch_probe_kernel() {}

std::string cuda_name(Device device) { return "cuda:" + std::to_string(device.index); }

// Makes `ordinal` the current device and puts the caller's device back on scope exit, so
// an smla call on cuda:1 does not change where the caller's own next launch goes.
class DeviceGuard {
 public:
  Status enter(int ordinal, const char* op) {
    SMLA_CUDA_TRY(cudaGetDevice(&previous_), op, "cudaGetDevice");
    if (previous_ != ordinal) {
      SMLA_CUDA_TRY(cudaSetDevice(ordinal), op, "cudaSetDevice");
      switched_ = true;
    }
    return Status::success();
  }
  ~DeviceGuard() {
    if (switched_) cudaSetDevice(previous_);
  }

 private:
  int previous_ = 0;
  bool switched_ = false;
};

// SMLA_BACKEND (SPEC §6) as the CUDA side sees it: `cpu` never reaches this file for an op
// (src/api runs the reference instead), and every architecture runs the portable path until
// the Hopper kernels exist, so the only thing to decide here is whether a forced path is
// one this build lacks.
Status check_forced_path(const char* op) {
  const char* forced = std::getenv("SMLA_BACKEND");
  if (forced != nullptr && std::strcmp(forced, "hopper") == 0) {
    return Status(StatusCode::not_built,
                  std::string(op) +
                      ": SMLA_BACKEND=hopper: the Hopper path is not built yet "
                      "(unset SMLA_BACKEND or use SMLA_BACKEND=portable)");
  }
  return Status::success();
}

// What every attention op does before its launch: fetch the device's properties, check the
// forced path, and make the device current.
Status enter_attention(Device device, const char* op, DeviceGuard* guard, const DeviceInfo** info) {
  Status st = device_info(device.index, info);
  if (!st.ok()) return st;
  st = check_forced_path(op);
  if (!st.ok()) return st;
  return guard->enter(device.index, op);
}

// Per ordinal: 0 = not yet probed, 1 = this binary has code for the device.
Status probe_kernel_image(int ordinal, const DeviceInfo& info, const char* op) {
  static std::mutex mutex;
  static std::vector<char> has_image;
  std::lock_guard<std::mutex> lock(mutex);
  if (static_cast<int>(has_image.size()) <= ordinal) has_image.resize(ordinal + 1, 0);
  if (has_image[ordinal]) return Status::success();

  DeviceGuard guard;
  Status st = guard.enter(ordinal, op);
  if (!st.ok()) return st;
  cudaFuncAttributes attr{};
  const cudaError_t err = cudaFuncGetAttributes(&attr, arch_probe_kernel);
  if (err == cudaErrorNoKernelImageForDevice || err == cudaErrorInvalidDeviceFunction) {
    cudaGetLastError();  // not sticky, but would otherwise surface at the next launch check
    return Status(StatusCode::not_built,
                  std::string(op) + ": device cuda:" + std::to_string(ordinal) + " is sm_" +
                      std::to_string(info.arch()) +
                      ", but this build of smla has kernels only for CUDA architectures \"" +
                      compiled_architectures() +
                      "\" (reconfigure with -DSMLA_CUDA_ARCHITECTURES including " +
                      std::to_string(info.arch()) + ")");
  }
  SMLA_CUDA_TRY(err, op, "cudaFuncGetAttributes");
  has_image[ordinal] = 1;
  return Status::success();
}

}  // namespace

int device_count() {
  int count = 0;
  // No driver or no device both mean "nothing to run on"; the error is not sticky but is
  // cleared so it cannot be misreported by a later launch check.
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return count;
}

const char* compiled_architectures() { return SMLA_CUDA_ARCHITECTURES_STRING; }
const char* kernel_preset() { return SMLA_KERNEL_PRESET_STRING; }

Status check_device(Device device, const char* op) {
  if (device.kind == DeviceKind::cpu) return Status::success();
  const int count = device_count();
  if (device.index < 0 || device.index >= count) {
    return Status(StatusCode::unsupported,
                  std::string(op) + ": no CUDA device " + cuda_name(device) +
                      (count == 0 ? std::string(" (this process sees no CUDA device)")
                                  : " (this process sees " + std::to_string(count) + ")"));
  }
  const DeviceInfo* info = nullptr;
  Status st = device_info(device.index, &info);
  if (!st.ok()) return st;
  if (info->arch() < 80) {
    return Status(StatusCode::unsupported, std::string(op) + ": device " + cuda_name(device) +
                                               " is sm_" + std::to_string(info->arch()) +
                                               "; smla needs sm_80 (Ampere) or newer");
  }
  return probe_kernel_image(device.index, *info, op);
}

Status check_pointer(const void* ptr, Device device, const char* op, const char* what) {
  if (ptr == nullptr) return Status::success();
  cudaPointerAttributes attr{};
  const cudaError_t err = cudaPointerGetAttributes(&attr, ptr);
  if (err != cudaSuccess) {
    cudaGetLastError();
    // Without a usable driver no device memory can exist: every pointer is host memory.
    if (device.kind == DeviceKind::cpu) return Status::success();
    return cuda_status(err, op, "cudaPointerGetAttributes");
  }
  const std::string prefix = std::string(op) + ": argument '" + what + "': ";
  if (device.kind == DeviceKind::cpu) {
    // Managed and page-locked host memory are readable by the CPU; plain device memory is not.
    if (attr.type == cudaMemoryTypeDevice) {
      return Status(StatusCode::invalid_argument,
                    prefix + "expected CPU memory, got memory of CUDA device cuda:" +
                        std::to_string(attr.device));
    }
    return Status::success();
  }
  if (attr.type == cudaMemoryTypeManaged) return Status::success();
  if (attr.type == cudaMemoryTypeDevice && attr.device == device.index) {
    return Status::success();
  }
  const std::string given =
      attr.type == cudaMemoryTypeDevice
          ? "memory of CUDA device cuda:" + std::to_string(attr.device)
          : (attr.type == cudaMemoryTypeHost ? std::string("page-locked host memory")
                                             : std::string("CPU memory"));
  return Status(StatusCode::invalid_argument,
                prefix + "expected memory of CUDA device " + cuda_name(device) + ", got " + given);
}

Status plan_size(const AttendArgs& args, size_t* bytes) {
  constexpr const char* op = "smla::plan_size";
  DeviceGuard guard;
  const DeviceInfo* info = nullptr;
  Status st = enter_attention(args.q.device, op, &guard, &info);
  if (!st.ok()) return st;
  return portable::plan_size(args, *info, bytes);
}

Status make_plan(const AttendArgs& args, Plan* plan, Stream stream) {
  constexpr const char* op = "smla::make_plan";
  DeviceGuard guard;
  const DeviceInfo* info = nullptr;
  Status st = enter_attention(args.q.device, op, &guard, &info);
  if (!st.ok()) return st;
  return portable::make_plan(args, *info, plan, stream);
}

Status attend_workspace_size(const AttendArgs& args, size_t* bytes) {
  constexpr const char* op = "smla::attend_workspace_size";
  DeviceGuard guard;
  const DeviceInfo* info = nullptr;
  Status st = enter_attention(args.q.device, op, &guard, &info);
  if (!st.ok()) return st;
  return portable::workspace_size(args, *info, bytes);
}

Status attend(const AttendArgs& args, Workspace workspace, Stream stream, const Plan* plan) {
  constexpr const char* op = "smla::attend";
  DeviceGuard guard;
  const DeviceInfo* info = nullptr;
  Status st = enter_attention(args.q.device, op, &guard, &info);
  if (!st.ok()) return st;
  return portable::attend(args, *info, workspace, stream, plan);
}

Status combine(const CombineArgs& args, Stream stream) {
  constexpr const char* op = "smla::combine";
  DeviceGuard guard;
  const DeviceInfo* info = nullptr;
  Status st = enter_attention(args.out.device, op, &guard, &info);
  if (!st.ok()) return st;
  return portable::combine(args, *info, stream);
}

// The format kernels are one portable implementation for every architecture: they are
// memory-bound byte shuffles with nothing for a Hopper path to add.
Status quantize(const TensorView& rows, const KvPool& pool, Stream stream) {
  DeviceGuard guard;
  Status st = guard.enter(rows.device.index, "smla::quantize");
  if (!st.ok()) return st;
  return formats::quantize(rows, pool, stream);
}

Status dequantize(const KvPool& pool, const TensorView& rows, Stream stream) {
  DeviceGuard guard;
  Status st = guard.enter(rows.device.index, "smla::dequantize");
  if (!st.ok()) return st;
  return formats::dequantize(pool, rows, stream);
}

Status write_cache(const TensorView& rows, const TensorView& slots, const KvPool& pool,
                   Stream stream) {
  DeviceGuard guard;
  Status st = guard.enter(rows.device.index, "smla::write_cache");
  if (!st.ok()) return st;
  return formats::write_cache(rows, slots, pool, stream);
}

}  // namespace smla::cuda_backend
