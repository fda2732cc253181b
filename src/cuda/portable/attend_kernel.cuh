// The portable sparse-MLA attention kernel (sm_80+): written once, instantiated per
// (main rows, extra rows, head tile) by the attend_*.cu files.
//
// A CTA computes HT heads of one token over a range of that token's selected entries (main
// pool first, then extra pool). Per step of BN entries:
//   1. gather: cp.async copies the BN rows named by the indices into a STAGES-deep ring
//      (invalid entries zero-filled, never addressed), overlapping the next step's rows with
//      this step's math; quantized rows are then dequantized into a bf16 tile,
//   2. S = Q·K^T with mma.sync m16n8k16 (bf16 in, f32 out), d_qk split over warps,
//   3. online softmax in the exp2 domain; P is split into bf16 hi + lo parts,
//   4. O += P_hi·V + P_lo·V with d_v = 512 split over the 8 warps (V = first 512 columns of
//      K). P in bf16 alone (as FlashMLA does) carries a relative error of 2^-8 per weight;
//      when values of |V| ~ 1 cancel in a sum, that exceeds SPEC's 1e-3 absolute bound on
//      out. The lo part brings P to ~2^-17 at the price of a second P·V MMA per step.
// One-pass mode writes the final bf16 out / lse / max_logits; split mode (a plan is given)
// writes f32 partials per segment for the combine kernel.
// The transposed head tile (MT = 0, h_q <= 8) runs the same steps with the MMA roles of
// heads and KV rows swapped: S^T = K·Q^T (A = K rows, B = the 8 Q rows) and
// O^T += V^T·P^T (A = V through ldmatrix.trans, B = P [8 heads][BN]), so a 16x8 MMA tile
// is 16 KV rows x 8 heads and no MMA row is spent on a padded head.
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

#include "cuda/cuda_check.hpp"
#include "cuda/portable/attend_config.cuh"
#include "cuda/portable/attend_params.hpp"
#include "cuda/portable/attend_variants.hpp"
#include "cuda/portable/kv_rows.cuh"
#include "cuda/ptx/convert.cuh"
#include "cuda/ptx/cp_async.cuh"
#include "cuda/ptx/grid_dependency.cuh"
#include "cuda/ptx/ldmatrix.cuh"
#include "cuda/ptx/mma.cuh"

namespace smla::portable {

inline constexpr float kLn2 = 0.6931471805599453f;

template <class MainRows, class ExtraRows, int MT>
class AttendCta {
  using C = AttendConfig<MainRows, ExtraRows, MT>;

 public:
  __device__ AttendCta(const AttendParams& p, uint8_t* smem)
      : p_(p),
        q_s_(reinterpret_cast<uint16_t*>(smem + C::Q_OFF)),
        ring_(smem + C::RING_OFF),
        tile_s_(reinterpret_cast<uint16_t*>(smem + C::TILE_OFF)),
        s_part_(reinterpret_cast<float*>(smem + C::SPART_OFF)),
        p_s_(reinterpret_cast<uint16_t*>(smem + C::P_OFF)),
        p_lo_s_(reinterpret_cast<uint16_t*>(smem + C::P_LO_OFF)),
        alpha_s_(reinterpret_cast<float*>(smem + C::ALPHA_OFF)),
        row_scale_s_(reinterpret_cast<float*>(smem + C::ROWSCALE_OFF)),
        valid_s_(reinterpret_cast<int32_t*>(smem + C::VALID_OFF)),
        tid_(static_cast<int>(threadIdx.x)),
        warp_(tid_ / 32),
        lane_(tid_ % 32) {}

  // Attention of heads [head0, head0 + HT) of `token` over entries [lo, hi) of its
  // concatenated (main, extra) list. segment < 0: final outputs; else partial row `segment`.
  __device__ void run_item(int token, int head0, int lo, int hi, int segment) {
    __syncthreads();  // the previous item's readers of Q and the row scales are done
    load_q(token, head0);
#pragma unroll
    for (int m = 0; m < C::O_M; ++m)
#pragma unroll
      for (int n = 0; n < C::O_N; ++n)
#pragma unroll
        for (int i = 0; i < 4; ++i) o_[m][n][i] = 0.0f;
    row_m_ = -INFINITY;
    row_l_ = 0.0f;

    const int n_main = used_entries(p_.main_sel, token);
    const int main_hi = min(hi, n_main);
    if (lo < main_hi) {
      run_range<MainRows>(p_.main, p_.main_sel.idx + token * p_.main_sel.idx_stride, lo, main_hi);
    }
    const int extra_lo = max(lo, n_main) - n_main;
    const int extra_hi = hi - n_main;
    if (extra_lo < extra_hi) {
      run_range<ExtraRows>(p_.extra, p_.extra_sel.idx + token * p_.extra_sel.idx_stride,
                           extra_lo, extra_hi);
    }
    ptx::cp_async_wait_group<0>();  // Q of an item without entries
    finish(token, head0, segment);
  }

 private:
  // Q [HT][QS] <- q[token, head0 + r, :]; heads past h_q are zero-filled. One commit group.
  __device__ void load_q(int token, int head0) {
    constexpr int kChunksPerRow = C::D / 8;  // 16 B = 8 bf16
    const uint16_t* q_token = p_.q + token * p_.q_stride_t;
    for (int c = tid_; c < C::HT * kChunksPerRow; c += C::THREADS) {
      const int r = c / kChunksPerRow;
      const int col = (c % kChunksPerRow) * 8;
      const bool valid = head0 + r < p_.h_q;
      const uint16_t* src = valid ? q_token + (head0 + r) * p_.q_stride_h + col : p_.q;
      ptx::cp_async_cg_16_zfill(q_s_ + r * C::QS + col, src, valid);
    }
    ptx::cp_async_commit_group();
  }

  __device__ uint8_t* ring_row(int stage, int r) const {
    return ring_ + (stage * C::BN + r) * C::RING_ROW_BYTES;
  }

  // Issues the copies of step `step` (entries lo + step * BN + [0, BN)) into ring `stage`.
  // An entry is valid iff it is below hi and its slot id is in [0, slots): compared, never
  // offset, so every int32 value is safe.
  template <class Rows>
  __device__ void issue_step(const PoolView& pool, const int32_t* idx, int lo, int hi, int step,
                             int stage) {
    const int base = lo + step * C::BN;
    for (int c = tid_; c < C::BN * Rows::kCopies; c += C::THREADS) {
      const int r = c / Rows::kCopies;
      const int copy = c % Rows::kCopies;
      const int e = base + r;
      const int32_t slot = e < hi ? idx[e] : -1;
      const bool valid = slot >= 0 && slot < pool.slots;
      Rows::copy(pool, slot, valid, copy, ring_row(stage, r));
      if (copy == 0) valid_s_[stage * C::BN + r] = valid;
    }
  }

  // Dequantizes ring `stage` into the bf16 tile [BN][KS].
  template <class Rows>
  __device__ void convert_stage(int stage) {
    constexpr int kGroups = C::D / 8;
    for (int g = tid_; g < C::BN * kGroups; g += C::THREADS) {
      const int r = g / kGroups;
      const int group = g % kGroups;
      store_bf16x8(tile_s_ + r * C::KS + group * 8, Rows::convert_group(ring_row(stage, r), group));
    }
  }

  template <class Rows>
  __device__ void run_range(const PoolView& pool, const int32_t* idx, int lo, int hi) {
    const int steps = (hi - lo + C::BN - 1) / C::BN;
    __syncthreads();  // the previous range's last step no longer reads the ring
#pragma unroll
    for (int s = 0; s < C::STAGES - 1; ++s) {
      if (s < steps) issue_step<Rows>(pool, idx, lo, hi, s, s);
      ptx::cp_async_commit_group();  // empty groups keep the wait count uniform
    }
    for (int i = 0; i < steps; ++i) {
      const int stage = i % C::STAGES;
      ptx::cp_async_wait_group<C::STAGES - 2>();
      __syncthreads();  // step i landed for every thread; step i-1's readers are done
      const int next = i + C::STAGES - 1;
      if (next < steps) issue_step<Rows>(pool, idx, lo, hi, next, next % C::STAGES);
      ptx::cp_async_commit_group();

      const uint16_t* k_tile;  // [BN][KS] bf16
      if constexpr (Rows::kDirect) {
        k_tile = reinterpret_cast<const uint16_t*>(ring_row(stage, 0));
      } else {
        convert_stage<Rows>(stage);
        __syncthreads();
        k_tile = tile_s_;
      }
      scores(k_tile);
      __syncthreads();
      softmax(stage);
      __syncthreads();
      accumulate(k_tile);
    }
  }

  // s_part[kpart][HT][BN] <- this warp's S tile (transposed: S^T tile) over its d_qk slice.
  __device__ void scores(const uint16_t* k_tile) {
    static_assert(C::QS == C::KS, "Q and K rows swap MMA operands at one stride");
    const int tile = warp_ % C::S_TILES;
    const int kpart = warp_ / C::S_TILES;
    // A: 16 rows (heads, or KV rows when transposed); B: 8 rows (KV rows, or heads).
    const uint16_t* a_rows;
    const uint16_t* b_rows;
    int m;
    int n;
    if constexpr (C::TRANSPOSED) {
      a_rows = k_tile;
      b_rows = q_s_;
      m = tile;
      n = 0;
    } else {
      a_rows = q_s_;
      b_rows = k_tile;
      m = tile / (C::BN / 8);
      n = tile % (C::BN / 8);
    }
    const uint16_t* a_row = a_rows + (m * 16 + lane_ % 16) * C::KS + (lane_ / 16) * 8;
    const uint16_t* b_row = b_rows + (n * 8 + lane_ % 8) * C::KS + ((lane_ / 8) % 2) * 8;
    // Two accumulators break the dependency chain of consecutive MMAs.
    float acc[2][4] = {};
#pragma unroll
    for (int c = 0; c < C::K_CHUNKS; ++c) {
      const int k0 = (kpart * C::K_CHUNKS + c) * 16;
      uint32_t a[4];
      uint32_t b[2];
      ptx::ldmatrix_x4(a, a_row + k0);
      ptx::ldmatrix_x2(b, b_row + k0);
      ptx::mma_m16n8k16_bf16_f32(acc[c % 2], a, b);
    }
    const int g = lane_ / 4;
    const int col = n * 8 + 2 * (lane_ % 4);
    if constexpr (C::TRANSPOSED) {
      // Fragment (row g = KV row, col = head) lands at s_part[kpart][head][row].
      float* out = s_part_ + (kpart * C::HT + col) * C::BN + m * 16 + g;
      out[0] = acc[0][0] + acc[1][0];
      out[C::BN] = acc[0][1] + acc[1][1];
      out[8] = acc[0][2] + acc[1][2];
      out[C::BN + 8] = acc[0][3] + acc[1][3];
    } else {
      float* out = s_part_ + (kpart * C::HT + m * 16 + g) * C::BN + col;
      *reinterpret_cast<float2*>(out) =
          make_float2(acc[0][0] + acc[1][0], acc[0][1] + acc[1][1]);
      *reinterpret_cast<float2*>(out + 8 * C::BN) =
          make_float2(acc[0][2] + acc[1][2], acc[0][3] + acc[1][3]);
    }
  }

  template <class Op>
  __device__ float row_reduce(float v, Op op) const {
#pragma unroll
    for (int off = C::TPR / 2; off > 0; off /= 2) v = op(v, __shfl_xor_sync(0xffffffffu, v, off));
    return v;
  }

  // Online softmax of the step's S for this thread's row: P (bf16 hi + lo) and the rescale
  // factor of the row's O. Invalid entries score -inf whatever their (zeroed) dot product.
  __device__ void softmax(int stage) {
    const int r = tid_ / C::TPR;
    const int c0 = (tid_ % C::TPR) * C::CPT;
    float s[C::CPT];
    float step_max = -INFINITY;
#pragma unroll
    for (int j = 0; j < C::CPT; ++j) {
      const int c = c0 + j;
      float dot = 0.0f;
#pragma unroll
      for (int kp = 0; kp < C::KSPLIT; ++kp) dot += s_part_[(kp * C::HT + r) * C::BN + c];
      s[j] = valid_s_[stage * C::BN + c] ? dot * p_.scale_log2 : -INFINITY;
      step_max = fmaxf(step_max, s[j]);
    }
    step_max = row_reduce(step_max, [](float a, float b) { return fmaxf(a, b); });
    const float m_new = fmaxf(row_m_, step_max);
    const bool none = m_new == -INFINITY;  // nothing valid yet: keep everything at zero
    const float alpha = none ? 1.0f : exp2f(row_m_ - m_new);
    float sum = 0.0f;
#pragma unroll
    for (int j = 0; j < C::CPT; ++j) {
      const float pj = none ? 0.0f : exp2f(s[j] - m_new);
      sum += pj;
      const uint16_t hi = fmt::float_to_bf16_rne(pj);
      p_s_[r * C::PS + c0 + j] = hi;
      p_lo_s_[r * C::PS + c0 + j] = fmt::float_to_bf16_rne(pj - fmt::bf16_to_float(hi));
    }
    sum = row_reduce(sum, [](float a, float b) { return a + b; });
    row_l_ = row_l_ * alpha + sum;
    row_m_ = m_new;
    if (tid_ % C::TPR == 0) alpha_s_[r] = alpha;
  }

  __device__ void accumulate(const uint16_t* k_tile) {
    if constexpr (C::TRANSPOSED) {
      accumulate_transposed(k_tile);
    } else {
      accumulate_heads(k_tile);
    }
  }

  // O = alpha * O + (P_hi + P_lo)·V for this warp's d_v columns.
  __device__ void accumulate_heads(const uint16_t* k_tile) {
    const int g = lane_ / 4;
#pragma unroll
    for (int m = 0; m < MT; ++m) {
      const float alpha_lo = alpha_s_[m * 16 + g];
      const float alpha_hi = alpha_s_[m * 16 + g + 8];
#pragma unroll
      for (int n = 0; n < C::DV_TILES; ++n) {
        o_[m][n][0] *= alpha_lo;
        o_[m][n][1] *= alpha_lo;
        o_[m][n][2] *= alpha_hi;
        o_[m][n][3] *= alpha_hi;
      }
    }
    // One pass per part keeps a single set of P fragments live (registers are tight at
    // HT = 64); V is read from shared memory once per part.
    accumulate_part(k_tile, p_s_);
    accumulate_part(k_tile, p_lo_s_);
  }

  // O += P·V for one bf16 part P [HT][PS] of the step's weights.
  __device__ void accumulate_part(const uint16_t* k_tile, const uint16_t* p_part) {
    uint32_t a[MT][4];
#pragma unroll
    for (int m = 0; m < MT; ++m) {
      ptx::ldmatrix_x4(a[m], p_part + (m * 16 + lane_ % 16) * C::PS + (lane_ / 16) * 8);
    }
    const uint16_t* v_row = k_tile + (lane_ % 8 + ((lane_ / 8) % 2) * 8) * C::KS +
                            warp_ * C::DV_PER_WARP + (lane_ / 16) * 8;
#pragma unroll
    for (int j = 0; j < C::DV_TILES / 2; ++j) {
      uint32_t b4[4];
      ptx::ldmatrix_x4_trans(b4, v_row + 16 * j);
      const uint32_t b_lo[2] = {b4[0], b4[1]};
      const uint32_t b_hi[2] = {b4[2], b4[3]};
#pragma unroll
      for (int m = 0; m < MT; ++m) {
        ptx::mma_m16n8k16_bf16_f32(o_[m][2 * j], a[m], b_lo);
        ptx::mma_m16n8k16_bf16_f32(o_[m][2 * j + 1], a[m], b_hi);
      }
    }
  }

  // O^T [d_v, 8] = alpha * O^T + V^T·(P_hi + P_lo)^T for this warp's d_v rows. The A
  // fragment (V^T) is read once for both parts; B (P^T) is P [8 heads][PS] read as stored.
  __device__ void accumulate_transposed(const uint16_t* k_tile) {
    const int h = 2 * (lane_ % 4);  // heads of fragment columns 0 / 1
    const float alpha0 = alpha_s_[h];
    const float alpha1 = alpha_s_[h + 1];
#pragma unroll
    for (int t = 0; t < C::O_M; ++t) {
      o_[t][0][0] *= alpha0;
      o_[t][0][1] *= alpha1;
      o_[t][0][2] *= alpha0;
      o_[t][0][3] *= alpha1;
    }
    const int p_off = (lane_ % 8) * C::PS + ((lane_ / 8) % 2) * 8;
    // .trans matrices (KV rows / d_v): 0 = 0-7 / +0, 1 = 0-7 / +8, 2 = 8-15 / +0, 3 = 8-15 / +8
    const uint16_t* v_row = k_tile + (lane_ % 8 + (lane_ / 16) * 8) * C::KS +
                            warp_ * C::DV_PER_WARP + ((lane_ / 8) % 2) * 8;
#pragma unroll
    for (int k = 0; k < C::BN / 16; ++k) {
      uint32_t b_hi[2];
      uint32_t b_lo[2];
      ptx::ldmatrix_x2(b_hi, p_s_ + p_off + 16 * k);
      ptx::ldmatrix_x2(b_lo, p_lo_s_ + p_off + 16 * k);
#pragma unroll
      for (int t = 0; t < C::O_M; ++t) {
        uint32_t a[4];
        ptx::ldmatrix_x4_trans(a, v_row + 16 * k * C::KS + 16 * t);
        ptx::mma_m16n8k16_bf16_f32(o_[t][0], a, b_hi);
        ptx::mma_m16n8k16_bf16_f32(o_[t][0], a, b_lo);
      }
    }
  }

  // Normalizes O and writes the item's results (SPEC §1 for the final form; the split form
  // leaves the sink to the combine kernel).
  __device__ void finish(int token, int head0, int segment) {
    if (tid_ % C::TPR == 0) {
      const int r = tid_ / C::TPR;
      const int h = head0 + r;
      const bool empty = row_m_ == -INFINITY;
      const float lse = empty ? INFINITY : (row_m_ + log2f(row_l_)) * kLn2;
      const float max_logit = empty ? -INFINITY : row_m_ * kLn2;
      float f = 1.0f;
      if (segment < 0 && p_.sink != nullptr && !empty && h < p_.h_q) {
        f = 1.0f / (1.0f + expf(p_.sink[h * p_.sink_stride] - lse));
      }
      row_scale_s_[r] = empty ? 0.0f : f / row_l_;
      if (h < p_.h_q) {
        if (segment >= 0) {
          p_.part_lse[int64_t{segment} * p_.h_q + h] = lse;
          p_.part_max[int64_t{segment} * p_.h_q + h] = max_logit;
        } else {
          if (p_.lse) p_.lse[token * p_.lse_stride_t + h * p_.lse_stride_h] = lse;
          if (p_.max_logits) {
            p_.max_logits[token * p_.max_stride_t + h * p_.max_stride_h] = max_logit;
          }
        }
      }
    }
    __syncthreads();
    if constexpr (C::TRANSPOSED) {
      store_transposed(token, head0, segment);
    } else {
      store_heads(token, head0, segment);
    }
  }

  // The O fragments: rows are heads, two adjacent d_v columns per store.
  __device__ void store_heads(int token, int head0, int segment) {
    const int g = lane_ / 4;
#pragma unroll
    for (int m = 0; m < MT; ++m) {
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int r = m * 16 + g + 8 * half;
        const int h = head0 + r;
        if (h >= p_.h_q) continue;
        const float scale = row_scale_s_[r];
#pragma unroll
        for (int n = 0; n < C::DV_TILES; ++n) {
          const int col = warp_ * C::DV_PER_WARP + n * 8 + 2 * (lane_ % 4);
          const float x = o_[m][n][2 * half] * scale;
          const float y = o_[m][n][2 * half + 1] * scale;
          if (segment >= 0) {
            float* dst = p_.part_out + (int64_t{segment} * p_.h_q + h) * C::DV + col;
            *reinterpret_cast<float2*>(dst) = make_float2(x, y);
          } else {
            uint16_t* dst = p_.out + token * p_.out_stride_t + h * p_.out_stride_h + col;
            *reinterpret_cast<uint32_t*>(dst) = ptx::float2_to_bf16x2_rn(x, y);
          }
        }
      }
    }
  }

  // The O^T fragments: element (d_v row, head) per value, so every store is one value.
  __device__ void store_transposed(int token, int head0, int segment) {
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      const int r = 2 * (lane_ % 4) + j;
      const int h = head0 + r;
      if (h >= p_.h_q) continue;
      const float scale = row_scale_s_[r];
#pragma unroll
      for (int t = 0; t < C::O_M; ++t) {
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          const int col = warp_ * C::DV_PER_WARP + t * 16 + lane_ / 4 + 8 * half;
          const float x = o_[t][0][2 * half + j] * scale;
          if (segment >= 0) {
            p_.part_out[(int64_t{segment} * p_.h_q + h) * C::DV + col] = x;
          } else {
            p_.out[token * p_.out_stride_t + h * p_.out_stride_h + col] =
                fmt::float_to_bf16_rne(x);
          }
        }
      }
    }
  }

  const AttendParams& p_;
  uint16_t* q_s_;        // [HT][QS] bf16
  uint8_t* ring_;        // [STAGES][BN] rows of RING_ROW_BYTES
  uint16_t* tile_s_;     // [BN][KS] bf16 (quantized formats)
  float* s_part_;        // [KSPLIT][HT][BN] f32
  uint16_t* p_s_;        // [HT][PS] bf16: P rounded to bf16
  uint16_t* p_lo_s_;     // [HT][PS] bf16: P - p_s_, rounded to bf16
  float* alpha_s_;       // [HT]
  float* row_scale_s_;   // [HT]
  int32_t* valid_s_;     // [STAGES][BN]
  const int tid_;
  const int warp_;
  const int lane_;
  // O rows (m-tile, fragment row) x this warp's d_v columns; transposed: this warp's d_v
  // rows (m-tile, fragment row) x the 8 heads.
  float o_[C::O_M][C::O_N][4];
  float row_m_;  // running max of row tid / TPR (exp2 domain)
  float row_l_;  // running sum of exp2(s - row_m_)
};

// One CTA per (work unit, head tile), the head tile fastest so the CTAs of one token run
// together and share its rows in L2. A work unit is a token (one-pass) or a plan partition
// (split), whose items the CTA walks in order: segments, and the tokens inside the partition
// as whole items (partial -1).
template <class MainRows, class ExtraRows, int MT>
__global__ void __launch_bounds__(AttendConfig<MainRows, ExtraRows, MT>::THREADS, 1)
    attend_kernel(const __grid_constant__ AttendParams p) {
  using C = AttendConfig<MainRows, ExtraRows, MT>;
  ptx::allow_dependent_launch();  // a split call's combine, on sm_90+ (CombineLaunch)
  extern __shared__ __align__(16) uint8_t smem[];
  AttendCta<MainRows, ExtraRows, MT> cta(p, smem);
  const int head0 = static_cast<int>(blockIdx.x % p.head_tiles) * C::HT;
  const int unit = static_cast<int>(blockIdx.x / p.head_tiles);
  if (p.plan.segments == nullptr) {
    const int n = used_entries(p.main_sel, p.extra_sel, unit);
    cta.run_item(unit, head0, 0, n, -1);
    return;
  }
  const int end = p.plan.part_seg_begin[unit + 1];
  for (int s = p.plan.part_seg_begin[unit]; s < end; ++s) {
    const Segment seg = p.plan.segments[s];
    cta.run_item(seg.token, head0, seg.lo, seg.hi, seg.partial);
  }
}

template <class MainRows, class ExtraRows, int MT>
Status launch_attend(const AttendParams& p, int units, cudaStream_t stream) {
  using C = AttendConfig<MainRows, ExtraRows, MT>;
  const auto kernel = attend_kernel<MainRows, ExtraRows, MT>;
  SMLA_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     C::SMEM_BYTES),
                "attend", "cudaFuncSetAttribute(attend_kernel)");
  const int64_t ctas = int64_t{units} * p.head_tiles;
  kernel<<<static_cast<unsigned>(ctas), C::THREADS, C::SMEM_BYTES, stream>>>(p);
  return cuda_backend::launch_status("attend", "attend_kernel");
}

// The table entry of one (main, extra) pair: its four head tiles (8 transposed, 16, 32, 64).
template <class MainRows, class ExtraRows>
AttendVariant make_attend_variant() {
  return AttendVariant{
      {&launch_attend<MainRows, ExtraRows, 0>, &launch_attend<MainRows, ExtraRows, 1>,
       &launch_attend<MainRows, ExtraRows, 2>, &launch_attend<MainRows, ExtraRows, 4>},
      {AttendConfig<MainRows, ExtraRows, 0>::SMEM_BYTES,
       AttendConfig<MainRows, ExtraRows, 1>::SMEM_BYTES,
       AttendConfig<MainRows, ExtraRows, 2>::SMEM_BYTES,
       AttendConfig<MainRows, ExtraRows, 4>::SMEM_BYTES}};
}

}  // namespace smla::portable
