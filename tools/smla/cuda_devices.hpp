// The CUDA devices this process sees, for `smla info` and the GPU bench. The only place of
// the tool that asks the CUDA runtime about devices; a CPU-only build sees none.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace smla::cli {

struct CudaDevice {
  int ordinal = 0;
  std::string name;
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  int64_t memory_bytes = 0;
  std::string pci_bus_id;  // domain:bus:device.function in hex, as NVML takes it
};

struct CudaDeviceList {
  std::vector<CudaDevice> devices;
  std::string why_none;  // when empty: "no CUDA device; CPU-only build" or the runtime's answer
};

CudaDeviceList cuda_devices();

// Which GPU paths this build compiled (from smla::compiled_cuda_architectures()) and which
// of them a device of this compute capability can run.
struct GpuPaths {
  bool portable_compiled = false;  // mma.sync kernels, for every compiled architecture
  bool hopper_compiled = false;    // wgmma / TMA kernels (sm_90a)
};
GpuPaths compiled_gpu_paths();
bool hopper_runs_on(const CudaDevice& device);
bool portable_runs_on(const CudaDevice& device);

}  // namespace smla::cli
