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

// Makes this thread's ordinary shared-memory stores visible to later wgmma reads (after the
// barrier that orders them).
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

}  // namespace smla::ptx
