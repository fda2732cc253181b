// Tokens claimed at run time by the CTAs of a one-pass launch (AttendParams::claims): instead
// of walking every units-th token, each CTA takes the next token of its head tile from a
// counter in the workspace, so a CTA that runs faster takes more of them and the call ends
// about when the average CTA does, not with the slowest one (the topk 512 prefill row's CTAs
// finished 40 us apart walking fixed tokens, 20 us apart claiming: docs/perf-notes.md).
//
// The producer's first thread claims; a two-slot queue in shared memory hands each token to
// the CTA's other threads. A token is computed whole by whichever CTA claims it, so results
// do not depend on the order of the claims.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/portable/attend_params.hpp"
#include "cuda/ptx/mbarrier.cuh"

namespace smla::hopper {

// The queue, in static shared memory (its address is a constant, so no role keeps a pointer to
// it in registers across its items): per slot a FULL barrier (the claimer's arrival), an
// EMPTY one (every thread of the CTA has read the slot) and the claimed token.
class ClaimQueue {
 public:
  static constexpr int kSlots = 2;
  static constexpr int kBytes = kSlots * (8 + 8 + 4);  // beside the kernels' dynamic shared memory

  // One thread, before the CTA's first __syncthreads.
  __device__ static void init() {
    for (int s = 0; s < kSlots; ++s) {
      ptx::mbarrier_init(full(s), 1);
      ptx::mbarrier_init(empty(s), blockDim.x);
    }
  }

  // The token of this CTA's claim k (k = 0, 1, ... in turn) from p.claims, the counter of its
  // head tile (blockIdx.x % head_tiles); p.tokens or more once they have run out. Every
  // thread of the CTA calls it: thread 0 claims, the others wait for its hand-over.
  __device__ static int claim(const portable::AttendParams& p, int k) {
    const int s = k % kSlots;
    const uint32_t parity = (k / kSlots) & 1;
    // Every thread read the slot's last token. Waited by all (it returns at once in practice:
    // q_full and q_empty order the items) rather than by the claimer alone, whose branch
    // with a second wait loop in it made ptxas spill 60-120 more bytes in the roles' loops.
    ptx::mbarrier_wait(empty(s), parity ^ 1);
    if (threadIdx.x == 0) {
      tokens()[s] = atomicAdd(p.claims + blockIdx.x % p.head_tiles, 1);
      ptx::mbarrier_arrive(full(s));
    }
    ptx::mbarrier_wait(full(s), parity);
    const int t = tokens()[s];
    ptx::mbarrier_arrive(empty(s));
    return t;
  }

 private:
  __device__ static uint64_t* bars() {
    __shared__ uint64_t bars[2 * kSlots];
    return bars;
  }
  __device__ static int32_t* tokens() {
    __shared__ int32_t tokens[kSlots];
    return tokens;
  }
  __device__ static uint64_t* full(int s) { return bars() + s; }
  __device__ static uint64_t* empty(int s) { return bars() + kSlots + s; }
};

}  // namespace smla::hopper
