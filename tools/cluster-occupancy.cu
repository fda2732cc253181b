// How many thread-block clusters of each size can be resident at once on device 0 when every
// CTA takes a whole SM, as the Hopper attention kernels' do (384 threads, more than half of
// an SM's shared memory): the question a cluster design must answer before anything else
// (docs/perf-notes.md, Next 10), since a grid past that count runs in a second wave.
// `tools/gpu-suite` builds it with nvcc and runs it as its cluster-occupancy step.
//
// Usage: cluster-occupancy   (prints one line per cluster size 1, 2, 4, 8, 16; exit 1 on a
//                             CUDA error; sizes the device cannot launch say why)
#include <cuda_runtime.h>

#include <cstdio>

namespace {

constexpr int kThreads = 384;

__global__ void __launch_bounds__(kThreads, 1) whole_sm_kernel(int* never) {
  extern __shared__ int smem[];
  if (never != nullptr) never[threadIdx.x] = smem[threadIdx.x];
}

bool check(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return true;
  std::fprintf(stderr, "cluster-occupancy: %s: %s\n", what, cudaGetErrorString(err));
  return false;
}

}  // namespace

int main() {
  cudaDeviceProp prop{};
  if (!check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties")) return 1;
  const int smem = static_cast<int>(prop.sharedMemPerBlockOptin);
  std::printf("%s, %d SMs, %d B of shared memory per CTA (one CTA per SM), %d threads\n",
              prop.name, prop.multiProcessorCount, smem, kThreads);
  if (!check(cudaFuncSetAttribute(whole_sm_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  smem),
             "cudaFuncSetAttribute(max dynamic shared memory)") ||
      !check(cudaFuncSetAttribute(whole_sm_kernel, cudaFuncAttributeNonPortableClusterSizeAllowed,
                                  1),
             "cudaFuncSetAttribute(non-portable cluster size)")) {
    return 1;
  }
  for (int size : {1, 2, 4, 8, 16}) {
    cudaLaunchAttribute cluster{};
    cluster.id = cudaLaunchAttributeClusterDimension;
    cluster.val.clusterDim.x = static_cast<unsigned>(size);
    cluster.val.clusterDim.y = 1;
    cluster.val.clusterDim.z = 1;
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(static_cast<unsigned>(size * prop.multiProcessorCount));
    config.blockDim = dim3(kThreads);
    config.dynamicSmemBytes = static_cast<size_t>(smem);
    config.attrs = &cluster;
    config.numAttrs = 1;
    int clusters = 0;
    const cudaError_t err = cudaOccupancyMaxActiveClusters(&clusters, whole_sm_kernel, &config);
    if (err != cudaSuccess) {
      cudaGetLastError();  // not sticky: the next size is still asked
      std::printf("clusters of %2d: not launchable (%s)\n", size, cudaGetErrorString(err));
      continue;
    }
    std::printf("clusters of %2d: %3d resident, %3d CTAs\n", size, clusters, clusters * size);
  }
  return 0;
}
