// Online-softmax steps on wgmma accumulator fragments, shared by the two Hopper attention
// kernels. An m64nN f32 fragment (ptx/wgmma.cuh) gives a thread rows row0 and row0 + 8 and,
// for 8-column block j, registers 4j + 2h + e at row row0 + 8h, column 8j + 2 (lane % 4) + e.
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

#include "cuda/hopper/p_rounding.hpp"
#include "cuda/ptx/convert.cuh"
#include "cuda/ptx/fast_math.cuh"
#include "cuda/ptx/ldmatrix.cuh"  // smem_u32
#include "cuda/ptx/shared_load.cuh"
#include "cuda/ptx/stmatrix.cuh"
#include "cuda/ptx/wgmma.cuh"  // sw128_offset

namespace smla::hopper {

// A pair (x, y) of P and `packed`, the pair rounded to bf16 (ptx::float2_to_bf16x2_rn(x, y)):
// what the rounding costs, |x - bf16(x)| + |y - bf16(y)| (p_rounding.hpp), and the residual
// pair (x - bf16(x), y - bf16(y)) itself as bf16x2, the A operand of the residual product.
// Both differences are exact in f32.
__device__ __forceinline__ float bf16x2_rounding(float x, float y, uint32_t packed) {
  return fabsf(x - __uint_as_float(packed << 16)) +
         fabsf(y - __uint_as_float(packed & 0xFFFF0000u));
}
__device__ __forceinline__ uint32_t bf16x2_residual(float x, float y, uint32_t packed) {
  return ptx::float2_to_bf16x2_rn(x - __uint_as_float(packed << 16),
                                  y - __uint_as_float(packed & 0xFFFF0000u));
}

// P of an m64n64 fragment (32 f32) as the bf16x2 A fragments of P·V with A from registers:
// pa[4 kk + r] for the k16 slice kk (ptx::wgmma_m64n256k16_rs_bt).
__device__ __forceinline__ void pack_p_bf16x2(const float (&s)[32], uint32_t (&pa)[16]) {
#pragma unroll
  for (int i = 0; i < 16; ++i) pa[i] = ptx::float2_to_bf16x2_rn(s[2 * i], s[2 * i + 1]);
}

// P of J 8-column blocks of an accumulator fragment rounded to bf16 for P·V: pa[2 j + h] the
// pair of row row0 + 8 h in block j as bf16x2 (for J = 4, the A fragments of P·V with A from
// registers: pack_p_bf16x2's layout), res[2 j + h] its residual pair, and rounding[h] row h's
// sum of |p - bf16(p)| over this thread's columns (p_rounding.hpp).
template <int J>
__device__ __forceinline__ void round_p_bf16x2(const float (&p)[4 * J], uint32_t (&pa)[2 * J],
                                               uint32_t (&res)[2 * J], float (&rounding)[2]) {
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    rounding[h] = 0.0f;
#pragma unroll
    for (int j = 0; j < J; ++j) {
      const float x = p[4 * j + 2 * h];
      const float y = p[4 * j + 2 * h + 1];
      pa[2 * j + h] = ptx::float2_to_bf16x2_rn(x, y);
      rounding[h] += bf16x2_rounding(x, y, pa[2 * j + h]);
      res[2 * j + h] = bf16x2_residual(x, y, pa[2 * j + h]);
    }
  }
}

// Stores J 8-column blocks of P as bf16x2 fragments into a swizzled [64][64] bf16 tile
// (128-byte aligned), from block block0 on (a multiple of J, J a power of two):
// fragment(2 j + h) is this thread's pair of row row0 + 8 h, columns 8 (block0 + j) +
// 2 (lane % 4) + {0, 1}, an accumulator fragment's registers 4 j + 2 h and 4 j + 2 h + 1.
// Row r's 8-column group g sits at chunk g ^ (r % 8). One stmatrix per two blocks stores the
// warp's four 8x8 matrices of them (both row halves), where 4-byte stores took 16
// instructions for 8 blocks and an address each. The lane's first address is made here and
// opaque to the compiler: hoisted out of a step loop, ptxas spilled such addresses and
// reloaded them right before the stores.
template <int J, class Fragment>
__device__ __forceinline__ void store_p_blocks(uint8_t* p_tile, int block0, int row0, int lane,
                                               Fragment&& fragment) {
  static_assert(J >= 2 && (J & (J - 1)) == 0, "one stmatrix stores two 8-column blocks");
  // Lane l addresses row r = l % 8 of matrix l / 8: row half (l / 8) % 2 of block
  // block0 + 2 k + l / 16, at chunk (block0 + 2 k + l / 16) ^ r = block0 ^ 2 k ^ (l / 16) ^ r
  // (the three terms share no bits), so the k-th address is the first one ^ 32 k.
  const int row = row0 - lane / 4 + 8 * ((lane / 8) % 2) + lane % 8;
  const uint32_t addr0 =
      ptx::opaque(ptx::smem_u32(p_tile) + ptx::sw128_offset(row, 8 * (block0 + lane / 16)));
#pragma unroll
  for (int k = 0; k < J / 2; ++k) {
    ptx::stmatrix_x4(addr0 ^ (32 * k), fragment(4 * k), fragment(4 * k + 1),
                     fragment(4 * k + 2), fragment(4 * k + 3));
  }
}

// Scales S (J blocks of 8 columns) to the exp2 domain, -inf where valid[column] is 0 (valid
// points at the fragment's column 0: bytes, or the block-pair kernel's row words), and
// returns each row's maximum over all four lanes of its quad. With `all_valid` (a constant
// where the caller branches on it) nothing is masked and `valid` is not read.
template <int J, class Flag>
__device__ __forceinline__ void mask_and_row_max(float (&s)[4 * J], const Flag* valid,
                                                 int lane, float scale_log2, float (&mx)[2],
                                                 bool all_valid = false) {
  mx[0] = mx[1] = -INFINITY;
#pragma unroll
  for (int j = 0; j < J; ++j) {
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const bool ok = all_valid || valid[8 * j + 2 * (lane % 4) + e] != 0;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        float& v = s[4 * j + 2 * h + e];
        v = ok ? v * scale_log2 : -INFINITY;
        mx[h] = fmaxf(mx[h], v);
      }
    }
  }
  // A butterfly: each step must see the previous one's result.
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 1));
    mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 2));
  }
}

// Multiplies the rows of an accumulator fragment by alpha[0] and alpha[1]; a whole warp skips
// it when none of its rows `moved` (the usual case once the maxima settle).
template <int N>
__device__ __forceinline__ void scale_rows(float (&o)[N], const float (&alpha)[2], bool moved) {
  if (!__any_sync(0xffffffffu, moved)) return;
#pragma unroll
  for (int j = 0; j < N / 4; ++j) {
    o[4 * j + 0] *= alpha[0];
    o[4 * j + 1] *= alpha[0];
    o[4 * j + 2] *= alpha[1];
    o[4 * j + 3] *= alpha[1];
  }
}

// The largest |V| over K 16-byte chunks of bf16 at `first`, `first` + 16 STRIDE, ... (one
// thread's share of a scan that spreads consecutive chunks over STRIDE threads: no bank
// conflicts), as bf16 magnitude bits (a NaN above every number).
template <int K, int STRIDE>
__device__ __forceinline__ uint32_t max_abs_bf16_bits(const uint8_t* first) {
  uint32_t a = 0, b = 0;  // the largest magnitudes seen, bf16x2 (sign bits meaningless)
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const uint4 v = ptx::ld_shared_u4(first + 16 * STRIDE * k);
    a = ptx::max_abs_bf16x2(a, v.x);
    b = ptx::max_abs_bf16x2(b, v.y);
    a = ptx::max_abs_bf16x2(a, v.z);
    b = ptx::max_abs_bf16x2(b, v.w);
  }
  return ptx::bf16x2_magnitude_bits(ptx::max_abs_bf16x2(a, b));
}

// The reference maximum of a row whose largest score so far is `top` (exp2 domain): top
// rounded up to an integer. P = exp2(s - m) stays in (0, 1] with its largest value above 1/2,
// as with m = top, but m moves only when a score crosses the next integer: once a row's
// scores settle, a step's rescaling of O, l and P (which a new maximum costs) is skipped, and
// each rescaling multiplies by a power of two. -inf (nothing valid yet) stays -inf.
__device__ __forceinline__ float reference_max(float top) { return ceilf(top); }

// What a row's P = exp2(s - m) subtracts: m, or 0 while the row has seen nothing valid (m =
// -inf), where every s is -inf too and exp2(-inf) is 0. One select per row: a select per
// element (`none ? 0 : exp2(s - m)`) made ptxas write each zero by an instruction of its own
// beside a predicated MUFU, 32 a block-pair step. The block-pair kernel uses it (the prefill
// rows ~1% faster); the decode kernels keep the select per element: without it, 16
// instructions fewer a step, their fp8_v32 h_q = 128 top-k 16384 row was 1.6-1.8% slower in
// two rounds (perf-notes ledger s63).
__device__ __forceinline__ float exp2_offset(float m) { return m == -INFINITY ? 0.0f : m; }

// A consumer thread's online-softmax state over one work item: its O fragment (m64n256: its
// consumer's 256 columns of d_v), the largest scores of its two rows (exp2 domain; O, l and the
// rounding sums are relative to their reference_max, derived where needed rather than kept:
// registers are what the step loops run short of), its share of their sums, and per d_v half
// and row its P-rounding bound (p_rounding.hpp).
struct OnlineSoftmaxRows {
  __device__ void start_item() {
#pragma unroll
    for (int i = 0; i < 128; ++i) o_[i] = 0.0f;
    top_[0] = top_[1] = -INFINITY;
    l_[0] = l_[1] = 0.0f;
    err_[0][0] = err_[0][1] = err_[1][0] = err_[1][1] = 0.0f;
  }

  // One online-softmax step over this thread's J 8-column blocks of S (exp2 domain, masked)
  // whose rows' maxima over the whole step are step_max: raises the largest scores
  // (raise_row's alpha, and whether a row moved), turns s into P = exp2(s - reference max)
  // in place (zeros while a row has nothing valid) and adds this thread's P to its share of l.
  template <int J>
  __device__ bool softmax_step(float (&s)[4 * J], const float (&step_max)[2],
                               float (&alpha)[2]) {
    bool moved = false;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      moved |= raise_row(h, fmaxf(top_[h], step_max[h]), alpha[h]);
      const float m_new = reference_max(top_[h]);
      const bool none = m_new == -INFINITY;  // nothing valid yet: everything stays zero
      float sum = 0.0f;
#pragma unroll
      for (int j = 0; j < J; ++j) {
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          float& v = s[4 * j + 2 * h + e];
          v = none ? 0.0f : ptx::ex2_approx(v - m_new);
          sum += v;
        }
      }
      l_[h] = l_[h] * alpha[h] + sum;
    }
    return moved;
  }

  // This thread's side of a step's P-rounding verdict (p_rounding.hpp), l_ already taking the
  // step: from `rounding`, this thread's sums of |p - bf16(p)| per row (round_p_bf16x2), in
  // err_new[c][h] the rounding bound of d_v half c and row h if the step keeps P's bf16
  // rounding (v_bound: the step's |V| bound per d_v half), and whether any of them leaves its
  // budget.
  __device__ bool rounding_over_budget(const float (&rounding)[2], const float (&alpha)[2],
                                       const float (&v_bound)[2], float (&err_new)[2][2]) const {
    bool over = false;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
#pragma unroll
      for (int c = 0; c < 2; ++c) {
        err_new[c][h] = err_[c][h] * alpha[h] + rounding[h] * v_bound[c];
        over |= !within_rounding_budget(err_new[c][h], l_[h]);
      }
    }
    return over;
  }

  // After the verdict: the bounds with the step's rounding (err_new), or, when the step also
  // adds the residual (which undoes that rounding), the old bounds rescaled.
  __device__ void settle_rounding(bool residual, const float (&alpha)[2],
                                  const float (&err_new)[2][2]) {
#pragma unroll
    for (int c = 0; c < 2; ++c) {
#pragma unroll
      for (int h = 0; h < 2; ++h) err_[c][h] = residual ? err_[c][h] * alpha[h] : err_new[c][h];
    }
  }

  // Raises row h's largest score to new_top (no lower than top_[h]); alpha takes O, l and
  // the rounding bounds from the old reference maximum to the new one (1 where it did not
  // move). Returns whether the reference moved.
  __device__ bool raise_row(int h, float new_top, float& alpha) {
    const float m_old = reference_max(top_[h]);
    top_[h] = new_top;
    const float m_new = reference_max(top_[h]);
    alpha = m_new == m_old ? 1.0f : ptx::ex2_approx(m_old - m_new);
    return m_new != m_old;
  }

  float o_[128];
  float top_[2];
  float l_[2];
  float err_[2][2];  // [d_v half][row] (the block-pair kernel: [own half, other half][row])
};

}  // namespace smla::hopper
