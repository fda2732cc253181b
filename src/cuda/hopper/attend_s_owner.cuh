// The second consumer design of the Hopper kernel of quantized pools (attend_kernel.cuh,
// ConsumerRoles::s_owner; chosen by SMLA_HOPPER_CONSUMERS=s-owner while it is measured):
// unequal consumers, as FlashMLA's decode kernel has, in place of two halves.
//   S owner (warpgroup 1, 232 registers): per step the whole S = Q·K^T by wgmma m64n64k16
//     (Q read once per step, where two halves read it twice), the online softmax (a quad holds
//     whole rows: no maxima exchange), O[:, 0:256) += P·V with P from registers (issued
//     right after the softmax), then, while that product runs, the P-rounding verdict over
//     its own threads and P (bf16) into the shared tile with the rows' largest scores and the
//     verdict beside it. P in f32 is dropped once split into its bf16 fragments, its
//     residual's and its rounding sums (split_p_bf16x2): the owner then holds O, those two
//     bf16 forms and the next S within its registers.
//   P·V helper (warpgroup 2, 168 registers): per step the |V| scan of the stage when the
//     producer does not bound V, then O[:, 256:512) += P·V from the owner's P, its rows'
//     factor derived from the published largest scores.
// Hand-offs by named barriers of the 256 consumer threads, one side arriving and the other
// waiting: P_FULL (owner -> helper: P, scores and verdict are in), P_EMPTY (helper -> owner:
// its product has read P; the owner waits before every P it stores but an item's first, and
// once at the item's end, so each item starts with no barrier half-arrived) and V_BOUND
// (helper -> owner: the stage's |V| bound is published). A step that needs P's residual
// hands over a second P, the residual, the same way, and the owner multiplies it from the
// tile too.
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

#include "cuda/hopper/attend_common.cuh"
#include "cuda/hopper/attend_config.cuh"
#include "cuda/hopper/attend_consumer_steps.cuh"
#include "cuda/hopper/attend_shared_state.cuh"
#include "cuda/hopper/softmax_fragments.cuh"
#include "cuda/ptx/mbarrier.cuh"
#include "cuda/ptx/warpgroup.cuh"

namespace smla::hopper {

template <class MainRows, class ExtraRows>
class SOwner : ConsumerBase<HopperConfig<MainRows, ExtraRows>> {
  using C = HopperConfig<MainRows, ExtraRows>;
  using Base = ConsumerBase<C>;
  using Base::lane_, Base::p_, Base::row0_, Base::s_, Base::step_;
  static constexpr int kHalf = 0;  // the owner's d_v half of O

 public:
  __device__ SOwner(const AttendParams& p, const SharedState<C>& s) : Base(p, s) {
    stage_tile_sinks(p_, s_.tile_sink, kHalf, lane_, row0_);
  }

  __device__ void run_item(int token, int head0, int lo, int hi, int segment) {
    p_handed_over_ = false;
    const int steps = this->template consume_item<32>(
        token, lo, hi, 0, [] {}, [&](float(&s)[32], bool has_next) { consume_step(s, has_next); });
    // The helper's product has read the item's last P.
    if (steps > 0) ptx::named_barrier_sync(C::BAR_ID_P_EMPTY, C::CONSUMER_THREADS);
    this->finish(token, head0, segment, kHalf);
    ++this->item_;
  }

 private:
  // Consumes step step_ from its S, then queues the next step's S behind this step's P·V as
  // the halves do (ConsumerBase::next_step).
  __device__ void consume_step(float (&s)[32], bool has_next) {
    const int stage = step_ % C::STAGES;
    const uint8_t* tile = s_.stage(stage);
    // The item's last S is complete: the producer may load the next item's Q.
    if (!has_next) ptx::mbarrier_arrive(s_.q_empty());

    float mx[2];
    mask_and_row_max<C::BN / 8>(s, s_.valid + stage * C::BN, lane_, p_.scale_log2, mx);
    float alpha[2];
    const bool moved = this->template softmax_step<C::BN / 8>(s, mx, alpha);

    // P's bf16 fragments, its residual's and its rounding sums: P in f32 is not needed after
    // this, so the owner holds O, P's two bf16 forms and then the next S.
    uint32_t pa[16], residual_pa[16];
    float rounding[2];
    split_p_bf16x2(s, pa, residual_pa, rounding);

    // The owner's product first, P from registers: the verdict and P's hand-over to the
    // helper run while it does.
    scale_rows(this->o_, alpha, moved);
    ptx::wgmma_fence();
    accumulate_pv_rs(this->o_, pa, v_half_desc<C>(tile, kHalf));
    ptx::wgmma_commit();

    // The step's verdict (p_rounding.hpp) over the owner's threads: they hold all of P, so
    // their bounds of both d_v halves cover the helper's product too.
    if constexpr (!C::SCALE_BOUNDS) {
      ptx::named_barrier_sync(C::BAR_ID_V_BOUND, C::CONSUMER_THREADS);
    }
    float v_bound[2];
    s_.template v_bound<C::HELPER_WARPS>(stage, v_bound);
    float err_new[2][2];
    const bool over = this->rounding_over_budget(rounding, alpha, v_bound, err_new);

    hand_over_p(pa, /*with_tops=*/true);
    const bool residual = ptx::named_barrier_any(C::BAR_ID_OWNER, 128, over);
    if (threadIdx.x == 128) s_.needs_residual[0] = residual;
    ptx::named_barrier_arrive(C::BAR_ID_P_FULL, C::CONSUMER_THREADS);
    this->settle_rounding(residual, alpha, err_new);

    if (residual) {
      // The residual through the P tile for both halves; the owner's barrier orders every
      // owner thread's stores before the owner's product reads them.
      this->template wait_pv<0>();
      ptx::wgmma_fence_operands(pa);
      hand_over_p(residual_pa, /*with_tops=*/false);
      ptx::named_barrier_sync(C::BAR_ID_OWNER, 128);
      ptx::named_barrier_arrive(C::BAR_ID_P_FULL, C::CONSUMER_THREADS);
      this->issue_pv(tile, kHalf);
    }
    // pa lives until the product that reads it is waited for.
    this->next_step(s, stage, has_next, 0, [&] { ptx::wgmma_fence_operands(pa); }, [] {});
  }

  // P's bf16 fragments `frag` (P's or its residual's) into the P tile once the helper's
  // product has read the previous one, with the rows' largest scores for the helper's factors
  // (`with_tops`; a residual's are those of its P).
  __device__ void hand_over_p(const uint32_t (&frag)[16], bool with_tops) {
    if (p_handed_over_) ptx::named_barrier_sync(C::BAR_ID_P_EMPTY, C::CONSUMER_THREADS);
    p_handed_over_ = true;
    store_p_tile(s_.p, row0_, lane_, [&](int i) { return frag[i]; });
    if (with_tops && lane_ % 4 == 0) {
#pragma unroll
      for (int h = 0; h < 2; ++h) s_.row_max[row0_ + 8 * h] = this->top_[h];
    }
    ptx::fence_proxy_async_shared();
  }

  bool p_handed_over_ = false;  // a P of this item is in the tile: wait for P_EMPTY first
};

template <class MainRows, class ExtraRows>
class PvHelper : ConsumerBase<HopperConfig<MainRows, ExtraRows>> {
  using C = HopperConfig<MainRows, ExtraRows>;
  using Base = ConsumerBase<C>;
  using Base::lane_, Base::p_, Base::row0_, Base::s_, Base::step_;
  static constexpr int kHalf = 1;  // the helper's d_v half of O

 public:
  __device__ PvHelper(const AttendParams& p, const SharedState<C>& s) : Base(p, s) {}

  // O and l start at zero; l stays zero (the owner sums all of P), so the results' row sums
  // are the owner's.
  __device__ void run_item(int token, int head0, int lo, int hi, int segment) {
    this->start_item();
    const int steps = ItemRanges(p_, token, lo, hi).total_steps<C::BN>();
#pragma unroll 1
    for (int i = 0; i < steps; ++i) consume_step();
    this->finish(token, head0, segment, kHalf);
  }

 private:
  __device__ void consume_step() {
    const int stage = step_ % C::STAGES;
    const uint8_t* tile = s_.stage(stage);
    this->wait_stage();
    if constexpr (!C::SCALE_BOUNDS) {
      // The owner's S runs meanwhile; its verdict waits for the bound.
      scan_and_publish_v<C, 128>(s_, tile, static_cast<int>(threadIdx.x) - 256,
                                 threadIdx.x / 32 - 8, lane_);
      ptx::named_barrier_arrive(C::BAR_ID_V_BOUND, C::CONSUMER_THREADS);
    }
    ptx::named_barrier_sync(C::BAR_ID_P_FULL, C::CONSUMER_THREADS);
    float top[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) top[h] = s_.row_max[row0_ + 8 * h];
    const bool residual = s_.needs_residual[0] != 0;
    float alpha[2];
    const bool moved = this->raise_top(top, alpha);
    scale_rows(this->o_, alpha, moved);
    multiply_p(tile);
    if (residual) {
      ptx::named_barrier_sync(C::BAR_ID_P_FULL, C::CONSUMER_THREADS);
      multiply_p(tile);
    }
    ptx::mbarrier_arrive(s_.empty(stage));
    ++step_;
  }

  // The helper's product of the P in the tile, handed back once it has read P.
  __device__ void multiply_p(const uint8_t* tile) {
    this->issue_pv(tile, kHalf);
    this->template wait_pv<0>();
    ptx::named_barrier_arrive(C::BAR_ID_P_EMPTY, C::CONSUMER_THREADS);
  }
};

}  // namespace smla::hopper
