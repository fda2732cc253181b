// Thread-block cluster primitives (sm_90): the CTA's rank, the cluster barrier, and access to
// a peer CTA's shared memory (distributed shared memory): stores, mbarrier arrivals and the
// proxy fence that makes such stores visible to the peer's wgmma reads. Addresses are 32-bit
// shared::cluster addresses, from map_to_rank.
#pragma once

#include <cstdint>

namespace smla::ptx {

__device__ __forceinline__ uint32_t cluster_ctarank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}

// CTAs in this CTA's cluster: 1 when the kernel was launched without a cluster.
__device__ __forceinline__ uint32_t cluster_nctarank() {
  uint32_t n;
  asm volatile("mov.u32 %0, %%cluster_nctarank;\n" : "=r"(n));
  return n;
}

// Every thread of every CTA of the cluster: this thread's earlier writes (mbarrier
// initializations included, with fence_mbarrier_init) are visible to the cluster after it.
__device__ __forceinline__ void cluster_sync() {
  asm volatile(
      "barrier.cluster.arrive.release;\n"
      "barrier.cluster.wait.acquire;\n" ::
          : "memory");
}

// Orders this thread's mbarrier.init before a later cluster-scope release (cluster_sync), so
// a peer may arrive on the barrier after it.
__device__ __forceinline__ void fence_mbarrier_init_cluster() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

// The address of shared-memory byte `local` (a shared::cta address) in CTA `rank`'s window.
__device__ __forceinline__ uint32_t map_to_rank(uint32_t local, uint32_t rank) {
  uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(local), "r"(rank));
  return remote;
}

__device__ __forceinline__ void st_shared_cluster_u4(uint32_t addr, uint4 v) {
  asm volatile("st.shared::cluster.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(v.x),
               "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
}

// Arrives `count` times on a barrier in any CTA of the cluster, releasing this thread's
// earlier writes (to any CTA's shared memory) at cluster scope. One elected lane arriving for
// its warp (after __syncwarp, which orders the other lanes' writes before it) keeps the
// remote arrivals few: each one is a round trip to the peer's shared memory.
__device__ __forceinline__ void mbarrier_arrive_cluster(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0], %1;\n" ::"r"(bar),
               "r"(count)
               : "memory");
}

// fence_proxy_async_shared for stores into any CTA's shared memory of the cluster.
__device__ __forceinline__ void fence_proxy_async_shared_cluster() {
  asm volatile("fence.proxy.async.shared::cluster;\n" ::: "memory");
}

}  // namespace smla::ptx
