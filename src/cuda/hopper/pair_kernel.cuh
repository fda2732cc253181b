// The block-pair Hopper attention kernel (sm_90a) for bf16 pools: the consumers own alternate
// blocks of 64 entries instead of splitting every block's columns (attend_kernel.cuh), so S
// is one m64n64 product per block (Q read once per block, not twice), each consumer's own
// product takes P from registers, and a half-buffer is refilled as soon as its last reader
// is done with it.
//
// A CTA computes 64 heads of one token over a range of its entries (main pool, then extra
// pool), two blocks per iteration ("pair" i: block 2i in buffer 0, block 2i + 1 in buffer 1;
// an odd last block pairs with an all-invalid one). Three warpgroups:
//   producer (warpgroup 0): Q per item (TMA, or cp.async where q has no map); per pair, the four
//     half-buffers by cp.async in the order the consumers need them: L of buffer 0, R of buffer 1,
//     R of buffer 0, L of buffer 1 (L = d blocks 0..3, R = the rest), each once its readers freed
//     it, each completing its READY mbarrier by itself. Eight lanes copy a row's 128 bytes of a
//     64-column tile.
//   consumer c (warpgroup 1 + c) holds O[:, 256c : 256c + 256] ("its half" of d_v) and, per
//     pair, for its own block b = c:
//       S = Q K_b^T (consumer 0 issues the next pair's S behind its last product);
//       raise the row maxima by S's (consumer 1 first by consumer 0's, published for it: the
//       maxima are chained) and publish them; m_c = their reference_max; P = exp2(S - m_c);
//       O_c += P V_b,c (A from registers); free V_b,c;
//       -- consumer 0 only, once consumer 1's maxima are out -- m = the pair's maxima; rescale
//       O_0, l and P to m (only where a row moved: integer maxima settle within a few blocks);
//       publish P;
//       -- both P tiles out -- O_c += P_other V_other,c; free V_other,c.
//     Each consumer waits only for the other's row maxima, so the softmaxes overlap, and each
//     consumer's own product overlaps the other's softmax.
//
// Rounding P to bf16 is bounded as in attend_kernel.cuh (p_rounding.hpp): every thread keeps,
// per d_v half, the sum of |p - bf16(p)| M (M = the block's max |V| over that half: folded
// from the pools' per-slot bounds (v_bounds.hpp), whose words the producer copies with the
// block's rows, or, without them, scanned by the consumers while S runs) over its own
// columns, against its share of the softmax sum. A product that would take some thread of
// its owner past the budget adds its residual (p - bf16(p)) V
// instead: from registers for the owner's own half; for the other half, the owner writes
// the residual into its own P buffer (free once both remote products are done) and the
// other consumer multiplies it.
//
// One-pass and split mode as in attend_kernel.cuh; results are a pure function of the inputs
// and the plan.
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

#include "cuda/cuda_check.hpp"
#include "cuda/hopper/attend_common.cuh"
#include "cuda/hopper/attend_variants.hpp"
#include "cuda/hopper/kv_groups.cuh"
#include "cuda/hopper/p_rounding.hpp"
#include "cuda/hopper/pair_config.cuh"
#include "cuda/hopper/softmax_fragments.cuh"
#include "cuda/hopper/v_bounds.hpp"
#include "cuda/portable/attend_params.hpp"
#include "cuda/ptx/convert.cuh"
#include "cuda/ptx/cp_async.cuh"
#include "cuda/ptx/fast_math.cuh"
#include "cuda/ptx/grid_dependency.cuh"
#include "cuda/ptx/mbarrier.cuh"
#include "cuda/ptx/shared_load.cuh"
#include "cuda/ptx/warpgroup.cuh"
#include "cuda/ptx/wgmma.cuh"

namespace smla::hopper {

inline constexpr int kHalfL = 0;  // d blocks 0..3: V columns 0..255
inline constexpr int kHalfR = 1;  // the rest: V columns 256..511 (and the RoPE block)

// The kernel's shared memory, every part at a constant offset from one 1024-aligned base: the
// accessors compute the addresses where they are used, so the consumers keep one base
// register live instead of a pointer per part (ptxas spilled such pointers around the P
// tile's stores).
template <class C>
struct PairShared {
  __device__ explicit PairShared(uint8_t* base) : base_(base) {}

  __device__ uint64_t* ready(int b, int h) const { return bars() + C::BAR_READY + 2 * b + h; }
  __device__ uint64_t* free(int b, int h) const { return bars() + C::BAR_FREE + 2 * b + h; }
  __device__ uint64_t* q_full() const { return bars() + C::BAR_Q_FULL; }
  __device__ uint64_t* q_empty() const { return bars() + C::BAR_Q_EMPTY; }

  // [64][D] bf16, swizzled blocks.
  __device__ uint8_t* q() const { return base_ + C::Q_OFF; }
  // [64][D] bf16 each: block 2i (b = 0), block 2i + 1 (b = 1).
  __device__ uint8_t* kv(int b) const { return base_ + C::KV_OFF + b * C::TILE_BYTES; }
  // [64][64] bf16: P of block 2i (consumer 0's), of block 2i + 1.
  __device__ uint8_t* p(int b) const { return base_ + (b == 0 ? C::P0_OFF : C::P1_OFF); }
  // [2][64]: per consumer, its block's row maxima (exp2 domain).
  __device__ float* row_max() const { return at<float>(C::ROWMAX_OFF); }
  __device__ float* row_sum() const { return at<float>(C::ROWSUM_OFF); }  // [2][64]
  // [2][64]: per row of a block, kValidRow for a valid entry (0: a zero row), and with bounds
  // tables the rest of the row's table word (its |V| bounds, v_bounds.hpp).
  __device__ uint32_t* row_words() const { return at<uint32_t>(C::ROW_WORDS_OFF); }
  // [2 blocks][4 warps][2 halves]: |V| bits of the block's rows per warp.
  __device__ uint32_t* v_max() const { return at<uint32_t>(C::V_MAX_OFF); }
  // [2 consumers][4 warps]: the block's remote product needs a residual.
  __device__ uint32_t* flags() const { return at<uint32_t>(C::FLAGS_OFF); }
  // [64]: the head tile's sinks (stage_tile_sinks).
  __device__ float* tile_sink() const { return at<float>(C::TILE_SINK_OFF); }
  __device__ uint64_t* bars() const { return at<uint64_t>(C::BAR_OFF); }

 private:
  template <class T>
  __device__ T* at(int offset) const {
    return reinterpret_cast<T*>(base_ + offset);
  }
  uint8_t* base_;
};

// The item's blocks: main-pool blocks first, then extra-pool blocks.
struct PairBlocks {
  ItemRanges r;
  int main_blocks, blocks;
  __device__ PairBlocks(const AttendParams& p, int token, int lo, int hi)
      : r(p, token, lo, hi),
        main_blocks(ItemRanges::steps<64>(r.main_lo, r.main_hi)),
        blocks(main_blocks + ItemRanges::steps<64>(r.extra_lo, r.extra_hi)) {}
  __device__ int pairs() const { return (blocks + 1) / 2; }
};

// ---- producer warpgroup ----------------------------------------------------------------------
// kTables as for PairConsumer: the row words come from the bounds tables.
template <int D, bool kTables>
class PairProducer {
  using C = PairConfig<D>;
  using Rows = Bf16Groups<D>;

 public:
  __device__ PairProducer(const AttendParams& p, const QTileMap& q_map, const PairShared<C>& s)
      : p_(p),
        q_map_(q_map),
        s_(s),
        warp_(static_cast<int>(threadIdx.x) / 32),
        lane_(threadIdx.x % 32) {}

  __device__ void run_item(int token, int head0, int lo, int hi, int /*segment*/) {
    token_ = token;
    // Q loads without the producer waiting for it: the first rows' copies go out meanwhile.
    ptx::mbarrier_wait(s_.q_empty(), (item_ & 1) ^ 1);
    issue_q_tile<C::CHUNKS, /*kReadOnce=*/true>(p_, q_map_, s_.q(), s_.q_full(), token, head0,
                                                warp_, lane_);
    ++item_;

    const PairBlocks b(p_, token, lo, hi);
    const int pairs = b.pairs();
    // The slot id of this thread's row word (word_buffer(), word_row()) for the pair at
    // hand, read one pair ahead.
    int32_t word_slot = slot_of(b, word_buffer(), word_row());
#pragma unroll 1
    for (int i = 0; i < pairs; ++i) {
      // The slot ids load while the producer waits for the first half to free up.
      int32_t slot[2][kRowsPerLane];
      read_slots(b, i, slot);
      const uint8_t* rows0[kRowsPerLane];
      const uint8_t* rows1[kRowsPerLane];
      row_addresses(b, 2 * i, slot[0], rows0);
      row_addresses(b, 2 * i + 1, slot[1], rows1);
      // A block's first half also brings its row words.
      fill(0, kHalfL, rows0, [&] {
        if (word_buffer() == 0) set_row_word(b, 2 * i, word_slot);
      });
      fill(1, kHalfR, rows1, [&] {
        if (word_buffer() == 1) set_row_word(b, 2 * i + 1, word_slot);
      });
      word_slot = slot_of(b, 2 * (i + 1) + word_buffer(), word_row());
      fill(0, kHalfR, rows0, [] {});
      fill(1, kHalfL, rows1, [] {});
      ++pair_;
    }
  }

 private:
  // Lane l of warp w copies 16-byte column group l % 8 of every 64-column tile of rows
  // 16 w + l / 8 + 4 k, k < 4: eight lanes cover a row's 128 bytes of a tile, and every lane
  // computes its own rows' addresses (no shuffles in the copy loop).
  static constexpr int kRowsPerLane = 4;
  __device__ int row_of(int k) const { return warp_ * 16 + lane_ / 8 + 4 * k; }

  // The slot ids of this lane's rows of pair i's two blocks (-1 past the item's entries).
  __device__ void read_slots(const PairBlocks& b, int i, int32_t (&slot)[2][kRowsPerLane]) const {
#pragma unroll
    for (int blk = 0; blk < 2; ++blk) {
#pragma unroll
      for (int k = 0; k < kRowsPerLane; ++k) slot[blk][k] = slot_of(b, 2 * i + blk, row_of(k));
    }
  }
  __device__ int32_t slot_of(const PairBlocks& b, int block, int row) const {
    if (block < b.main_blocks) {
      const int e = b.r.main_lo + block * 64 + row;
      return e < b.r.main_hi ? p_.main_sel.idx[token_offset(p_.main_sel) + e] : -1;
    }
    const int e = b.r.extra_lo + (block - b.main_blocks) * 64 + row;
    return block < b.blocks && e < b.r.extra_hi
               ? p_.extra_sel.idx[token_offset(p_.extra_sel) + e]
               : -1;
  }
  __device__ int64_t token_offset(const portable::SelectionView& sel) const {
    return int64_t{token_} * sel.idx_stride;
  }

  // The row addresses of block `block` (nullptr for an invalid entry: a zero row).
  __device__ void row_addresses(const PairBlocks& b, int block,
                                const int32_t (&slot)[kRowsPerLane],
                                const uint8_t* (&rows)[kRowsPerLane]) const {
    const portable::PoolView& pool = block < b.main_blocks ? p_.main : p_.extra;
#pragma unroll
    for (int k = 0; k < kRowsPerLane; ++k) {
      const bool valid = slot[k] >= 0 && slot[k] < pool.slots;
      rows[k] = valid ? Rows::row(pool, slot[k]).data : nullptr;
    }
  }

  // Thread t sets the row word of row t % 64 of buffer t / 64 (whole warps per buffer, so the
  // choice never splits a warp); the row's copying lanes do not, which keeps the copy loop
  // free of divergent branches.
  __device__ int word_buffer() const { return warp_ / 2; }
  __device__ int word_row() const { return static_cast<int>(threadIdx.x) % 64; }

  // This thread's row word for block `block` (in buffer word_buffer()), whose slot id is
  // `slot`: kValidRow or 0 from the slot alone, or with tables the slot's table word (zeros
  // for an invalid entry) by cp.async, which completes with the thread's copies.
  __device__ void set_row_word(const PairBlocks& b, int block, int32_t slot) const {
    const bool main = block < b.main_blocks;
    const bool valid = slot >= 0 && slot < (main ? p_.main.slots : p_.extra.slots);
    uint32_t* word = s_.row_words() + word_buffer() * 64 + word_row();
    if constexpr (kTables) {
      const uint32_t* table = main ? p_.main_v_bounds : p_.extra_v_bounds;
      ptx::cp_async_ca_4_zfill(word, valid ? table + slot : table, valid);
    } else {
      *word = valid ? kValidRow : 0;
    }
  }

  // Copies half h of this lane's rows into buffer b once its last reader freed it, then runs
  // `after_copies` (a block's first half: its row words; after the rows, whose copies are
  // what the consumers wait for). Both complete READY(b, h), so the words' readers wait for
  // nothing else.
  template <class AfterCopies>
  __device__ void fill(int b, int h, const uint8_t* const (&rows)[kRowsPerLane],
                       AfterCopies after_copies) {
    ptx::mbarrier_wait(s_.free(b, h), (pair_ & 1) ^ 1);
    uint8_t* tile = s_.kv(b);
    const int group = lane_ % 8;
    const int tile0 = h == kHalfL ? 0 : C::L_BLOCKS;
    const int tile1 = h == kHalfL ? C::L_BLOCKS : C::D_BLOCKS;
#pragma unroll
    for (int k = 0; k < kRowsPerLane; ++k) {
      const int row = row_of(k);
      const bool valid = rows[k] != nullptr;
      // Computed here on every fill: hoisted out of the pair loop, the offsets of every row
      // and tile outnumber the producer's registers and come back from local memory.
      uint8_t* dst = tile + ptx::opaque(row * 128 + ((group ^ row) & 7) * 16);
      const uint8_t* src = valid ? rows[k] + group * 16 : p_.main.data;
#pragma unroll
      for (int t = tile0; t < tile1; ++t) {
        ptx::cp_async_cg_16_zfill(dst + t * C::BLOCK_BYTES, valid ? src + t * 128 : src, valid);
      }
    }
    after_copies();
    ptx::cp_async_mbarrier_arrive(s_.ready(b, h));
    ptx::mbarrier_arrive(s_.ready(b, h));
  }

  const AttendParams& p_;
  const QTileMap& q_map_;
  const PairShared<C>& s_;
  const int warp_;  // 0..3
  const int lane_;
  int token_ = 0;  // the item's
  int pair_ = 0;
  int item_ = 0;
};

// ---- consumer warpgroups ---------------------------------------------------------------------
// Both consumers run one copy of this code, consumer c_ (0 or 1) choosing its buffers at run
// time: a copy per consumer (a template argument) doubled the step loop's code, and each
// scheduler then fetched both copies in turn, stalling at every new 128-byte line (on the
// V4 prefill row, 19% of the consumer warps' time without an instruction). Consumer c_ owns
// block 2i + c_ of each pair and half c_ of d_v (kHalfL = 0, kHalfR = 1); its err_[0] is its
// own half's rounding bound, err_[1] the other half's.
//
// kTables: the call has |V| bounds tables (AttendParams::main_v_bounds), so scan_v folds the
// rows' table words instead of scanning V. A template argument, not a run-time branch: with
// both forms in one kernel the consumers spill ~16 more bytes.
template <int D, bool kTables>
class PairConsumer : OnlineSoftmaxRows {
  using C = PairConfig<D>;
  static_assert(kHalfL == 0 && kHalfR == 1, "consumer c's half of d_v is half c");

 public:
  __device__ PairConsumer(const AttendParams& p, const PairShared<C>& s, int consumer)
      : p_(p),
        s_(s),
        c_(consumer),
        warp_((static_cast<int>(threadIdx.x) % 128) / 32),
        lane_(threadIdx.x % 32),
        row0_((threadIdx.x % 128) / 32 * 16 + lane_ / 4) {
    stage_tile_sinks(p_, s_.tile_sink(), c_, lane_, row0_);
  }

  __device__ void run_item(int token, int head0, int lo, int hi, int segment) {
    ptx::mbarrier_wait(s_.q_full(), item_ & 1);
    timeline::mark(p_.timeline, timeline::kConsumerQ, item_ == 0 && threadIdx.x == 128);
    timeline::mark_item_change(p_.timeline, timeline::kChangeNextQ, item_, threadIdx.x == 128);
    start_item();
    const int pairs = PairBlocks(p_, token, lo, hi).pairs();
    float s[32];
    if (c_ == 0 && pairs > 0) {
      issue_s_and_wait(s, 0);
      timeline::mark_item_change(p_.timeline, timeline::kChangeNextS, item_,
                                 threadIdx.x == 128, __float_as_uint(s[0]));
    }
#pragma unroll 1
    for (int i = 0; i < pairs; ++i) pair_step(s, i + 1 < pairs);
    if (pairs == 0) ptx::mbarrier_arrive(s_.q_empty());  // no S to wait for
    write_item_results<false>(p_, s_.row_sum(), s_.tile_sink(), C::BAR_ID_RESULTS, c_, lane_,
                              row0_, o_, top_, l_, token, head0, segment, item_);
    ++item_;
  }

 private:
  // S of this consumer's block of pair `pair_ + ahead`, in the order the producer fills its
  // halves (consumer 0: L then R, consumer 1: R then L), the |V| scan while it runs, the wait.
  __device__ void issue_s_and_wait(float (&s)[32], int ahead) {
    const uint32_t parity = (pair_ + ahead) & 1;
    const int first = c_;  // the half holding this consumer's own half of V
    const bool cta_first = pair_ + ahead == 0 && threadIdx.x == 128;
    ptx::mbarrier_wait(s_.ready(c_, first), parity);
    issue_s_half(s, first, true);
    ptx::mbarrier_wait(s_.ready(c_, 1 - first), parity);
    timeline::mark(p_.timeline, timeline::kConsumerFirstStage, cta_first);
    issue_s_half(s, 1 - first, false);
    ptx::wgmma_commit();
    scan_v();
    ptx::wgmma_wait<0>();
    ptx::wgmma_fence_operands(s);
    timeline::mark(p_.timeline, timeline::kConsumerFirstS, cta_first, __float_as_uint(s[0]));
  }
  __device__ void issue_s_half(float (&s)[32], int h, bool overwrite) {
    if (h == kHalfL) {
      issue_s_blocks(s, 0, C::L_BLOCKS, overwrite);
    } else {
      issue_s_blocks(s, C::L_BLOCKS, C::D_BLOCKS, overwrite);
    }
  }

  // One pair: both consumers run the same steps on their own block, exchanging row maxima
  // once and P tiles once.
  __device__ void pair_step(float (&s)[32], bool has_next) {
    if (c_ == 1) issue_s_and_wait(s, 0);
    // This thread's last S of the item is complete (consumer 0 waited for it before the first
    // pair or behind the previous pair's products): the Q tile is free now, not at the item's
    // end, so the producer loads the next item's Q and first halves while this pair's
    // products and the results run (it waited on q_empty for 5% of the V4 prefill row's
    // samples, perf-log.md).
    if (!has_next) ptx::mbarrier_arrive(s_.q_empty());

    // Softmax of the own block; O_own += P V_own. The maxima are chained: consumer 1 starts
    // from consumer 0's raised row maxima, so its maxima are already the pair's and only
    // consumer 0's P may need rescaling; each consumer waits only for the other's row maxima,
    // not for its softmax (waiting for all of consumer 0's softmax, as FlashMLA's consumers
    // do, was 0-10% slower on the prefill rows, perf-log.md).
    float mx[2];
    const uint32_t* words = own_row_words();
    if (all_valid_) {
      mask_and_row_max<8>(s, words, lane_, p_.scale_log2, mx, /*all_valid=*/true);
    } else {
      mask_and_row_max<8>(s, words, lane_, p_.scale_log2, mx);
    }
    float m_old[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) m_old[h] = reference_max(top_[h]);
    if (c_ == 1) {
      // Consumer 0's maxima (and, without tables, every warp of this consumer's |V| scan) are out.
      ptx::named_barrier_sync(C::BAR_ID_MAX + 0, C::CONSUMER_THREADS);
#pragma unroll
      for (int h = 0; h < 2; ++h) top_[h] = fmaxf(top_[h], s_.row_max()[row0_ + 8 * h]);
    }
    float m_own[2], alpha[2];
    bool moved = false;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      top_[h] = fmaxf(top_[h], mx[h]);
      m_own[h] = reference_max(top_[h]);
      moved |= m_own[h] != m_old[h];
      alpha[h] = m_own[h] == m_old[h] ? 1.0f : ptx::ex2_approx(m_old[h] - m_own[h]);
      if (lane_ % 4 == 0) s_.row_max()[c_ * 64 + row0_ + 8 * h] = top_[h];
    }
    ptx::named_barrier_arrive(C::BAR_ID_MAX + c_, C::CONSUMER_THREADS);
    rescale(alpha, moved);
    float rounding[2];
    uint32_t pa[16];
    exponentiate(s, m_own, pa, rounding);
    ptx::wgmma_fence();
    accumulate_rs(pa, c_);
    ptx::wgmma_commit();
    if (c_ == 0) {
      // Consumer 1's maxima (and, without tables, every warp of this consumer's |V| scan) are out.
      ptx::named_barrier_sync(C::BAR_ID_MAX + 1, C::CONSUMER_THREADS);
    }
    float v_bound[2];
    read_v_bounds(v_bound);
    // The own product's rounding, relative to m_own like l_ and err_ now.
    float err_own[2];
    bool over = false;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      err_own[h] = err_[0][h] + rounding[h] * v_bound[0];
      over |= !within_rounding_budget(err_own[h], l_[h]);
    }
    // The rare residual of the own product waits for the step's end, where P's bf16
    // registers are dead: taken here, beside them, it spilled seven registers around its
    // branch on every step. Its half of the buffer is freed only after it.
    const bool own_residual = ptx::named_barrier_any(C::BAR_ID_VOTE + c_, 128, over);
    if (!own_residual) {
      err_[0][0] = err_own[0];
      err_[0][1] = err_own[1];
    }
    ptx::wgmma_wait<0>();
    ptx::wgmma_fence_operands(o_);
    ptx::wgmma_fence_operands(pa);
    if (!own_residual) ptx::mbarrier_arrive(s_.free(c_, c_));

    // The pair's maxima: rescale l, the rounding sums and P to them, publish P, rescale O.
    // Consumer 1's published maxima are the pair's (they include consumer 0's), so only
    // consumer 0's rows can move here; both reach the same reference maxima.
    float scale[2];
    moved = false;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      top_[h] = fmaxf(top_[h], s_.row_max()[other() * 64 + row0_ + 8 * h]);
      const float m = reference_max(top_[h]);
      moved |= m != m_own[h];
      scale[h] = m == m_own[h] ? 1.0f : ptx::ex2_approx(m_own[h] - m);
    }
    rescale_sums(scale);
    // P, its bf16 fragments and their rounding change only where a row of the warp moved to
    // a higher reference maximum; otherwise they are the own product's as they stand.
    if (__any_sync(0xffffffffu, moved)) {
#pragma unroll
      for (int j = 0; j < 32; ++j) s[j] *= scale[(j >> 1) & 1];
      pack_p_bf16x2(s, pa);
      rounding[0] = rounding_of(s, pa, 0);
      rounding[1] = rounding_of(s, pa, 1);
    }
    float err_other[2];
    over = false;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      err_other[h] = err_[1][h] + rounding[h] * v_bound[1];
      over |= !within_rounding_budget(err_other[h], l_[h]);
    }
    publish_p(pa, over);
    scale_rows(o_, scale, moved);

    // O_own += P_other V_other,own.
    ptx::named_barrier_sync(C::BAR_ID_P, C::CONSUMER_THREADS);
    const bool fix0 = any_flag(0), fix1 = any_flag(1);
    if (!(c_ == 0 ? fix0 : fix1)) {
      err_[1][0] = err_other[0];
      err_[1][1] = err_other[1];
    }
    ptx::wgmma_fence();
    accumulate_ss(s_.p(other()), other());
    ptx::wgmma_commit();
    if (fix0 || fix1) {
      ptx::wgmma_wait<0>();
      ptx::wgmma_fence_operands(o_);
      fixup(s, fix0, fix1);
    }
    if (own_residual) {
      accumulate_residual_rs(s, c_);
      ptx::mbarrier_arrive(s_.free(c_, c_));
    }
    // Consumer 0's last write into its P tile is done (the refill of half R waits for it
    // directly, not only through consumer 1).
    if (c_ == 0) ptx::mbarrier_arrive(s_.free(0, kHalfR));

    // Consumer 0 issues its next S behind the product (half L is refilled by then).
    if (c_ == 0 && has_next) {
      ptx::mbarrier_wait(s_.ready(0, kHalfL), (pair_ + 1) & 1);
      issue_s_half(s, kHalfL, true);
      ptx::wgmma_commit();
      ptx::wgmma_wait<1>();
      ptx::wgmma_fence_operands(o_);
      ptx::mbarrier_arrive(s_.free(other(), c_));
      ptx::mbarrier_wait(s_.ready(0, kHalfR), (pair_ + 1) & 1);
      issue_s_half(s, kHalfR, false);
      ptx::wgmma_commit();
      scan_v();
      ptx::wgmma_wait<0>();
      ptx::wgmma_fence_operands(s);
    } else {
      ptx::wgmma_wait<0>();
      ptx::wgmma_fence_operands(o_);
      ptx::mbarrier_arrive(s_.free(other(), c_));
    }
    ++pair_;
  }

  // ---- shared by both ----
  // S (+)= Q K^T over d blocks [kb0, kb1) of this consumer's buffer.
  __device__ void issue_s_blocks(float (&s)[32], int kb0, int kb1, bool overwrite) {
    // bf16 rows arrive by cp.async, which no thread fenced: order them before wgmma reads.
    ptx::fence_proxy_async_shared();
    ptx::wgmma_fence();
    // One descriptor per operand, stepped by constants (ptx::desc_step).
    const uint64_t q_desc = ptx::sw128_desc(s_.q(), 0, 1024);
    const uint64_t k_desc = ptx::sw128_desc(s_.kv(c_), 0, 1024);
    const uint32_t q_high = ptx::opaque_desc_high(q_desc, 0);
    const uint32_t k_high = ptx::opaque_desc_high(k_desc, 1);
#pragma unroll
    for (int kb = kb0; kb < kb1; ++kb) {
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) {
        const int step = kb * C::BLOCK_BYTES + kk * 32;
        ptx::wgmma_m64n64k16_ss(s, ptx::desc_step(q_desc, step, q_high),
                                ptx::desc_step(k_desc, step, k_high),
                                !(overwrite && kb == kb0 && kk == 0));
      }
    }
  }

  // The largest |V| of this consumer's block per d_v half, as bf16 magnitude bits. With
  // bounds tables, from its rows' table words (the producer copied them with the block's
  // first half): every warp folds all 64 itself (lane l rows l and l + 32) and keeps the
  // result in v_bits_, so the bound is in registers when the pair needs it, not behind the
  // maxima's barrier and eight shared-memory loads. Otherwise by scanning V, per warp:
  // consecutive 16-byte chunks over the 128 threads (no bank conflicts), the first 16 of a
  // thread's chunks in half L, the rest in half R. It also takes the block's all-valid vote
  // for the mask (all_valid_; with tables from the same two words): while S runs, not on the
  // stretch from S's completion to P (the prefill rows 0.7-0.9% faster, perf-notes s65).
  __device__ void scan_v() {
    const int t = static_cast<int>(threadIdx.x % 128);
    if constexpr (kTables) {
      const uint32_t* words = own_row_words();
      const uint32_t a = words[lane_], b = words[lane_ + 32];
      const uint32_t lo = __reduce_max_sync(0xffffffffu, max(a & kBoundBitsL, b & kBoundBitsL));
      const uint32_t hi = __reduce_max_sync(0xffffffffu, max(a & kBoundBitsR, b & kBoundBitsR));
      v_bits_ = lo | hi;  // half L's bits low, half R's high, as in a table word
      all_valid_ = rows_all_valid(a, b);
      return;
    }
    all_valid_ = block_all_valid();
    constexpr int kChunks = C::V_HALF_BYTES / 16 / 128;
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const uint32_t bits = __reduce_max_sync(
          0xffffffffu,
          max_abs_bf16_bits<kChunks, 128>(s_.kv(c_) + 16 * (t + 128 * kChunks * half)));
      if (lane_ == 0) s_.v_max()[(c_ * 4 + warp_) * 2 + half] = bits;
    }
  }

  // The |V| bound of this consumer's block over its own half of d_v (bound[0]) and the other
  // half (bound[1]): this warp's fold, or every warp's scan (the caller passed a barrier all
  // four warps reached after scan_v).
  __device__ void read_v_bounds(float (&bound)[2]) const {
    if constexpr (kTables) {
      const uint32_t bits_l = v_bits_ & kBoundBitsL, bits_r = v_bits_ >> 16;
      bound[0] = v_magnitude_bound(c_ == kHalfL ? bits_l : bits_r);
      bound[1] = v_magnitude_bound(c_ == kHalfL ? bits_r : bits_l);
    } else {
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        const int half = i == 0 ? c_ : other();
        uint32_t bits = 0;
#pragma unroll
        for (int w = 0; w < 4; ++w) bits = max(bits, s_.v_max()[(c_ * 4 + w) * 2 + half]);
        bound[i] = v_magnitude_bound(bits);
      }
    }
  }

  // P = exp2(S - m) in place (zeros while a row has seen nothing valid), added to l_; P as
  // bf16 fragments and the per-row sum of this thread's |p - bf16(p)|.
  __device__ void exponentiate(float (&s)[32], const float (&m)[2], uint32_t (&pa)[16],
                               float (&rounding)[2]) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float offset = exp2_offset(m[h]);
      float sum = 0.0f;
#pragma unroll
      for (int j = 0; j < 8; ++j) {
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          float& v = s[4 * j + 2 * h + e];
          v = ptx::ex2_approx(v - offset);
          sum += v;
        }
      }
      l_[h] += sum;
    }
    pack_p_bf16x2(s, pa);
    rounding[0] = rounding_of(s, pa, 0);
    rounding[1] = rounding_of(s, pa, 1);
  }

  // O, l_ and the rounding sums times alpha per row.
  __device__ void rescale(const float (&alpha)[2], bool moved) {
    rescale_sums(alpha);
    scale_rows(o_, alpha, moved);
  }
  __device__ void rescale_sums(const float (&alpha)[2]) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      l_[h] *= alpha[h];
      err_[0][h] *= alpha[h];
      err_[1][h] *= alpha[h];
    }
  }
  // Fragment i of the residual p - bf16(p), itself as bf16.
  __device__ static uint32_t residual_bf16x2(const float (&s)[32], int i) {
    return bf16x2_residual(s[2 * i], s[2 * i + 1],
                           ptx::float2_to_bf16x2_rn(s[2 * i], s[2 * i + 1]));
  }
  // Sum of |p - bf16(p)| over this thread's columns of row row0_ + 8 h.
  __device__ static float rounding_of(const float (&s)[32], const uint32_t (&pa)[16], int h) {
    float sum = 0.0f;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const int i = 2 * j + h;  // registers 4j + 2h, 4j + 2h + 1
      sum += bf16x2_rounding(s[2 * i], s[2 * i + 1], pa[i]);
    }
    return sum;
  }

  // Stores P (bf16) into this consumer's P buffer and the warp's "the other half's product
  // needs the residual" flag, fenced for the other consumer's wgmma.
  __device__ void publish_p(const uint32_t (&pa)[16], bool over) {
    store_p_tile([&](int i) { return pa[i]; });
    const bool warp_over = __any_sync(0xffffffffu, over);
    // Consumer warp threadIdx.x / 32 - 4 is warp warp_ of consumer c_: an index recomputed
    // here, where ptxas reloaded a spilled address right before the store.
    const uint32_t warp = ptx::opaque(threadIdx.x / 32 - 4);
    if (lane_ == 0) s_.flags()[warp] = warp_over;
    ptx::fence_proxy_async_shared();
  }
  // Stores the 16 bf16x2 fragments of P (fragment i: registers 2i, 2i + 1, row row0_ + 8 (i %
  // 2), columns 8 (i / 2) + 2 (lane % 4) + {0, 1}) into this consumer's swizzled P buffer.
  template <class Fragment>
  __device__ void store_p_tile(Fragment&& fragment) const {
    store_p_blocks<8>(s_.p(c_), 0, row0_, lane_, fragment);
  }
  // Whether every entry of this consumer's block is valid, from its 64 row words, two a lane:
  // the usual case, where S needs no mask (a warp vote, so the branch on it is warp-uniform
  // to ptxas; it saves each lane a load, a test and two selects per column of the step).
  __device__ bool block_all_valid() const {
    const uint32_t* words = own_row_words() + 2 * lane_;
    return rows_all_valid(words[0], words[1]);
  }
  // The warp's vote over two row words a lane: whether all 64 rows are valid.
  __device__ static bool rows_all_valid(uint32_t a, uint32_t b) {
    return __all_sync(0xffffffffu, (a & b & kValidRow) != 0);
  }
  // The row words of this consumer's block (its 64 rows' validity and V bounds).
  __device__ const uint32_t* own_row_words() const { return s_.row_words() + c_ * 64; }
  __device__ bool any_flag(int c) const {
    const uint4 f = ptx::ld_shared_u4(s_.flags() + 4 * c);
    return (f.x | f.y | f.z | f.w) != 0;
  }

  // The rare residual products of the other half: once both remote products are done, the
  // owner of a flagged block overwrites its P buffer with P's residual and the other consumer
  // multiplies it with its half of the block's V.
  __device__ void fixup(const float (&s)[32], bool fix0, bool fix1) {
    const bool mine = c_ == 0 ? fix0 : fix1;
    const bool others = c_ == 0 ? fix1 : fix0;
    ptx::named_barrier_sync(C::BAR_ID_FIXUP, C::CONSUMER_THREADS);
    if (mine) {
      store_p_tile([&](int i) { return residual_bf16x2(s, i); });
      ptx::fence_proxy_async_shared();
    }
    ptx::named_barrier_sync(C::BAR_ID_FIXUP, C::CONSUMER_THREADS);
    if (others) {
      ptx::wgmma_fence();
      accumulate_ss(s_.p(other()), other());
      ptx::wgmma_commit();
      ptx::wgmma_wait<0>();
      ptx::wgmma_fence_operands(o_);
    }
  }

  // O_half += P V over the 64 rows of buffer b: V = d blocks [4 c_, 4 c_ + 4), MN-major.
  __device__ uint64_t v_desc(int b) const {
    return ptx::sw128_desc(s_.kv(b) + c_ * C::V_HALF_BYTES, C::BLOCK_BYTES, 1024);
  }
  __device__ void accumulate_rs(const uint32_t (&pa)[16], int b) {
    const uint64_t v = v_desc(b);
    const uint32_t v_high = ptx::opaque_desc_high(v, 1);
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
      const uint32_t a[4] = {pa[4 * kk], pa[4 * kk + 1], pa[4 * kk + 2], pa[4 * kk + 3]};
      ptx::wgmma_m64n256k16_rs_bt(o_, a, ptx::desc_step(v, kk * 16 * 128, v_high));
    }
  }
  // The rare residual product of this consumer's own half (at the pair step's end), one k16
  // slice at a time, each waited for: its A registers must live until the wgmma has read them,
  // and four at a time fit beside O and P.
  __device__ void accumulate_residual_rs(const float (&s)[32], int b) {
    const uint64_t v = v_desc(b);
    const uint32_t v_high = ptx::opaque_desc_high(v, 1);
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
      uint32_t a[4];
#pragma unroll
      for (int r = 0; r < 4; ++r) a[r] = residual_bf16x2(s, 4 * kk + r);
      ptx::wgmma_fence();
      ptx::wgmma_m64n256k16_rs_bt(o_, a, ptx::desc_step(v, kk * 16 * 128, v_high));
      ptx::wgmma_commit();
      ptx::wgmma_wait<0>();
      ptx::wgmma_fence_operands(a);
    }
  }
  __device__ void accumulate_ss(const uint8_t* p_tile, int b) {
    const uint64_t p = ptx::sw128_desc(p_tile, 0, 1024);
    const uint64_t v = v_desc(b);
    const uint32_t p_high = ptx::opaque_desc_high(p, 0);
    const uint32_t v_high = ptx::opaque_desc_high(v, 1);
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
      ptx::wgmma_m64n256k16_ss_bt(o_, ptx::desc_step(p, kk * 32, p_high),
                                  ptx::desc_step(v, kk * 16 * 128, v_high), true);
    }
  }

  __device__ int other() const { return 1 - c_; }  // the other consumer

  const AttendParams& p_;
  const PairShared<C>& s_;
  const int c_;      // this consumer: 0 or 1
  const int warp_;   // 0..3 within the consumer
  const int lane_;
  const int row0_;  // this thread's first accumulator row (head offset); the second is +8
  int pair_ = 0;
  int item_ = 0;
  uint32_t v_bits_ = 0;  // with tables: scan_v's fold of the block's words (both halves)
  bool all_valid_ = false;  // whether the block's rows are all valid, voted by scan_v
};

template <int D, bool kTables>
__global__ void __launch_bounds__(PairConfig<D>::THREADS, 1)
    pair_attend_kernel(const __grid_constant__ AttendParams p,
                       const __grid_constant__ QTileMap q_map) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using C = PairConfig<D>;
  extern __shared__ __align__(16) uint8_t smem_raw[];
  uint8_t* base = smem_raw + ((1024 - ptx::smem_u32(smem_raw) % 1024) % 1024);
  const PairShared<C> s(base);
  timeline::mark_with_cycles(p.timeline, timeline::kEntry, timeline::kEntryCycles,
                             threadIdx.x == 0);
  ptx::allow_dependent_launch();  // a split call's combine (portable::CombineLaunch)
  if (threadIdx.x == 0) {
    ClaimQueue::init();
    for (int i = 0; i < 4; ++i) ptx::mbarrier_init(s.bars() + C::BAR_READY + i, 128);
    // Half R of buffer 0 is last read by consumer 1, but it also holds consumer 0's P tile
    // for d_qk 576: both consumers release it.
    ptx::mbarrier_init(s.free(0, kHalfL), 128);
    ptx::mbarrier_init(s.free(0, kHalfR), C::CONSUMER_THREADS);
    ptx::mbarrier_init(s.free(1, kHalfL), 128);
    ptx::mbarrier_init(s.free(1, kHalfR), 128);
    ptx::mbarrier_init(s.q_full(), 128);
    ptx::mbarrier_init(s.q_empty(), C::CONSUMER_THREADS);
  }
  __syncthreads();
  if (threadIdx.x < 128) {
    ptx::setmaxnreg_dec<C::PRODUCER_REGS>();
    PairProducer<D, kTables> producer(p, q_map, s);
    run_items(p, producer);
  } else {
    ptx::setmaxnreg_inc<C::CONSUMER_REGS>();
    // Broadcast from lane 0 so that ptxas treats the consumer index as warp-uniform: wgmmas
    // under a branch it cannot prove uniform are serialized.
    const int consumer = __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x) / 128 - 1, 0);
    PairConsumer<D, kTables> consumer_role(p, s, consumer);
    run_items(p, consumer_role);
  }
#endif
}

template <int D>
Status launch_pair_attend(const AttendParams& p, int units, cudaStream_t stream) {
  using C = PairConfig<D>;
  // The pair of kernels (with and without tables) makes the pass and its tables one choice.
  if (p.main_v_bounds != nullptr) {
    return launch_attend_kernel<C::THREADS, C::SMEM_BYTES, D>(
        pair_attend_kernel<D, true>, "pair_attend_kernel (bounds tables)", p, units, stream);
  }
  return launch_attend_kernel<C::THREADS, C::SMEM_BYTES, D>(pair_attend_kernel<D, false>,
                                                            "pair_attend_kernel", p, units, stream);
}

template <int D>
AttendVariant make_pair_attend_variant() {
  return AttendVariant{&launch_pair_attend<D>, PairConfig<D>::SMEM_BYTES, true};
}

}  // namespace smla::hopper
