// mbarrier wrappers (sm_90): shared-memory barriers with an arrival count and a phase bit,
// the hand-off between the producer and the consumer warpgroups of the Hopper kernels.
// A barrier completes a phase when `count` arrivals have happened; waiting on parity P returns
// once the phase with that parity has completed (on a fresh barrier, parity 1 counts as the
// phase before the first, so waiting on it returns at once).
#pragma once

#include <cstdint>

#include "cuda/ptx/ldmatrix.cuh"  // smem_u32

namespace smla::ptx {

__device__ __forceinline__ void mbarrier_init(uint64_t* bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(count)
               : "memory");
}

// Arrives once, with release semantics: this thread's earlier writes are visible to a thread
// whose wait observes the phase completing.
__device__ __forceinline__ void mbarrier_arrive(uint64_t* bar) {
  asm volatile(
      "{\n.reg .b64 state;\n"
      "mbarrier.arrive.release.cta.shared::cta.b64 state, [%0];\n}\n" ::"r"(smem_u32(bar))
      : "memory");
}

// Waits until the phase of parity `parity` has completed (acquire semantics). The suspend
// hint lets the hardware park the waiting warp until the phase completes (or the hint's time
// passes) instead of re-issuing try_wait: the retry loop was 13-15% of the prefill kernels'
// issued instructions, slots the other warps of the scheduler could use.
__device__ __forceinline__ void mbarrier_wait(uint64_t* bar, uint32_t parity) {
  constexpr uint32_t kSuspendHintNs = 10'000'000;
  asm volatile(
      "{\n.reg .pred done;\n"
      "wait_%=:\n"
      "mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 done, [%0], %1, %2;\n"
      "@!done bra wait_%=;\n}\n" ::"r"(smem_u32(bar)),
      "r"(parity), "n"(kSuspendHintNs)
      : "memory");
}

}  // namespace smla::ptx
