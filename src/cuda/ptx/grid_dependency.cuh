// Programmatic dependent launch (sm_90+): a kernel launched with the programmatic stream
// serialization attribute may start while the kernel before it on the stream still runs, once
// every CTA of that kernel has allowed it (or exited). Both calls compile to nothing below
// sm_90, where launches stay serial.
#pragma once

namespace smla::ptx {

// griddepcontrol.launch_dependents: this CTA lets the next kernel's CTAs be scheduled now.
// Only a launch, never a memory guarantee: the dependent still waits (below) before reading.
__device__ __forceinline__ void allow_dependent_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}

// griddepcontrol.wait: until the kernels this one depends on have completed and their memory
// writes are visible. Returns at once in a kernel launched without the attribute.
__device__ __forceinline__ void wait_for_prerequisite_grids() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

}  // namespace smla::ptx
