// The pieces of a consumer step of the Hopper kernel of quantized pools (attend_kernel.cuh):
// the S and P·V products, P's store into the shared tile, the |V| scan and the consumer state
// and waits around a step (ConsumerBase).
// Only compiled for sm_90a, as the wgmma wrappers they call.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/hopper/attend_common.cuh"
#include "cuda/hopper/attend_shared_state.cuh"
#include "cuda/hopper/softmax_fragments.cuh"
#include "cuda/ptx/convert.cuh"
#include "cuda/ptx/mbarrier.cuh"
#include "cuda/ptx/warpgroup.cuh"
#include "cuda/ptx/wgmma.cuh"

namespace smla::hopper {

// Issues d_qk blocks [KB0, KB1) of S = Q·K^T for the N = R * 2 KV rows of the stage from
// `k_rows` on (from block 0: overwriting s) as one wgmma group: m64n32 (R = 16) or m64n64
// (R = 32). The caller waits for S in the same step: an S in flight across the step loop
// would make ptxas wait for it.
template <class C, int KB0, int KB1, int R>
__device__ __forceinline__ void issue_s_blocks(float (&s)[R], const uint8_t* q,
                                               const uint8_t* k_rows) {
  static_assert(R == 16 || R == 32);
  // One descriptor per operand, stepped by constants (ptx::desc_step) and opaque: ptxas
  // would otherwise hoist every stepped Q descriptor out of the step loop and spill them.
  const uint64_t q_desc = ptx::opaque_desc(ptx::sw128_desc(q, 0, 1024));
  const uint64_t k_desc = ptx::sw128_desc(k_rows, 0, 1024);
  ptx::wgmma_fence();
#pragma unroll
  for (int kb = KB0; kb < KB1; ++kb) {
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
      const int step = kb * C::BLOCK_BYTES + kk * 32;
      const uint64_t a = ptx::desc_step(q_desc, step);
      const uint64_t b = ptx::desc_step(k_desc, step);
      if constexpr (R == 16) {
        ptx::wgmma_m64n32k16_ss(s, a, b, kb + kk > 0);
      } else {
        ptx::wgmma_m64n64k16_ss(s, a, b, kb + kk > 0);
      }
    }
  }
  ptx::wgmma_commit();
}

// The descriptor of V's d_v half `half` in the stage `tile`: d_v blocks [4 half, 4 half + 4)
// of the K tile, read MN-major (the B of O[:, 256 half : 256 half + 256] += P·V).
template <class C>
__device__ __forceinline__ uint64_t v_half_desc(const uint8_t* tile, int half) {
  return ptx::sw128_desc(tile + (C::DV_COLS / 64) * half * C::BLOCK_BYTES, C::BLOCK_BYTES, 1024);
}

// Issues O[:, 256 half : 256 half + 256] += P·V over the KV rows of the stage `tile` that the
// k16 slices [k0, k0 + SLICES) cover (16 rows each; V is the stage's d_v half `half`) as one
// wgmma group, P from the shared P tile.
template <class C, int SLICES>
__device__ __forceinline__ void issue_pv_ss(float (&o)[128], const uint8_t* p_tile,
                                            const uint8_t* tile, int half, int k0) {
  const uint64_t p_desc = ptx::opaque_desc(ptx::sw128_desc(p_tile, 0, 1024));
  const uint64_t v_desc = v_half_desc<C>(tile, half);
  ptx::wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < SLICES; ++kk) {
    const int k = k0 + kk;
    ptx::wgmma_m64n256k16_ss_bt(o, ptx::desc_step(p_desc, k * 32),
                                ptx::desc_step(v_desc, k * 16 * 128), true);
  }
  ptx::wgmma_commit();
}

// The same product over the two k16 slices [k0, k0 + 2) with P from registers: pa holds their
// bf16x2 A fragments (pack_p_bf16x2's layout, 4 per slice).
template <class C>
__device__ __forceinline__ void issue_pv_rs(float (&o)[128], const uint32_t (&pa)[8],
                                            const uint8_t* tile, int half, int k0) {
  const uint64_t v_desc = v_half_desc<C>(tile, half);
  ptx::wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < 2; ++kk) {
    const uint32_t a[4] = {pa[4 * kk], pa[4 * kk + 1], pa[4 * kk + 2], pa[4 * kk + 3]};
    ptx::wgmma_m64n256k16_rs_bt(o, a, ptx::desc_step(v_desc, (k0 + kk) * 16 * 128));
  }
  ptx::wgmma_commit();
}

// bf16x2 words of P (or of its residual p - bf16(p)) into the shared P tile by 4-byte stores
// (the kernels without C::P_BY_STMATRIX): this thread's J 8-column blocks of an accumulator
// fragment (words[2 j + h]: rows row0 + 8 h, block j), from tile column col0 on.
template <int J>
__device__ __forceinline__ void store_p_words(uint8_t* p_tile, const uint32_t (&words)[2 * J],
                                              int col0, int lane, int row0) {
#pragma unroll
  for (int j = 0; j < J; ++j) {
    const int col = col0 + 8 * j + 2 * (lane % 4);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      *reinterpret_cast<uint32_t*>(p_tile + ptx::sw128_offset(row0 + 8 * h, col)) =
          words[2 * j + h];
    }
  }
}

// The |V| scan of a stage by kThreads threads (t: this thread's index among them), published
// per warp (`warp`: its index among the scanning warps; unsigned, as threadIdx.x / 32 - 4
// gives it: the quantized kernel's consumers measured 2-4% slower on V3.2 decode with a
// signed warp index, which ptxas allocates differently) in v_max for SharedState::v_bound.
// Consecutive 16-byte chunks go across the threads (no bank conflicts; V is the first
// V_BYTES of the tile, unswizzled order does not matter), the first half of a thread's chunks
// in d_v blocks 0..3, the rest in 4..7.
template <class C, int kThreads>
__device__ __forceinline__ void scan_and_publish_v(const SharedState<C>& s, const uint8_t* tile,
                                                   int t, unsigned warp, int lane) {
  constexpr int kHalf = C::V_BYTES / 16 / kThreads / 2;
  static_assert(C::V_BYTES % (16 * kThreads * 2) == 0, "two halves of whole chunks");
  uint32_t bits[2];
#pragma unroll
  for (int c = 0; c < 2; ++c) {
    bits[c] = max_abs_bf16_bits<kHalf, kThreads>(tile + 16 * (t + kThreads * kHalf * c));
  }
#pragma unroll
  for (int c = 0; c < 2; ++c) {
    bits[c] = __reduce_max_sync(0xffffffffu, bits[c]);
    if (lane == 0) s.v_max[2 * warp + c] = bits[c];
  }
}

// What each consumer warpgroup of the kernel keeps and does around its steps: its
// online-softmax state, the stage and product waits, the S and P·V products of its step, the
// hand-over of a stage to the next and the item's results.
template <class C>
class ConsumerBase : protected OnlineSoftmaxRows {
 protected:
  __device__ ConsumerBase(const AttendParams& p, const SharedState<C>& s)
      : p_(p),
        s_(s),
        lane_(threadIdx.x % 32),
        row0_((threadIdx.x % 128) / 32 * 16 + lane_ / 4) {}

  // The steps of an item for a consumer that computes S (R accumulator registers, KV rows
  // from kv_row0): waits for the item's Q, issues the first S (`while_s` runs while it does),
  // then calls consume(s, has_next) per step, which consumes the step and queues the next S;
  // an item without steps frees Q at once. Returns the item's step count.
  template <int R, class WhileS, class Consume>
  __device__ int consume_item(int token, int lo, int hi, int kv_row0, WhileS&& while_s,
                              Consume&& consume) {
    ptx::mbarrier_wait(s_.q_full(), item_ & 1);
    timeline::mark(p_.timeline, timeline::kConsumerQ, item_ == 0 && threadIdx.x == 128);
    timeline::mark_item_change(p_.timeline, timeline::kChangeNextQ, item_, threadIdx.x == 128);
    // Q arrives by TMA, or by cp.async when the map cannot describe q (issue_q_tile): the
    // cp.async writes are not the async proxy's, so order them before wgmma reads.
    ptx::fence_proxy_async_shared();
    start_item();
    const int steps = ItemRanges(p_, token, lo, hi).total_steps<C::BN>();
    if (steps > 0) {
      float s[R];  // S of the step being consumed
      wait_stage();
      timeline::mark(p_.timeline, timeline::kConsumerFirstStage,
                     item_ == 0 && threadIdx.x == 128);
      issue_s<0, C::D_BLOCKS>(s, kv_row0);
      while_s();
      wait_s(s);
      timeline::mark(p_.timeline, timeline::kConsumerFirstS, item_ == 0 && threadIdx.x == 128,
                     __float_as_uint(s[0]));
      timeline::mark_item_change(p_.timeline, timeline::kChangeNextS, item_,
                                 threadIdx.x == 128, __float_as_uint(s[0]));
#pragma unroll 1
      for (int i = 0; i < steps; ++i) consume(s, i + 1 < steps);
    } else {
      ptx::mbarrier_arrive(s_.q_empty());  // no S to wait for
    }
    return steps;
  }

  // Waits for the stage of step step_ (ordering its copies before wgmma reads them).
  __device__ void wait_stage() {
    const int stage = step_ % C::STAGES;
    ptx::mbarrier_wait(s_.full(stage), (step_ / C::STAGES) & 1);
    // bf16 rows arrive by cp.async, whose writes no producer thread waited for and fenced:
    // order them (and the dequantized stores) before this thread's wgmma reads.
    ptx::fence_proxy_async_shared();
  }

  // Issues d_qk blocks [KB0, KB1) of step step_'s S for the stage's KV rows from `kv_row0` on
  // (issue_s_blocks).
  template <int KB0, int KB1, int R>
  __device__ void issue_s(float (&s)[R], int kv_row0) {
    issue_s_blocks<C, KB0, KB1>(s, s_.q, s_.stage(step_ % C::STAGES) + kv_row0 * 128);
  }

  template <int R>
  __device__ void wait_s(float (&s)[R]) {
    ptx::wgmma_wait<0>();
    ptx::wgmma_fence_operands(s);
  }

  // O[:, 256 half : 256 half + 256] += P·V, each call one wgmma group (wait_pv<N> waits until
  // at most N later groups are pending), by consumer `half` (the consumer of d_v half c
  // computes S columns [32c, 32c + 32)): over all the step's KV rows from the shared P tile
  // (issue_pv), or over its own S columns (issue_pv_own, P from its registers: no barrier
  // needed) and over the other consumer's (issue_pv_other, from the tile).
  __device__ void issue_pv(const uint8_t* tile, int half) {
    issue_pv_ss<C, C::BN / 16>(o_, s_.p, tile, half, 0);
  }
  __device__ void issue_pv_own(const uint32_t (&pa)[8], const uint8_t* tile, int half) {
    static_assert(C::S_COLS / 16 == 2, "issue_pv_rs takes a consumer's two k16 slices");
    issue_pv_rs<C>(o_, pa, tile, half, half * C::S_COLS / 16);
  }
  __device__ void issue_pv_other(const uint8_t* tile, int half) {
    issue_pv_ss<C, C::S_COLS / 16>(o_, s_.p, tile, half, (1 - half) * C::S_COLS / 16);
  }

  template <int N>
  __device__ void wait_pv() {
    ptx::wgmma_wait<N>();
    ptx::wgmma_fence_operands(o_);
  }

  // Ends the step of stage `stage` once its products are issued, and moves to the next:
  // with a next step (`has_next`), one block of its S (its KV rows from `kv_row0`) is
  // queued behind the products to keep the tensor cores busy, the stage is released as soon
  // as the products are done (`products_done` runs then: what they read from registers may
  // change from there on), then the rest of S is issued and `while_s` runs while it does
  // (the next stage's |V| scan); without one, the products are waited for and the stage
  // released.
  template <int R, class ProductsDone, class WhileS>
  __device__ void next_step(float (&s)[R], int stage, bool has_next, int kv_row0,
                            ProductsDone&& products_done, WhileS&& while_s) {
    ++step_;
    if (has_next) {
      wait_stage();
      timeline::mark(p_.timeline, timeline::kConsumerLastStage, threadIdx.x == 128);
      issue_s<0, 1>(s, kv_row0);
      wait_pv<1>();  // this step's products, not the S just queued
      products_done();
      ptx::mbarrier_arrive(s_.empty(stage));
      issue_s<1, C::D_BLOCKS>(s, kv_row0);
      while_s();
      wait_s(s);
    } else {
      wait_pv<0>();
      products_done();
      ptx::mbarrier_arrive(s_.empty(stage));
    }
  }

  // Writes the item's results from O[:, 256 half : 256 half + 256] (write_item_results).
  __device__ void finish(int token, int head0, int segment, int half) {
    write_item_results<C::WIDE_PARTIAL_STORES>(p_, s_.row_sum, s_.tile_sink,
                                               C::BAR_ID_CONSUMERS, half, lane_, row0_, o_, top_,
                                               l_, token, head0, segment, item_);
  }

  const AttendParams& p_;
  const SharedState<C>& s_;
  const int lane_;
  const int row0_;  // this thread's first accumulator row (head offset); the second is +8
  int step_ = 0;
  int item_ = 0;
};

}  // namespace smla::hopper
