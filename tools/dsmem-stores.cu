// What it costs two CTAs of a cluster to send each other a half step of converted rows
// (perf-notes Next 16: the shared dequantization of h_q = 128 lost 4-20% where the cross-CTA
// coupling alone cost 4-5%). Every SM holds one CTA (whole-SM shared memory, as the Hopper
// attention kernels), 66 clusters of two on an H100 or H200; per iteration each CTA's 128
// threads send 32 KB (32 rows of a 64-row, 1024-byte-per-row swizzled tile) into the peer's
// tile, completing the peer's mbarrier by bytes, and wait for the peer's 32 KB. The patterns:
//   scattered   st.async in the quantized producer's pattern: lane l of warp w takes row
//               8 w + l % 8 and 16-byte groups 2 (l / 8 + 4 j) and 2 (l / 8 + 4 j) + 1 of it,
//               so one warp instruction writes 8 rows' same group (tile_chunk_offset);
//   contiguous  st.async, a warp instruction writing 512 consecutive bytes (4 rows' 128-byte
//               lines);
//   local       the scattered pattern into the CTA's own tile by st.shared, with a CTA barrier
//               per iteration: the work the exchange adds to;
//   both        scattered, each group stored to the own tile and sent to the peer's, as the
//               paired producer of pairshare (85532bd) did;
//   bulk        the scattered stores into the own tile, then one thread copies the half tile
//               to the peer's by eight 4 KB `cp.async.bulk` (one per 64-column block), as a
//               producer that converts locally and forwards whole blocks would.
// Each pattern runs twice: lock-step (each CTA waits for the peer's bytes of this iteration
// before the next, so a round trip is in every iteration) and pipelined (it waits for the
// previous iteration's bytes, as a two-stage ring would: the exchange's throughput).
// Prints ns per iteration (median over CTAs) in both modes and, pipelined, the bytes each SM
// sends per ns.
//
// Usage: dsmem-stores [iterations]   (default 2000; exit 1 on a CUDA error)
// Build: nvcc -std=c++17 -arch=sm_90a -I src tools/dsmem-stores.cu -o dsmem-stores
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cuda/ptx>
#include <vector>

#include "cuda/hopper/tile_layout.cuh"  // tile_chunk_offset: the kernels' tile
#include "cuda/ptx/mbarrier.cuh"
#include "cuda/ptx/tma.cuh"        // mbarrier_arrive_expect_tx
#include "cuda/ptx/warpgroup.cuh"  // fence_proxy_async_shared

namespace {

constexpr int kThreads = 128;
constexpr int kRowBytes = 1024;                 // 512 bf16 values: eight 64-column blocks
constexpr int kTileBytes = 64 * kRowBytes;      // 64 rows
constexpr int kHalfBytes = kTileBytes / 2;      // what each CTA sends per iteration
constexpr int kStores = kHalfBytes / 16 / kThreads;  // 16-byte stores per thread: 16

enum Pattern : int { kScattered, kContiguous, kLocal, kBoth, kBulk };
constexpr int kPatterns = 5;
// Barriers of the ring: a pipelined CTA may receive the peer's bytes of iteration i + 1 while
// it still waits for those of i, and re-arms barrier i % kBars only after the peer's phase
// i - kBars has completed (the peer waited for it before sending iteration i - 1).
constexpr int kBars = 4;

using smla::hopper::tile_chunk_offset;

// The cluster operations, through CCCL's cuda::ptx as the project's TMA wrappers (ptx/tma.cuh);
// the peer's shared memory as generic pointers (__cluster_map_shared_rank), which cuda::ptx
// turns into shared::cluster addresses.
__device__ void cluster_sync() {
  cuda::ptx::barrier_cluster_arrive(cuda::ptx::sem_release);
  cuda::ptx::barrier_cluster_wait(cuda::ptx::sem_acquire);
}

template <class T>
__device__ T* on_peer(T* local, uint32_t peer) {
  return static_cast<T*>(__cluster_map_shared_rank(local, peer));
}

// Offset of this thread's store i of the half tile of rows [row0, row0 + 32).
__device__ uint32_t store_offset(Pattern pattern, int row0, int i) {
  const int lane = static_cast<int>(threadIdx.x % 32), warp = static_cast<int>(threadIdx.x / 32);
  if (pattern == kContiguous) {
    // Chunk q of the half tile: its rows of 64-column block q / 256 are 4 KB in a row.
    const int q = i * kThreads + static_cast<int>(threadIdx.x);
    return static_cast<uint32_t>((q / 256) * (64 * 128) + row0 * 128 + (q % 256) * 16);
  }
  const int row = row0 + 8 * warp + lane % 8;
  const int piece = lane / 8 + 4 * (i / 2);  // a 16-value piece: two groups
  return tile_chunk_offset(row, 2 * piece + i % 2);
}

// Sends this CTA's half tile of one iteration to the peer (the local pattern: stores it into
// its own tile) in `pattern`.
__device__ void send_half(Pattern pattern, uint8_t* tile, uint8_t* peer_tile, int row0,
                          uint64_t* peer_bar, const uint4& value) {
  if (pattern == kLocal || pattern == kBulk) {
#pragma unroll
    for (int i = 0; i < kStores; ++i) {
      *reinterpret_cast<uint4*>(tile + store_offset(kScattered, row0, i)) = value;
    }
    if (pattern == kBulk) smla::ptx::fence_proxy_async_shared();  // for the bulk copy's reads
    __syncthreads();
    if (pattern == kBulk && threadIdx.x == 0) {
      for (int block = 0; block < 8; ++block) {
        const uint32_t offset = static_cast<uint32_t>(block * 64 * 128 + row0 * 128);
        cuda::ptx::cp_async_bulk(cuda::ptx::space_cluster, cuda::ptx::space_shared,
                                 peer_tile + offset, tile + offset, 32 * 128, peer_bar);
      }
    }
    return;
  }
  const Pattern sent = pattern == kBoth ? kScattered : pattern;
#pragma unroll
  for (int i = 0; i < kStores; ++i) {
    const uint32_t offset = store_offset(sent, row0, i);
    if (pattern == kBoth) *reinterpret_cast<uint4*>(tile + offset) = value;
    const uint32_t words[4] = {value.x, value.y, value.z, value.w};
    cuda::ptx::st_async(reinterpret_cast<uint32_t*>(peer_tile + offset), words, peer_bar);
  }
}

__global__ void __launch_bounds__(kThreads, 1)
    exchange_kernel(Pattern pattern, bool pipelined, int iterations, unsigned long long* ns) {
  extern __shared__ __align__(1024) uint8_t smem[];
  uint8_t* tile = smem;
  auto* bars = reinterpret_cast<uint64_t*>(smem + kTileBytes);  // [kBars]: a ring
  const uint32_t rank = cuda::ptx::get_sreg_cluster_ctarank(), peer = rank ^ 1u;
  if (threadIdx.x == 0) {
    for (int b = 0; b < kBars; ++b) smla::ptx::mbarrier_init(&bars[b], 1);
    cuda::ptx::fence_mbarrier_init(cuda::ptx::sem_release, cuda::ptx::scope_cluster);
  }
  cluster_sync();
  const int row0 = static_cast<int>(rank) * 32;  // the rows this CTA converts and sends
  uint8_t* const peer_tile = on_peer(tile, peer);
  const uint4 value = make_uint4(threadIdx.x, rank, 1, 2);
  // Waits for the peer's bytes of iteration `it`.
  auto wait_for = [&](int it) {
    smla::ptx::mbarrier_wait(&bars[it % kBars], static_cast<uint32_t>((it / kBars) & 1));
  };
  const uint64_t t0 = cuda::ptx::get_sreg_globaltimer();
  for (int it = 0; it < iterations; ++it) {
    uint64_t* const bar = &bars[it % kBars];
    send_half(pattern, tile, peer_tile, row0, on_peer(bar, peer), value);
    if (pattern == kLocal) continue;
    if (threadIdx.x == 0) smla::ptx::mbarrier_arrive_expect_tx(bar, kHalfBytes);
    if (!pipelined) {
      wait_for(it);
    } else if (it > 0) {
      wait_for(it - 1);
    }
  }
  if (pipelined && pattern != kLocal) wait_for(iterations - 1);
  const uint64_t t1 = cuda::ptx::get_sreg_globaltimer();
  // The peer may still be writing into this CTA or arriving on its barriers until here.
  cluster_sync();
  if (threadIdx.x == 0) ns[blockIdx.x] = t1 - t0;
}

bool check(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return true;
  std::fprintf(stderr, "dsmem-stores: %s: %s\n", what, cudaGetErrorString(err));
  return false;
}

// Median over the CTAs of ns per iteration of one launch; a negative value on a CUDA error.
double median_ns_per_iteration(Pattern pattern, bool pipelined, int iterations, int ctas,
                               int smem, unsigned long long* ns) {
  cudaLaunchAttribute cluster{};
  cluster.id = cudaLaunchAttributeClusterDimension;
  cluster.val.clusterDim.x = 2;
  cluster.val.clusterDim.y = 1;
  cluster.val.clusterDim.z = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(static_cast<unsigned>(ctas));
  config.blockDim = dim3(kThreads);
  config.dynamicSmemBytes = static_cast<size_t>(smem);
  config.attrs = &cluster;
  config.numAttrs = 1;
  if (!check(cudaLaunchKernelEx(&config, exchange_kernel, pattern, pipelined, iterations, ns),
             "cudaLaunchKernelEx") ||
      !check(cudaDeviceSynchronize(), "exchange_kernel")) {
    return -1.0;
  }
  std::vector<unsigned long long> host(static_cast<size_t>(ctas));
  if (!check(cudaMemcpy(host.data(), ns, sizeof(unsigned long long) * ctas,
                        cudaMemcpyDeviceToHost),
             "cudaMemcpy")) {
    return -1.0;
  }
  std::sort(host.begin(), host.end());
  return static_cast<double>(host[host.size() / 2]) / iterations;
}

}  // namespace

int main(int argc, char** argv) {
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 2000;
  if (iterations < 1) {
    std::fprintf(stderr, "usage: dsmem-stores [iterations >= 1]\n");
    return 2;
  }
  cudaDeviceProp prop{};
  if (!check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties")) return 1;
  // Whole-SM shared memory, as the attention kernels: one CTA per SM.
  const int smem = static_cast<int>(prop.sharedMemPerBlockOptin);
  if (!check(cudaFuncSetAttribute(exchange_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  smem),
             "cudaFuncSetAttribute")) {
    return 1;
  }
  const int ctas = prop.multiProcessorCount / 2 * 2;
  unsigned long long* ns = nullptr;
  if (!check(cudaMalloc(&ns, sizeof(unsigned long long) * ctas), "cudaMalloc")) return 1;
  std::printf("%s, %d CTAs in clusters of 2, %d B sent per CTA and iteration, %d iterations\n",
              prop.name, ctas, kHalfBytes, iterations);
  std::printf("%-11s %18s %18s %18s\n", "pattern", "lock-step ns/it", "pipelined ns/it",
              "B sent per ns/SM");
  const char* names[kPatterns] = {"scattered", "contiguous", "local", "both", "bulk"};
  for (int pattern = 0; pattern < kPatterns; ++pattern) {
    double per_iteration[2];
    for (int pipelined = 0; pipelined < 2; ++pipelined) {
      per_iteration[pipelined] = median_ns_per_iteration(
          static_cast<Pattern>(pattern), pipelined == 1, iterations, ctas, smem, ns);
      if (per_iteration[pipelined] < 0.0) return 1;
    }
    std::printf("%-11s %18.1f %18.1f %18.1f\n", names[pattern], per_iteration[0],
                per_iteration[1], pattern == kLocal ? 0.0 : kHalfBytes / per_iteration[1]);
  }
  cudaFree(ns);
  return 0;
}
