// The CUDA side of src/api/cuda_backend.hpp: device and pointer checks, and the dispatcher
// that runs each op with the tensors' device made current for the duration of the call. The
// attention ops (plan_size, make_plan, attend_workspace_size, attend) take the Hopper path
// where the build has it and it covers the call, the portable path otherwise, unless
// SMLA_BACKEND forces one; combine and the format ops have one implementation for every
// architecture.
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
#include "cuda/hopper/hopper_attention.hpp"
#include "cuda/portable/portable_attention.hpp"
#include "smla_build_config.hpp"

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

enum class Path { portable, hopper };

// SMLA_BACKEND (SPEC §6) as the CUDA side sees it, read per call (src/api has rejected unknown
// values and `cpu` with CUDA arguments). Unset: the Hopper path when it covers the call (it is
// the faster one wherever measured), the portable path otherwise. Forced: that path or
// an error saying why not, never the other path, since an A/B comparison must time the path
// it names.
Status choose_path(const AttendArgs& args, const DeviceInfo& info, const char* op, Path* path) {
  const char* forced = std::getenv("SMLA_BACKEND");
  const bool forced_portable = forced != nullptr && std::strcmp(forced, "portable") == 0;
  const bool forced_hopper = forced != nullptr && std::strcmp(forced, "hopper") == 0;
  *path = Path::portable;
  if (forced_portable) return Status::success();
  if (!hopper::compiled()) {
    if (!forced_hopper) return Status::success();
    return Status(StatusCode::not_built,
                  std::string(op) +
                      ": SMLA_BACKEND=hopper: this build of smla has no Hopper path (CUDA "
                      "architectures \"" +
                      compiled_architectures() +
                      "\"; reconfigure with -DSMLA_CUDA_ARCHITECTURES including 90a)");
  }
  const std::string why_not = hopper::why_not_covered(args, info);
  if (why_not.empty()) {
    *path = Path::hopper;
    return Status::success();
  }
  if (!forced_hopper) return Status::success();
  return Status(StatusCode::unsupported,
                std::string(op) +
                    ": SMLA_BACKEND=hopper: the Hopper path does not cover this call: " +
                    why_not + " (unset SMLA_BACKEND to let smla choose)");
}

// Runs `launch(info)` with `device` made current and its properties at hand: the one way
// every op of this file reaches a kernel.
template <class Launch>
Status run_on_device(Device device, const char* op, Launch&& launch) {
  const DeviceInfo* info = nullptr;
  Status st = device_info(device.index, &info);
  if (!st.ok()) return st;
  DeviceGuard guard;
  st = guard.enter(device.index, op);
  if (!st.ok()) return st;
  return launch(*info);
}

// Runs `launch(info, path)` for an attention op, on the path chosen for `args`.
template <class Launch>
Status run_attention_op(const AttendArgs& args, const char* op, Launch&& launch) {
  return run_on_device(args.q.device, op, [&](const DeviceInfo& info) {
    Path path = Path::portable;
    const Status st = choose_path(args, info, op, &path);
    if (!st.ok()) return st;
    return launch(info, path);
  });
}

// Per ordinal: 0 = not yet probed (or no image), else the PTX version of this binary's code
// for the device (kernel_image_version).
std::mutex image_mutex;
std::vector<int> image_versions;

Status probe_kernel_image(int ordinal, const DeviceInfo& info, const char* op) {
  std::lock_guard<std::mutex> lock(image_mutex);
  if (static_cast<int>(image_versions.size()) <= ordinal) image_versions.resize(ordinal + 1, 0);
  if (image_versions[ordinal] != 0) return Status::success();

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
  image_versions[ordinal] = attr.ptxVersion;
  return Status::success();
}

}  // namespace

int kernel_image_version(int ordinal) {
  std::lock_guard<std::mutex> lock(image_mutex);
  return ordinal >= 0 && ordinal < static_cast<int>(image_versions.size())
             ? image_versions[ordinal]
             : 0;
}

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
const char* compiled_paths() { return hopper::compiled() ? "portable;hopper" : "portable"; }

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
  // Messages are built only on failure: this runs for every pointer of every call.
  auto wrong = [&](const std::string& expected) {
    const std::string given =
        attr.type == cudaMemoryTypeDevice
            ? "memory of CUDA device cuda:" + std::to_string(attr.device)
            : (attr.type == cudaMemoryTypeHost ? std::string("page-locked host memory")
                                               : std::string("CPU memory"));
    return Status(StatusCode::invalid_argument, std::string(op) + ": argument '" + what +
                                                    "': expected " + expected + ", got " + given);
  };
  if (device.kind == DeviceKind::cpu) {
    // Managed and page-locked host memory are readable by the CPU; plain device memory is not.
    return attr.type == cudaMemoryTypeDevice ? wrong("CPU memory") : Status::success();
  }
  const bool on_device = attr.type == cudaMemoryTypeManaged ||
                         (attr.type == cudaMemoryTypeDevice && attr.device == device.index);
  return on_device ? Status::success() : wrong("memory of CUDA device " + cuda_name(device));
}

Status plan_size(const AttendArgs& args, size_t* bytes) {
  return run_attention_op(args, "smla::plan_size", [&](const DeviceInfo& info, Path path) {
    return path == Path::hopper ? hopper::plan_size(args, info, bytes)
                                : portable::plan_size(args, info, bytes);
  });
}

Status make_plan(const AttendArgs& args, Plan* plan, Stream stream) {
  return run_attention_op(args, "smla::make_plan", [&](const DeviceInfo& info, Path path) {
    return path == Path::hopper ? hopper::make_plan(args, info, plan, stream)
                                : portable::make_plan(args, info, plan, stream);
  });
}

Status attend_workspace_size(const AttendArgs& args, size_t* bytes) {
  return run_attention_op(
      args, "smla::attend_workspace_size", [&](const DeviceInfo& info, Path path) {
        return path == Path::hopper ? hopper::workspace_size(args, info, bytes)
                                    : portable::workspace_size(args, info, bytes);
      });
}

Status attend(const AttendArgs& args, Workspace workspace, Stream stream, const Plan* plan) {
  return run_attention_op(args, "smla::attend", [&](const DeviceInfo& info, Path path) {
    return path == Path::hopper ? hopper::attend(args, info, workspace, stream, plan)
                                : portable::attend(args, info, workspace, stream, plan);
  });
}

// combine merges partials whichever path made them, and the format kernels are memory-bound
// byte shuffles: one implementation each for every architecture, nothing for a Hopper path
// to add, so SMLA_BACKEND does not apply.
Status combine(const CombineArgs& args, Stream stream) {
  return run_on_device(args.out.device, "smla::combine", [&](const DeviceInfo& info) {
    return portable::combine(args, info, stream);
  });
}

Status quantize(const TensorView& rows, const KvPool& pool, Stream stream) {
  return run_on_device(rows.device, "smla::quantize",
                       [&](const DeviceInfo&) { return formats::quantize(rows, pool, stream); });
}

Status dequantize(const KvPool& pool, const TensorView& rows, Stream stream) {
  return run_on_device(rows.device, "smla::dequantize",
                       [&](const DeviceInfo&) { return formats::dequantize(pool, rows, stream); });
}

Status write_cache(const TensorView& rows, const TensorView& slots, const KvPool& pool,
                   Stream stream) {
  return run_on_device(rows.device, "smla::write_cache", [&](const DeviceInfo&) {
    return formats::write_cache(rows, slots, pool, stream);
  });
}

}  // namespace smla::cuda_backend
