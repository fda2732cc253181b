// cuda_backend::device_info: the launch-relevant properties of each CUDA device, read once
// per ordinal and kept for the life of the process.
#include <cuda_runtime.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "cuda/cuda_check.hpp"
#include "cuda/device_info.hpp"

namespace smla::cuda_backend {
namespace {

Status read_device_info(int ordinal, DeviceInfo* info) {
  constexpr const char* op = "smla::device_info";
  int count = 0;
  SMLA_CUDA_TRY(cudaGetDeviceCount(&count), op, "cudaGetDeviceCount");
  if (ordinal < 0 || ordinal >= count) {
    return Status(StatusCode::unsupported, std::string(op) + ": no CUDA device cuda:" +
                                               std::to_string(ordinal) + " (this process sees " +
                                               std::to_string(count) + ")");
  }
  // Single attributes instead of cudaGetDeviceProperties: the latter also queries slow
  // fields (clock rates, PCI topology) that no launcher needs.
  struct Query {
    cudaDeviceAttr attr;
    int* field;
  };
  const Query queries[] = {
      {cudaDevAttrComputeCapabilityMajor, &info->cc_major},
      {cudaDevAttrComputeCapabilityMinor, &info->cc_minor},
      {cudaDevAttrMultiProcessorCount, &info->sm_count},
      {cudaDevAttrMaxSharedMemoryPerBlockOptin, &info->max_smem_per_block_optin},
      {cudaDevAttrL2CacheSize, &info->l2_bytes},
  };
  for (const Query& q : queries) {
    SMLA_CUDA_TRY(cudaDeviceGetAttribute(q.field, q.attr, ordinal), op, "cudaDeviceGetAttribute");
  }
  info->ordinal = ordinal;
  return Status::success();
}

}  // namespace

Status device_info(int ordinal, const DeviceInfo** info) {
  // Entries are heap nodes that are never erased, so a returned pointer stays valid while
  // other threads add devices. A failed read is not cached: the caller gets the error and a
  // later call (e.g. after CUDA_VISIBLE_DEVICES is fixed in a new process) reads again.
  static std::mutex mutex;
  static std::map<int, std::unique_ptr<DeviceInfo>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(ordinal);
  if (it == cache.end()) {
    auto fresh = std::make_unique<DeviceInfo>();
    Status st = read_device_info(ordinal, fresh.get());
    if (!st.ok()) return st;
    it = cache.emplace(ordinal, std::move(fresh)).first;
  }
  *info = it->second.get();
  return Status::success();
}

}  // namespace smla::cuda_backend
