#include "cuda_devices.hpp"

#include <cstdio>
#include <sstream>

#include "smla/ops.hpp"

#if SMLA_WITH_CUDA
#include <cuda_runtime.h>
#endif

namespace smla::cli {

namespace {

std::vector<std::string> compiled_arch_list() {
  std::vector<std::string> archs;
  std::istringstream list(compiled_cuda_architectures());
  for (std::string arch; std::getline(list, arch, ';');) {
    if (!arch.empty()) archs.push_back(arch);
  }
  return archs;
}

// The lowest plain (non-"a") architecture compiled: its cubin or PTX runs on that and newer.
int lowest_portable_arch() {
  int lowest = 0;
  for (const std::string& arch : compiled_arch_list()) {
    if (arch.back() == 'a') continue;
    const int value = std::stoi(arch);
    if (lowest == 0 || value < lowest) lowest = value;
  }
  return lowest;
}

}  // namespace

CudaDeviceList cuda_devices() {
  CudaDeviceList list;
#if SMLA_WITH_CUDA
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    list.why_none = std::string("no CUDA device; ") + cudaGetErrorString(err);
    return list;
  }
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) continue;
    char bus_id[32];
    std::snprintf(bus_id, sizeof bus_id, "%04x:%02x:%02x.0", prop.pciDomainID, prop.pciBusID,
                  prop.pciDeviceID);
    list.devices.push_back({i, prop.name, prop.major, prop.minor, prop.multiProcessorCount,
                            static_cast<int64_t>(prop.totalGlobalMem), bus_id});
  }
  if (list.devices.empty()) list.why_none = "no CUDA device";
#else
  list.why_none = "no CUDA device; CPU-only build";
#endif
  return list;
}

GpuPaths compiled_gpu_paths() {
  GpuPaths paths;
  std::istringstream list(smla::compiled_gpu_paths());
  for (std::string path; std::getline(list, path, ';');) {
    if (path == "portable") paths.portable_compiled = true;
    if (path == "hopper") paths.hopper_compiled = true;
  }
  return paths;
}

// Whether this build has code a device of this compute capability runs: its own architecture
// (an "a" build runs on exactly that capability), or a lower plain one (cubins run on later
// minor versions, the embedded PTX on anything newer).
static bool has_code_for(const CudaDevice& device) {
  const int cc = device.cc_major * 10 + device.cc_minor;
  const int lowest = lowest_portable_arch();
  if (lowest != 0 && cc >= lowest) return true;
  for (const std::string& arch : compiled_arch_list()) {
    if (std::stoi(arch) == cc) return true;
  }
  return false;
}

bool hopper_runs_on(const CudaDevice& device) {
  return compiled_gpu_paths().hopper_compiled && device.cc_major == 9 && device.cc_minor == 0;
}

bool portable_runs_on(const CudaDevice& device) {
  return compiled_gpu_paths().portable_compiled && has_code_for(device);
}

}  // namespace smla::cli
