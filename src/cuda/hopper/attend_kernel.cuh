// The Hopper sparse-MLA attention kernel (sm_90a): written once, instantiated per (main rows,
// extra rows) by the attend_*.cu files of this directory.
//
// A CTA computes 64 heads of one token over a range of that token's selected entries (main
// pool first, then extra pool), 64 entries per step, with three warpgroups:
//   producer (warpgroup 0, registers cut to 104): per item, Q into a swizzled tile (TMA, or
//     cp.async where q has no map); per step, the 64 selected rows into a two-stage ring of
//     swizzled bf16 tiles, four lanes per row: pieces stored as bf16 (bf16 rows, the RoPE of fp8
//     rows) by cp.async, handed over without waiting for them (the copies complete the stage's
//     mbarrier, as Q's complete q_full); quantized pieces loaded into registers, both of a lane's
//     rows at once (the next step's rows prefetched into L2 meanwhile), dequantized and stored.
//     Invalid entries become zero rows and are flagged.
//   consumers (warpgroups 1 and 2, registers raised to 200): consumer c computes
//     S[:, 32c : 32c + 32] = Q·K^T with wgmma (both operands in shared memory), the two
//     exchange row maxima through shared memory (online softmax in the exp2 domain), write P
//     as bf16 into a shared tile, and each accumulates O[:, 256c : 256c + 256] += P·V with
//     wgmma (V is the K tile read MN-major: no transposed copy): over its own 32 KV rows with
//     P from its registers, issued before the consumers meet to vote on P's rounding (below),
//     then over the other consumer's rows from the tile, the next step's S queued behind
//     those products before they wait for them. A bound on |V| per d_v half comes from
//     the producer when both pools quantize V under f32 scales (scale_bound_bits of the
//     stage's scales, published with the stage), otherwise from the consumers' scan of the
//     stage while S runs; with P's actual bf16 rounding it bounds what rounding P costs out,
//     and a step that would take the bound past its budget also adds (P - bf16(P))·V
//     (p_rounding.hpp).
// One-pass mode writes the final bf16 out / lse / max_logits; split mode (a plan is given)
// writes f32 partials per segment for the portable combine kernel. The results are a pure
// function of the inputs and the plan: every sum runs in a fixed order.
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "cuda/cuda_check.hpp"
#include "cuda/hopper/attend_common.cuh"
#include "cuda/hopper/attend_config.cuh"
#include "cuda/hopper/attend_consumer_steps.cuh"
#include "cuda/hopper/attend_shared_state.cuh"
#include "cuda/hopper/attend_variants.hpp"
#include "cuda/hopper/kv_groups.cuh"
#include "cuda/hopper/p_rounding.hpp"
#include "cuda/hopper/softmax_fragments.cuh"
#include "cuda/portable/attend_params.hpp"
#include "cuda/ptx/convert.cuh"
#include "cuda/ptx/cp_async.cuh"
#include "cuda/ptx/fast_math.cuh"
#include "cuda/ptx/grid_dependency.cuh"
#include "cuda/ptx/mbarrier.cuh"
#include "cuda/ptx/warpgroup.cuh"
#include "cuda/ptx/wgmma.cuh"

namespace smla::hopper {

// ---- producer warpgroup ----------------------------------------------------------------------
// Four lanes share a row of a step: lane l of warp w fills tile row 32 k + 8 w + l % 8 in
// round k (k = 0, 1), taking its 16-byte pieces l / 8 + 4 j. Each lane resolves its rows' slots
// and addresses itself (no shuffles), and issues both rows' loads before the first conversion.
// The eight lanes of one part store eight consecutive rows' same group: eight different banks
// of the 128-byte swizzle.
template <class MainRows, class ExtraRows>
class Producer {
  using C = HopperConfig<MainRows, ExtraRows>;
  static constexpr int kLanesPerRow = 4;
  static constexpr int kRowsPerWarp = 32 / kLanesPerRow;   // per round
  static constexpr int kRounds = C::BN / (4 * kRowsPerWarp);  // rows per lane and step
  static_assert(kRounds == 2);

  // A quantized row's share of one lane, in registers between its loads and its conversion.
  template <class Rows>
  struct RowPieces {
    static constexpr int kCount = Rows::kQuantPieces / kLanesPerRow;
    static_assert(Rows::kQuantPieces % kLanesPerRow == 0 &&
                  Rows::kPiecesPerScale % kLanesPerRow == 0);
    uint4 bits[kCount];
    typename Rows::Scales scales;
  };

 public:
  __device__ Producer(const AttendParams& p, const QTileMap& q_map, const SharedState<C>& s)
      : p_(p),
        q_map_(q_map),
        s_(s),
        warp_(static_cast<int>(threadIdx.x) / 32),
        lane_(threadIdx.x % 32),
        part_(lane_ / kRowsPerWarp) {}

  __device__ void run_item(int token, int head0, int lo, int hi, int /*segment*/) {
    load_q(token, head0);
    const ItemRanges r(p_, token, lo, hi);
    if constexpr (std::is_same_v<MainRows, ExtraRows>) {
      if (p_.extra_sel.k > 0) {
        produce_both_pools(r, token);
        ++item_;
        return;
      }
    }
    if (r.main_lo < r.main_hi) {
      produce_range<MainRows>(p_.main, p_.main_sel.idx + token * p_.main_sel.idx_stride,
                              r.main_lo, r.main_hi);
    }
    if (r.extra_lo < r.extra_hi) {
      produce_range<ExtraRows>(p_.extra, p_.extra_sel.idx + token * p_.extra_sel.idx_stride,
                               r.extra_lo, r.extra_hi);
    }
    ++item_;
  }

 private:
  // Both ranges of an item whose pools share a format (V4's main and extra pools) through one
  // copy of the step loop: the extra range runs the code the main range has just run, still in
  // the instruction cache, instead of a second ~1300-instruction copy fetched cold once per
  // item (the V4 topk 128 + 512 rows 1-5% faster in two runs). The pool is chosen at run time,
  // which costs the loop ~100 instructions per step, so calls without an extra pool keep the
  // loop above.
  __device__ void produce_both_pools(const ItemRanges& r, int token) {
#pragma unroll 1
    for (int pool = 0; pool < 2; ++pool) {
      const bool extra = pool == 1;
      const SelectionView& sel = extra ? p_.extra_sel : p_.main_sel;
      const int lo = extra ? r.extra_lo : r.main_lo;
      const int hi = extra ? r.extra_hi : r.main_hi;
      if (lo < hi) {
        produce_range<MainRows>(extra ? p_.extra : p_.main, sel.idx + token * sel.idx_stride, lo,
                                hi);
      }
    }
  }

  // This lane's tile row in round k: each round, the four warps fill 8 rows each.
  __device__ int row_of(int k) const {
    return 4 * kRowsPerWarp * k + kRowsPerWarp * warp_ + lane_ % kRowsPerWarp;
  }

  // Q rows head0 + [0, 64) of `token` (zeros past h_q), once the previous item's S is done.
  // The loads complete q_full without the producer waiting for them: a short item's Q and
  // first rows load together.
  __device__ void load_q(int token, int head0) {
    ptx::mbarrier_wait(s_.q_empty(), (item_ & 1) ^ 1);
    issue_q_tile<C::CHUNKS, /*kReadOnce=*/false>(p_, q_map_, s_.q, s_.q_full(), token, head0,
                                                  warp_, lane_);
  }

  // The slot id of this lane's row of round k in step `step` of the range [lo, hi); -1 past hi.
  __device__ int32_t slot_at(const int32_t* idx, int lo, int hi, int step, int k) const {
    const int e = lo + step * C::BN + row_of(k);
    return e < hi ? idx[e] : -1;
  }

  // A lane reads its rows' slot ids one step ahead: the index loads' latency overlaps a step
  // instead of sitting between the consumers' release of a stage and its refill.
  template <class Rows>
  __device__ void produce_range(const portable::PoolView& pool, const int32_t* idx, int lo,
                                int hi) {
    const int steps = ItemRanges::steps<C::BN>(lo, hi);
    int32_t slot[kRounds];
#pragma unroll
    for (int k = 0; k < kRounds; ++k) slot[k] = slot_at(idx, lo, hi, 0, k);
#pragma unroll 1
    for (int i = 0; i < steps; ++i) {
      int32_t next[kRounds];
#pragma unroll
      for (int k = 0; k < kRounds; ++k) next[k] = slot_at(idx, lo, hi, i + 1, k);
      produce_step<Rows>(pool, slot, next);
#pragma unroll
      for (int k = 0; k < kRounds; ++k) slot[k] = next[k];
    }
  }

  // Fills the ring stage of the next step with this lane's share of its rows `slot`; `next`
  // holds its rows of the step after, prefetched into L2 for quantized rows. Slots are
  // compared, never offset: every int32 id is safe.
  template <class Rows>
  __device__ void produce_step(const portable::PoolView& pool, const int32_t (&slot)[kRounds],
                               const int32_t (&next)[kRounds]) {
    bool valid[kRounds];
    RowAddr addr[kRounds];
    const int stage = claim_stage<Rows>(pool, slot, valid, addr);
    timeline::mark(p_.timeline, timeline::kFirstSlots, step_ == 0 && threadIdx.x == 0,
                   static_cast<uint32_t>(slot[0]));
    uint8_t* tile = s_.stage(stage);
    if constexpr (Rows::kQuantPieces > 0) prefetch_rows<Rows>(pool, next);
#pragma unroll
    for (int k = 0; k < kRounds; ++k) copy_pieces<Rows>(pool, tile, row_of(k), addr[k], valid[k]);
    uint32_t scale_bits[2] = {0, 0};  // the largest |scale| of this lane's rows per d_v half
    if constexpr (Rows::kQuantPieces > 0) {
      RowPieces<Rows> pieces[kRounds];
#pragma unroll
      for (int k = 0; k < kRounds; ++k) load_row<Rows>(addr[k], valid[k], pieces[k]);
      timeline::mark(p_.timeline, timeline::kFirstRows, step_ == 0 && threadIdx.x == 0,
                     pieces[0].bits[0].x ^ pieces[kRounds - 1].bits[0].x);
#pragma unroll
      for (int k = 0; k < kRounds; ++k) store_row<Rows>(pieces[k], tile, row_of(k), scale_bits);
    }
    hand_over_stage<Rows>(stage, scale_bits);
  }

  // Waits until the ring stage of the next step is free, and resolves this lane's rows `slot`
  // of it: whether each is valid (flagged in the stage for the consumers: an invalid entry
  // becomes a zero row) and its addresses. Returns the stage.
  template <class Rows>
  __device__ int claim_stage(const portable::PoolView& pool, const int32_t (&slot)[kRounds],
                             bool (&valid)[kRounds], RowAddr (&addr)[kRounds]) {
    const int stage = step_ % C::STAGES;
    ptx::mbarrier_wait(s_.empty(stage), ((step_ / C::STAGES) & 1) ^ 1);
#pragma unroll
    for (int k = 0; k < kRounds; ++k) {
      valid[k] = slot[k] >= 0 && slot[k] < pool.slots;
      addr[k] = valid[k] ? Rows::row(pool, slot[k]) : RowAddr{};
      if (part_ == 0) s_.valid[stage * C::BN + row_of(k)] = valid[k];
    }
    return stage;
  }

  // Part k asks L2 for its row of round k of a later step, `slot`.
  template <class Rows>
  __device__ void prefetch_rows(const portable::PoolView& pool,
                                const int32_t (&slot)[kRounds]) const {
    const int32_t ahead = part_ == 0 ? slot[0] : slot[1];
    if (part_ < kRounds && ahead >= 0 && ahead < pool.slots) {
      Rows::prefetch(Rows::row(pool, ahead));
    }
  }

  // The stage's dequantized groups fenced for wgmma and their |V| bound published; the stage
  // completes when this thread's copies have landed (and every producer thread has arrived,
  // its valid flags and dequantized groups written); the consumers fence the copies for
  // wgmma.
  template <class Rows>
  __device__ void hand_over_stage(int stage, const uint32_t (&scale_bits)[2]) {
    if constexpr (Rows::kQuantPieces > 0) {
      ptx::fence_proxy_async_shared();
      if constexpr (C::SCALE_BOUNDS) publish_scale_bound<Rows>(stage, scale_bits);
    }
    ptx::cp_async_mbarrier_arrive(s_.full(stage));
    ptx::mbarrier_arrive(s_.full(stage));
    timeline::mark(p_.timeline, timeline::kFirstStage, step_ == 0 && threadIdx.x == 0);
    timeline::mark(p_.timeline, timeline::kLastStage, threadIdx.x == 0);
    ++step_;
  }

  // The |V| bound of this warp's rows per d_v half (scale_bound_bits), for the consumers'
  // P-rounding budget in place of a scan (C::SCALE_BOUNDS).
  template <class Rows>
  __device__ void publish_scale_bound(int stage, const uint32_t (&scale_bits)[2]) const {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const uint32_t bits = __reduce_max_sync(0xffffffffu, scale_bits[h]);
      if (lane_ == 0) {
        s_.scale_bound[(stage * C::PRODUCER_WARPS + warp_) * 2 + h] =
            scale_bound_bits(bits, Rows::kMaxCode);
      }
    }
  }

  // cp.async of this lane's share of the pieces of tile row `row` that the format stores as
  // bf16; an invalid row's become zeros without its address being read.
  template <class Rows>
  __device__ void copy_pieces(const portable::PoolView& pool, uint8_t* tile, int row,
                              const RowAddr& addr, bool valid) const {
    static_assert(Rows::kCopyPieces % kLanesPerRow == 0);
#pragma unroll
    for (int j = 0; j < Rows::kCopyPieces / kLanesPerRow; ++j) {
      const int i = part_ + kLanesPerRow * j;
      ptx::cp_async_cg_16_zfill(tile + tile_chunk_offset(row, Rows::kCopyGroup0 + i),
                                valid ? addr.data + Rows::kCopyOffset + 16 * i : pool.data,
                                valid);
    }
  }

  // Loads this lane's quantized pieces of a row and the row's scales. An invalid row loads
  // nothing: its pieces and scales are zero bits, which every format converts to +0, so the
  // conversion needs no select.
  template <class Rows>
  __device__ void load_row(const RowAddr& addr, bool valid, RowPieces<Rows>& r) const {
#pragma unroll
    for (int j = 0; j < RowPieces<Rows>::kCount; ++j) {
      r.bits[j] = valid ? Rows::load_piece(addr, part_ + kLanesPerRow * j) : uint4{0, 0, 0, 0};
    }
    r.scales = valid ? Rows::load_scales(addr) : typename Rows::Scales{};
  }
  // Dequantizes this lane's pieces of a row into tile row `row`, and with C::SCALE_BOUNDS
  // raises `scale_bits`, the largest |scale| of this lane's rows per d_v half, to the row's.
  // Piece part + 4 j is under scale 4 j / kPiecesPerScale: a constant once unrolled, whatever
  // the lane's part.
  template <class Rows>
  __device__ void store_row(const RowPieces<Rows>& r, uint8_t* tile, int row,
                            uint32_t (&scale_bits)[2]) const {
#pragma unroll
    for (int j = 0; j < RowPieces<Rows>::kCount; ++j) {
      const float scale = Rows::scale(r.scales, kLanesPerRow * j / Rows::kPiecesPerScale);
      Rows::convert(r.bits[j], scale, part_ + kLanesPerRow * j, [&](int g, uint4 bits) {
        *reinterpret_cast<uint4*>(tile + tile_chunk_offset(row, g)) = bits;
      });
    }
    if constexpr (C::SCALE_BOUNDS) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        scale_bits[h] = max(scale_bits[h], Rows::half_scale_bits(r.scales, h));
      }
    }
  }

  const AttendParams& p_;
  const QTileMap& q_map_;
  const SharedState<C>& s_;
  const int warp_;  // 0..3
  const int lane_;
  const int part_;  // 0..3: which of a row's pieces this lane takes
  int step_ = 0;
  int item_ = 0;
};

// ---- consumer warpgroups ---------------------------------------------------------------------
template <class MainRows, class ExtraRows>
class Consumer : ConsumerBase<HopperConfig<MainRows, ExtraRows>> {
  using C = HopperConfig<MainRows, ExtraRows>;
  using Base = ConsumerBase<C>;
  using Base::lane_, Base::p_, Base::row0_, Base::s_, Base::step_;

 public:
  __device__ Consumer(const AttendParams& p, const SharedState<C>& s)
      : Base(p, s), wg_(static_cast<int>(threadIdx.x) / 128 - 1) {
    stage_tile_sinks(p_, s_.tile_sink, wg_, lane_, row0_);
  }

  __device__ void run_item(int token, int head0, int lo, int hi, int segment) {
    this->template consume_item<16>(
        token, lo, hi, s_cols0(), [&] { scan_v(); },
        [&](float(&s)[16], bool has_next) { consume_step(s, has_next); });
    this->finish(token, head0, segment, wg_);
    ++this->item_;
  }

 private:
  // This consumer's first KV row (S column) of a step.
  __device__ int s_cols0() const { return wg_ * C::S_COLS; }

  // The |V| scan of step step_'s stage, published per warp for both consumers' bound.
  __device__ void scan_v() {
    if constexpr (C::SCALE_BOUNDS) return;  // the producer bounds V
    scan_and_publish_v<C, C::CONSUMER_THREADS>(s_, s_.stage(step_ % C::STAGES),
                                               static_cast<int>(threadIdx.x) - 128,
                                               threadIdx.x / 32 - 4, lane_);
  }

  // Consumes step step_ from its S, then queues the next step's S (`has_next`) behind this
  // step's P·V before waiting for the product: the tensor cores take the next S right away
  // instead of idling while this thread waits, releases the stage and waits for the next one.
  // The stage is released as soon as the product has read it.
  __device__ void consume_step(float (&s)[16], bool has_next) {
    const int stage = step_ % C::STAGES;
    const uint8_t* tile = s_.stage(stage);
    // This thread's last S of the item is complete (waited for before the first step or in
    // the previous one): the Q tile is free now, so the producer loads the next item's Q
    // during this step.
    if (!has_next) ptx::mbarrier_arrive(s_.q_empty());

    // Online softmax over this consumer's 32 columns; the row max spans both consumers.
    float mx[2];
    mask_and_row_max<C::S_COLS / 8>(s, s_.valid + stage * C::BN + s_cols0(), lane_,
                                    p_.scale_log2, mx);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      if (lane_ % 4 == 0) s_.row_max[wg_ * C::HT + row0_ + 8 * h] = mx[h];
    }
    ptx::named_barrier_sync(C::BAR_ID_CONSUMERS, C::CONSUMER_THREADS);
    float v_bound[2];  // |V| bound of each d_v half of the step: the producer's or the scan's
    s_.template v_bound<C::CONSUMER_WARPS>(stage, v_bound);
    float step_max[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = row0_ + 8 * h;
      step_max[h] = fmaxf(s_.row_max[row], s_.row_max[C::HT + row]);
    }
    float alpha[2];
    // some row of this thread moved its maximum: O needs rescaling
    const bool moved = this->template softmax_step<C::S_COLS / 8>(s, step_max, alpha);
    // P as bf16 (pa: this consumer's A fragments of P·V, pack_p_bf16x2's layout) and what
    // rounding it costs: the residual pairs (P - bf16(P) as bf16, kept for the rare residual
    // product so that P's f32 registers are free from here on) and each row's sum of
    // |P - bf16(P)| (p_rounding.hpp).
    uint32_t pa[8], res[8];
    float rounding[2];
    round_p_bf16x2<C::S_COLS / 8>(s, pa, res, rounding);
    // P's store sits where each form measured best (perf-notes ledger, s64): by stmatrix
    // right before the product, the top-k 16384 rows 1.3-1.8% faster than before O's
    // rescaling; the 4-byte stores before it, where ptxas allocates the fp8_ds_mla kernel's
    // step loop better.
    if constexpr (!C::P_BY_STMATRIX) store_p(pa);
    // The product over this consumer's own KV rows takes P from registers and needs no
    // barrier: issued now, it runs while the consumers vote.
    scale_rows(this->o_, alpha, moved);
    if constexpr (C::P_BY_STMATRIX) store_p(pa);
    this->issue_pv_own(pa, tile, wg_);

    // The step's verdict (p_rounding.hpp): without the residual, would every thread of both
    // consumers stay within its rounding budget?
    float err_new[2][2];
    const bool over = this->rounding_over_budget(rounding, alpha, v_bound, err_new);
    const bool residual = any_consumer_over(over);
    this->settle_rounding(residual, alpha, err_new);
    this->issue_pv_other(tile, wg_);

    if (residual) {
      // Both consumers are done reading P before it is overwritten by the residual.
      this->template wait_pv<0>();
      ptx::named_barrier_sync(C::BAR_ID_CONSUMERS, C::CONSUMER_THREADS);
      store_p(res);
      ptx::fence_proxy_async_shared();
      ptx::named_barrier_sync(C::BAR_ID_CONSUMERS, C::CONSUMER_THREADS);
      this->issue_pv(tile, wg_);
    }
    this->next_step(s, stage, has_next, s_cols0(), [&] { ptx::wgmma_fence_operands(pa); },
                    [&] { scan_v(); });
  }

  // Whether any thread of both consumers voted `over`, by one bar.red.or of both consumers
  // that also orders P's stores before either consumer's P·V reads them. The barrier gives
  // every thread the same answer, but ptxas cannot know that: taken as it is, it wraps the
  // residual branch in divergence regions (BSSY) and puts a WARPSYNC before each later wgmma
  // wait, which cost the V4 rows 1-3%; lane 0's answer broadcast over the warp is uniform to
  // ptxas (perf-notes ledger, s48 and s49).
  __device__ bool any_consumer_over(bool over) {
    ptx::fence_proxy_async_shared();
    const bool any = ptx::named_barrier_any(C::BAR_ID_CONSUMERS, C::CONSUMER_THREADS, over);
    return __shfl_sync(0xffffffffu, any, 0);
  }

  // bf16x2 words of P (or of its residual) into this consumer's 32 columns of the P tile.
  __device__ void store_p(const uint32_t (&words)[8]) {
    if constexpr (C::P_BY_STMATRIX) {
      store_p_blocks<C::S_COLS / 8>(s_.p, s_cols0() / 8, row0_, lane_,
                                    [&](int i) { return words[i]; });
    } else {
      store_p_words<C::S_COLS / 8>(s_.p, words, s_cols0(), lane_, row0_);
    }
  }

  const int wg_;  // consumer index: 0 or 1
};

// One CTA per (work unit, head tile), the head tile fastest so the CTAs of one token run
// together and share its rows in L2. A work unit walks every units-th token (one-pass) or
// the segments of a plan partition (split), in order.
template <class MainRows, class ExtraRows>
__global__ void __launch_bounds__(HopperConfig<MainRows, ExtraRows>::THREADS, 1)
    hopper_attend_kernel(const __grid_constant__ AttendParams p,
                         const __grid_constant__ QTileMap q_map) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using C = HopperConfig<MainRows, ExtraRows>;
  extern __shared__ __align__(16) uint8_t smem_raw[];
  uint8_t* base = smem_raw + ((1024 - ptx::smem_u32(smem_raw) % 1024) % 1024);
  const SharedState<C> s(base);
  timeline::mark_with_cycles(p.timeline, timeline::kEntry, timeline::kEntryCycles,
                             threadIdx.x == 0);
  ptx::allow_dependent_launch();  // a split call's combine (portable::CombineLaunch)
  if (threadIdx.x == 0) {
    ClaimQueue::init();
    for (int i = 0; i < C::STAGES; ++i) {
      ptx::mbarrier_init(s.full(i), 128);
      ptx::mbarrier_init(s.empty(i), C::CONSUMER_THREADS);
    }
    ptx::mbarrier_init(s.q_full(), 128);
    ptx::mbarrier_init(s.q_empty(), C::CONSUMER_THREADS);
  }
  __syncthreads();
  if (threadIdx.x < 128) {
    ptx::setmaxnreg_dec<C::PRODUCER_REGS>();
    Producer<MainRows, ExtraRows> producer(p, q_map, s);
    run_items(p, producer);
  } else {
    ptx::setmaxnreg_inc<C::CONSUMER_REGS>();
    Consumer<MainRows, ExtraRows> consumer(p, s);
    run_items(p, consumer);
  }
#endif
}

template <class MainRows, class ExtraRows>
Status launch_attend(const AttendParams& p, int units, cudaStream_t stream) {
  using C = HopperConfig<MainRows, ExtraRows>;
  return launch_attend_kernel<C::THREADS, C::SMEM_BYTES, C::D>(
      hopper_attend_kernel<MainRows, ExtraRows>, "hopper_attend_kernel", p, units, stream);
}

template <class MainRows, class ExtraRows>
AttendVariant make_attend_variant() {
  return AttendVariant{&launch_attend<MainRows, ExtraRows>,
                       HopperConfig<MainRows, ExtraRows>::SMEM_BYTES};
}

}  // namespace smla::hopper
