// The public entry points of smla/ops.hpp: validate every argument, then hand the call to the
// backend the arguments' device selects (CPU -> smla::reference, CUDA -> smla::cuda_backend).
//
// SMLA_BACKEND: "cpu" forces the reference backend and so is an error for CUDA arguments;
// "portable" and "hopper" steer only CUDA calls and are read by the CUDA backend itself, so a
// program that checks GPU results against CPU reference calls keeps working under them. Any
// other non-empty value is rejected, rather than silently running some default path.
//
// No exception leaves an entry point: anything thrown below (std::bad_alloc from a message
// or a reference buffer) becomes an `internal` status.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <string>

#include "api/checks.hpp"
#include "api/cuda_backend.hpp"
#include "api/plan_key.hpp"
#include "api/validate.hpp"
#include "reference/reference.hpp"
#include "smla_build_config.hpp"
#include "smla/ops.hpp"

namespace smla {
namespace {

enum class Route { reference, cuda };

// Picks the backend of a validated call on `device`.
Status choose_route(const char* op, Device device, Route* route) {
  const char* env = std::getenv("SMLA_BACKEND");
  const std::string forced = env != nullptr ? env : "";
  if (!forced.empty() && forced != "cpu" && forced != "portable" && forced != "hopper")
    return Status(StatusCode::invalid_argument,
                  std::string(op) +
                      ": environment variable SMLA_BACKEND: expected cpu, portable or hopper "
                      "(or unset), got '" + forced + "'");
  if (device.kind == DeviceKind::cpu) {
    *route = Route::reference;
    return Status::success();
  }
  if (forced == "cpu")
    return Status(StatusCode::invalid_argument,
                  std::string(op) +
                      ": environment variable SMLA_BACKEND: 'cpu' forces the CPU reference "
                      "backend, but the arguments are on " + api::device_string(device) +
                      " (unset SMLA_BACKEND or pass CPU tensors)");
  *route = Route::cuda;
  return Status::success();
}

template <class Body>
Status guarded(const char* op, Body&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::internal, std::string(op) + ": out of host memory");
  } catch (const std::exception& e) {
    return Status(StatusCode::internal, std::string(op) + ": unexpected exception: " + e.what());
  } catch (...) {
    return Status(StatusCode::internal, std::string(op) + ": unexpected non-standard exception");
  }
}

Status require_out_pointer(const char* op, const char* name, const void* p) {
  if (p == nullptr) return api::invalid_arg(op, name, "a pointer to write the result to", "null");
  return Status::success();
}

// Bytes a validated call needs on its route, by `cuda_size` (cuda_backend::plan_size or
// attend_workspace_size) on the GPU; the reference needs none. `*bytes` is written only when
// the query succeeds: a failed call writes nothing.
using CudaSizeQuery = Status (*)(const AttendArgs&, size_t*);
Status route_size(const AttendArgs& args, Route route, CudaSizeQuery cuda_size, size_t* bytes) {
  size_t needed = 0;
  if (route == Route::cuda) SMLA_RETURN_IF_ERROR(cuda_size(args, &needed));
  *bytes = needed;
  return Status::success();
}

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(v));
  return buf;
}

Status check_plan(const char* op, const AttendArgs& args, const Plan& plan) {
  if (plan.key == 0)
    return api::invalid_arg(op, "plan", "a plan filled by smla::make_plan",
                            "an empty plan (key 0)");
  const uint64_t key = api::plan_key(args);
  if (plan.key != key)
    return api::invalid_arg(op, "plan", "a plan made for these arguments (key " + hex(key) + ")",
                            "a plan made for other shapes, pools or device (key " +
                                hex(plan.key) + ")");
  return Status::success();
}

}  // namespace

Status plan_size(const AttendArgs& args, size_t* bytes) {
  constexpr const char* op = "smla::plan_size";
  return guarded(op, [&] {
    SMLA_RETURN_IF_ERROR(require_out_pointer(op, "bytes", bytes));
    SMLA_RETURN_IF_ERROR(api::validate_attend(op, args, api::AttendUse::size_query));
    Route route;
    SMLA_RETURN_IF_ERROR(choose_route(op, args.q.device, &route));
    return route_size(args, route, cuda_backend::plan_size, bytes);
  });
}

Status make_plan(const AttendArgs& args, Plan* plan, Stream stream) {
  constexpr const char* op = "smla::make_plan";
  return guarded(op, [&] {
    SMLA_RETURN_IF_ERROR(require_out_pointer(op, "plan", plan));
    SMLA_RETURN_IF_ERROR(api::validate_attend(op, args, api::AttendUse::plan));
    Route route;
    SMLA_RETURN_IF_ERROR(choose_route(op, args.q.device, &route));
    size_t needed = 0;
    SMLA_RETURN_IF_ERROR(route_size(args, route, cuda_backend::plan_size, &needed));
    if (plan->bytes < needed)
      return api::invalid_arg(op, "plan",
                              "plan.bytes >= " + std::to_string(needed) +
                                  " (smla::plan_size for these arguments)",
                              std::to_string(plan->bytes) + " bytes");
    if (needed > 0) {
      if (plan->data == nullptr)
        return api::invalid_arg(op, "plan", "plan.data pointing to " + std::to_string(needed) +
                                                " bytes of device memory",
                                "null");
      SMLA_RETURN_IF_ERROR(api::check_pointers(op, args.q.device, {{"plan", plan->data}}));
    }
    if (route == Route::cuda) {
      SMLA_RETURN_IF_ERROR(cuda_backend::make_plan(args, plan, stream));
    } else {
      plan->strategy = 0;  // the reference has no schedule; the key still guards misuse
    }
    plan->key = api::plan_key(args);
    return Status::success();
  });
}

Status attend_workspace_size(const AttendArgs& args, size_t* bytes) {
  constexpr const char* op = "smla::attend_workspace_size";
  return guarded(op, [&] {
    SMLA_RETURN_IF_ERROR(require_out_pointer(op, "bytes", bytes));
    SMLA_RETURN_IF_ERROR(api::validate_attend(op, args, api::AttendUse::size_query));
    Route route;
    SMLA_RETURN_IF_ERROR(choose_route(op, args.q.device, &route));
    return route_size(args, route, cuda_backend::attend_workspace_size, bytes);
  });
}

Status attend(const AttendArgs& args, Workspace workspace, Stream stream, const Plan* plan) {
  constexpr const char* op = "smla::attend";
  return guarded(op, [&] {
    SMLA_RETURN_IF_ERROR(api::validate_attend(op, args, api::AttendUse::run));
    if (plan != nullptr) SMLA_RETURN_IF_ERROR(check_plan(op, args, *plan));
    Route route;
    SMLA_RETURN_IF_ERROR(choose_route(op, args.q.device, &route));
    size_t needed = 0;
    SMLA_RETURN_IF_ERROR(
        route_size(args, route, cuda_backend::attend_workspace_size, &needed));
    SMLA_RETURN_IF_ERROR(api::validate_workspace(op, args, workspace, needed));
    if (route == Route::cuda) return cuda_backend::attend(args, workspace, stream, plan);
    return reference::attend(args);
  });
}

Status combine(const CombineArgs& args, Stream stream) {
  constexpr const char* op = "smla::combine";
  return guarded(op, [&] {
    SMLA_RETURN_IF_ERROR(api::validate_combine(op, args));
    Route route;
    SMLA_RETURN_IF_ERROR(choose_route(op, args.partial_out.device, &route));
    if (route == Route::cuda) return cuda_backend::combine(args, stream);
    return reference::combine(args);
  });
}

Status quantize(const TensorView& rows, const KvPool& pool, Stream stream) {
  constexpr const char* op = "smla::quantize";
  return guarded(op, [&] {
    SMLA_RETURN_IF_ERROR(api::validate_quantize(op, rows, pool));
    Route route;
    SMLA_RETURN_IF_ERROR(choose_route(op, rows.device, &route));
    if (route == Route::cuda) return cuda_backend::quantize(rows, pool, stream);
    return reference::quantize(rows, pool);
  });
}

Status dequantize(const KvPool& pool, const TensorView& rows, Stream stream) {
  constexpr const char* op = "smla::dequantize";
  return guarded(op, [&] {
    SMLA_RETURN_IF_ERROR(api::validate_dequantize(op, pool, rows));
    Route route;
    SMLA_RETURN_IF_ERROR(choose_route(op, rows.device, &route));
    if (route == Route::cuda) return cuda_backend::dequantize(pool, rows, stream);
    return reference::dequantize(pool, rows);
  });
}

Status write_cache(const TensorView& rows, const TensorView& slots, const KvPool& pool,
                   Stream stream) {
  constexpr const char* op = "smla::write_cache";
  return guarded(op, [&] {
    SMLA_RETURN_IF_ERROR(api::validate_write_cache(op, rows, slots, pool));
    Route route;
    SMLA_RETURN_IF_ERROR(choose_route(op, rows.device, &route));
    if (route == Route::cuda) return cuda_backend::write_cache(rows, slots, pool, stream);
    return reference::write_cache(rows, slots, pool);
  });
}

const char* version() { return SMLA_VERSION_STRING; }
const char* compiled_cuda_architectures() { return cuda_backend::compiled_architectures(); }
const char* kernel_preset() { return cuda_backend::kernel_preset(); }
const char* compiled_gpu_paths() { return cuda_backend::compiled_paths(); }
int cuda_device_count() { return cuda_backend::device_count(); }

}  // namespace smla
