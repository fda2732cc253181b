// Warp-specialization primitives (sm_90a): register reallocation between warpgroups, named
// barriers over a subset of the CTA, and the proxy fence between ordinary shared-memory
// stores and the asynchronous proxy (wgmma operands) that reads them.
#pragma once

#include <cstdint>

namespace smla::ptx {

// setmaxnreg: gives registers back to the CTA's pool (dec) or takes them (inc). Every warp of
// the warpgroup executes it; the kernel needs a register cap at entry (launch bounds).
template <int N>
__device__ __forceinline__ void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}
template <int N>
__device__ __forceinline__ void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
}

// bar.sync id, threads: a barrier of `threads` (a multiple of 32) threads; id 0 is
// __syncthreads's, so named barriers take 1..15.
__device__ __forceinline__ void named_barrier_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// bar.arrive id, threads: this thread's arrival at a named barrier without waiting for it
// (producer side of a one-way hand-off; the consumers of it wait with named_barrier_sync).
__device__ __forceinline__ void named_barrier_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// bar.red.or: a barrier of `threads` threads that returns whether any of them passed true.
// The answer is the same in every thread, but ptxas does not know it: a branch on it gets
// divergence regions and warp syncs. A caller whose code after the branch pays for those can
// broadcast the answer from one lane (the quantized decode kernel's any_consumer_over); the
// block-pair kernel does not, since the broadcast raised its spills (perf-notes Next 11).
__device__ __forceinline__ bool named_barrier_any(int id, int threads, bool vote) {
  uint32_t any;
  asm volatile(
      "{\n.reg .pred in, out;\n"
      "setp.ne.u32 in, %3, 0;\n"
      "bar.red.or.pred out, %1, %2, in;\n"
      "selp.u32 %0, 1, 0, out;\n}\n"
      : "=r"(any)
      : "r"(id), "r"(threads), "r"(static_cast<uint32_t>(vote))
      : "memory");
  return any != 0;
}

// Makes this thread's ordinary shared-memory stores visible to later wgmma reads (after the
// barrier that orders them).
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

}  // namespace smla::ptx
