// cp.async wrappers (sm_80+): asynchronous global -> shared copies that bypass registers.
// The zfill forms copy `src_bytes` (0 allowed) and zero the rest of the destination, so an
// invalid KV row becomes zeros in shared memory without its address ever being read.
#pragma once

#include <cstdint>

#include "cuda/ptx/ldmatrix.cuh"  // smem_u32

namespace smla::ptx {

// cp.async.cg.shared.global [dst], [src], 16, src_bytes  (cg: bypass L1, gathered rows are
// read once per CTA). src_bytes is 16 or 0; with 0 `src` is not dereferenced.
__device__ __forceinline__ void cp_async_cg_16_zfill(void* dst, const void* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_u32(dst)),
               "l"(src), "r"(valid ? 16 : 0)
               : "memory");
}

// cp.async.ca.shared.global [dst], [src], 8, src_bytes  (8-byte scale groups)
__device__ __forceinline__ void cp_async_ca_8_zfill(void* dst, const void* src, bool valid) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(smem_u32(dst)), "l"(src),
               "r"(valid ? 8 : 0)
               : "memory");
}

// cp.async.ca.shared.global [dst], [src], 4, src_bytes  (4 bytes: an f32 scale, a bounds word)
__device__ __forceinline__ void cp_async_ca_4_zfill(void* dst, const void* src, bool valid) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(smem_u32(dst)), "l"(src),
               "r"(valid ? 4 : 0)
               : "memory");
}

// cp.async.commit_group: closes the group of copies issued since the last commit.
__device__ __forceinline__ void cp_async_commit_group() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

// cp.async.wait_group N: waits until at most N committed groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait_group() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// cp.async.mbarrier.arrive (sm_80+): raises the pending count of `bar`'s current phase by one
// now and lowers it once every cp.async this thread issued before has landed, so the phase
// cannot complete before those copies have; the thread goes on without waiting for them. The
// thread still arrives on `bar` (mbarrier_arrive) for its arrival count.
__device__ __forceinline__ void cp_async_mbarrier_arrive(uint64_t* bar) {
  asm volatile("cp.async.mbarrier.arrive.shared::cta.b64 [%0];\n" ::"r"(smem_u32(bar))
               : "memory");
}

}  // namespace smla::ptx
