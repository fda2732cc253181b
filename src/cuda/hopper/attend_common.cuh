// What the two Hopper attention kernels (attend_kernel.cuh, pair_kernel.cuh) share outside
// their pipelines: the work items of a CTA, the swizzled tile addressing, the Q tile load and
// the write of an item's results.
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "cuda/cuda_check.hpp"
#include "cuda/hopper/q_tile_map.hpp"
#include "cuda/hopper/softmax_fragments.cuh"
#include "cuda/hopper/tile_layout.cuh"
#include "cuda/hopper/token_claims.cuh"
#include "cuda/portable/attend_params.hpp"
#include "cuda/ptx/convert.cuh"
#include "cuda/ptx/cp_async.cuh"
#include "cuda/ptx/l2_policy.cuh"
#include "cuda/ptx/mbarrier.cuh"
#include "cuda/ptx/tma.cuh"
#include "cuda/ptx/warpgroup.cuh"
#include "cuda/ptx/wgmma.cuh"
#include "cuda/timeline.hpp"

namespace smla::hopper {

using portable::AttendParams;
using portable::SelectionView;
using portable::Segment;
using portable::used_entries;

inline constexpr float kLn2 = 0.6931471805599453f;
inline constexpr int kHeadTile = 64;  // query heads per CTA: the M of one wgmma
inline constexpr int kDv = 512;

// The entries [lo, hi) of a token's concatenated list split into its main and extra ranges.
struct ItemRanges {
  int main_lo, main_hi, extra_lo, extra_hi;
  __device__ ItemRanges(const AttendParams& p, int token, int lo, int hi) {
    const int n_main = used_entries(p.main_sel, token);
    main_lo = lo;
    main_hi = min(hi, n_main);
    extra_lo = max(lo, n_main) - n_main;
    extra_hi = hi - n_main;
  }
  template <int BN>
  __device__ static int steps(int lo, int hi) {
    return lo < hi ? (hi - lo + BN - 1) / BN : 0;
  }
  // The steps of both ranges: each range starts a step of its own.
  template <int BN>
  __device__ int total_steps() const {
    return steps<BN>(main_lo, main_hi) + steps<BN>(extra_lo, extra_hi);
  }
};

// The first query head of this CTA's head tile: head tile blockIdx.x % head_tiles (the head tile
// fastest, so the CTAs of one token run together and share its rows in L2). Fixed for the
// CTA's life.
__device__ __forceinline__ int cta_head0(const AttendParams& p) {
  return static_cast<int>(blockIdx.x % p.head_tiles) * kHeadTile;
}

// Calls f(token, lo, hi, partial) for each work item of CTA unit `unit` of `units`, in order:
// one pass, the tokens it claims (p.claims) or the tokens unit, unit + units, ... (a grid of at
// most one CTA per SM walks the tokens, so the producer loads the next token's Q and first
// rows while the consumers finish the last one); else the items of plan partition `unit`
// (split, rounds and tail: whole tokens, partial -1, then segments of the split tokens).
// Every thread of the CTA calls it (the claims' hand-over waits for all of them).
template <class F>
__device__ __forceinline__ void for_each_item(const AttendParams& p, int unit, int units, F&& f) {
  if (p.plan.segments == nullptr) {
    // One counter across the items, the claims made or the token: the roles' loops spill
    // with every register held across them.
    const bool claimed = p.claims != nullptr;
#pragma unroll 1
    for (int c = claimed ? 0 : unit;; c += claimed ? 1 : units) {
      const int t = claimed ? ClaimQueue::claim(p, c) : c;
      if (t >= p.tokens) return;
      f(t, 0, used_entries(p.main_sel, p.extra_sel, t), -1);
    }
  }
  const int end = p.plan.part_seg_begin[unit + 1];
  for (int s = p.plan.part_seg_begin[unit]; s < end; ++s) {
    const Segment seg = p.plan.segments[s];
    f(seg.token, seg.lo, seg.hi, seg.partial);
  }
}

// Runs a warpgroup role over this CTA's work items: role.run_item(token, head0, lo, hi,
// segment) per item of unit blockIdx.x / head_tiles (for_each_item). Every thread of the CTA
// runs it. Thread 0 is the producer's first, thread 128 consumer 0's: they mark the roles'
// timeline points.
template <class Role>
__device__ __forceinline__ void run_items(const AttendParams& p, Role& role) {
  const int head0 = cta_head0(p);
  const int unit = static_cast<int>(blockIdx.x / p.head_tiles);
  const int units = static_cast<int>(gridDim.x / p.head_tiles);
  bool first = true;
  for_each_item(p, unit, units, [&](int token, int lo, int hi, int segment) {
    timeline::mark(p.timeline, timeline::kProducerStart, first && threadIdx.x == 0);
    first = false;
    role.run_item(token, head0, lo, hi, segment);
  });
  timeline::mark(p.timeline, timeline::kProducerDone, threadIdx.x == 0);
  timeline::mark_with_cycles(p.timeline, timeline::kConsumerDone, timeline::kDoneCycles,
                             threadIdx.x == 128);
}

// Called by every consumer thread when it starts: copies the sink values of the CTA's head tile
// into tile_sink ([64] f32 of shared memory), one writer per head (the quad leaders of
// consumer 0), so that an item's results do not end on a global load that misses every cache
// (3% of all stall samples of a 10-step decode call, profiled). write_item_results reads them
// after its first named barrier, which each writer passes after its write. Every launch
// copies them: a split launch runs whole the tokens that lie inside one partition
// (plan_kernel.cu).
__device__ inline void stage_tile_sinks(const AttendParams& p, float* tile_sink, int half,
                                        int lane, int row0) {
  if (p.sink == nullptr || half != 0 || lane % 4 != 0) return;
  const int head0 = cta_head0(p);
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int head = head0 + row0 + 8 * h;
    tile_sink[row0 + 8 * h] = head < p.h_q ? p.sink[head * p.sink_stride] : 0.0f;
  }
}

// Warp `warp` (0..3) of the producer issues the cp.async copies of Q rows head0 + 16 warp +
// [0, 16) of `token` (zeros past h_q) into the swizzled [64][8 CHUNKS] tile at `q_tile`.
template <int CHUNKS>
__device__ void copy_q_tile(const AttendParams& p, uint8_t* q_tile, int token, int head0,
                            int warp, int lane) {
  const uint16_t* q_token = p.q + token * p.q_stride_t;
#pragma unroll 1
  for (int rr = 0; rr < 16; ++rr) {
    const int row = warp * 16 + rr;
    const bool valid = head0 + row < p.h_q;
    const uint16_t* src = valid ? q_token + (head0 + row) * p.q_stride_h : p.q;
#pragma unroll
    for (int chunk = lane; chunk < CHUNKS; chunk += 32) {
      ptx::cp_async_cg_16_zfill(q_tile + tile_chunk_offset(row, chunk),
                                valid ? src + 8 * chunk : src, valid);
    }
  }
}

// Called by the 128 producer threads: Q rows head0 + [0, 64) of `token` (zeros past h_q) into
// the swizzled [64][8 CHUNKS] tile at `q_tile`, completing `q_full` (128 arrivals) once they
// have landed; no thread waits for them. By TMA, one box per 64-column block issued by one
// thread, when the map describes q; else by every thread's cp.async. Either way the consumers
// fence after their wait (the cp.async writes are not the async proxy's). kReadOnce: the
// kernel reads most tokens' rows in one item only (the block-pair kernel, whose split tokens are
// its last round's few), so the TMA copies mark their L2 lines evict-first.
template <int CHUNKS, bool kReadOnce>
__device__ void issue_q_tile(const AttendParams& p, const QTileMap& q_map, uint8_t* q_tile,
                             uint64_t* q_full, int token, int head0, int warp, int lane) {
  if (q_map.by_tma != 0) {
    if (warp == 0 && lane == 0) {
      constexpr int kBlocks = CHUNKS / 8;
      ptx::mbarrier_arrive_expect_tx(q_full, kBlocks * 64 * 128);
#pragma unroll
      for (int kb = 0; kb < kBlocks; ++kb) {
        uint8_t* dst = q_tile + kb * 64 * 128;
        if constexpr (kReadOnce) {
          ptx::tma_load_3d_with_policy(dst, &q_map.map, 64 * kb, head0, token, q_full,
                                       ptx::l2_evict_first_policy());
        } else {
          ptx::tma_load_3d(dst, &q_map.map, 64 * kb, head0, token, q_full);
        }
      }
    } else {
      ptx::mbarrier_arrive(q_full);
    }
    return;
  }
  copy_q_tile<CHUNKS>(p, q_tile, token, head0, warp, lane);
  ptx::cp_async_mbarrier_arrive(q_full);
  ptx::mbarrier_arrive(q_full);
}

// The four lanes of a quad (lane % 4 = q) hold eight consecutive bf16 columns of an output row
// per j, two each (the wgmma accumulator layout: lane q has columns 8 j + 2 q and + 1). From
// a lane's packed pairs v[i] of j = 4 k + i (i = 0..3), returns all eight columns of j = 4 k +
// q: two exchanges (xor 1, then xor 2) buy one 16-byte store per lane instead of four 4-byte
// ones. Every lane of the warp must call it.
__device__ __forceinline__ uint4 quad_columns_of_j(const uint32_t (&v)[4], int q) {
  constexpr unsigned kFullWarp = 0xffffffffu;
  const bool odd = (q & 1) != 0;
  const bool upper = (q & 2) != 0;
  // pair[m]: columns 4 (q / 2) .. + 3 of j = 2 m + q % 2, after the exchange with lane q ^ 1.
  uint32_t pair[2][2];
#pragma unroll
  for (int m = 0; m < 2; ++m) {
    const uint32_t got = __shfl_xor_sync(kFullWarp, odd ? v[2 * m] : v[2 * m + 1], 1);
    pair[m][0] = odd ? got : v[2 * m];
    pair[m][1] = odd ? v[2 * m + 1] : got;
  }
  // Lanes 0, 1 keep columns 0..3 of their j and take 4..7 from lane q ^ 2; lanes 2, 3 the other
  // way round.
  const uint32_t got0 = __shfl_xor_sync(kFullWarp, upper ? pair[0][0] : pair[1][0], 2);
  const uint32_t got1 = __shfl_xor_sync(kFullWarp, upper ? pair[0][1] : pair[1][1], 2);
  return upper ? make_uint4(got0, got1, pair[1][0], pair[1][1])
               : make_uint4(pair[0][0], pair[0][1], got0, got1);
}

// The f32 form of quad_columns_of_j: lane q holds columns 8 j + 2 q and + 1 of each j. Of the
// pair j = 2 m (even_j) and j = 2 m + 1 (odd_j), returns lane q's four consecutive columns
// 8 j + 2 (q & 2) .. + 3 of j = 2 m + q % 2, its own two and lane q ^ 1's: one exchange buys
// one 16-byte store per lane instead of two 8-byte ones. Every lane of the warp must call it.
__device__ __forceinline__ float4 quad_float4_of_pair(float2 even_j, float2 odd_j, int q) {
  constexpr unsigned kFullWarp = 0xffffffffu;
  const bool odd = (q & 1) != 0;
  const float2 give = odd ? even_j : odd_j;
  const float got_x = __shfl_xor_sync(kFullWarp, give.x, 1);
  const float got_y = __shfl_xor_sync(kFullWarp, give.y, 1);
  return odd ? make_float4(got_x, got_y, odd_j.x, odd_j.y)
             : make_float4(even_j.x, even_j.y, got_x, got_y);
}

// Normalizes an item's O and writes its results (SPEC §1 for the final form; the split form
// leaves the sink to the combine kernel). Called by the 256 consumer threads: consumer `half`
// holds O[:, 256 half : 256 half + 256] (wgmma m64n256 fragment), its thread's rows row0 and
// row0 + 8 with largest score top (exp2 domain, equal in both consumers: O and l are relative
// to its reference_max) and this thread's share l_share of the softmax sum;
// row_sum is [2][64] floats of shared memory, tile_sink the head tile's sinks
// (stage_tile_sinks), barrier_id a named barrier of the 256 threads, item the CTA's item
// index (for the timeline's change-of-item points). kWidePartials: f32
// partials by 16-byte stores after an exchange, or by 8-byte ones without; measured per
// kernel (perf-notes ledger, s53): the wide form where the quantized decode kernel's producer
// bounds |V| (C::SCALE_BOUNDS: decode b = 2 7% faster), the narrow one in the fp8_ds_mla
// kernel (its top-k 16384 rows 1% slower wide, its step loop's SASS changed throughout) and in
// the block-pair kernel (its consumers spill 116 -> 140 B wide).
template <bool kWidePartials>
__device__ inline void write_item_results(const AttendParams& p, float* row_sum,
                                          const float* tile_sink, int barrier_id, int half,
                                          int lane, int row0, const float (&o)[128],
                                          const float (&top)[2], const float (&l_share)[2],
                                          int token, int head0, int segment, int item) {
  timeline::mark(p.timeline, timeline::kResultsBegin, threadIdx.x == 128);
  timeline::mark_item_change(p.timeline, timeline::kChangeResultsBegin, item,
                             threadIdx.x == 128);
  timeline::mark(p.timeline, timeline::kConsumer1Results, threadIdx.x == 256);
  float row_l[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    float l = l_share[h];
    l += __shfl_xor_sync(0xffffffffu, l, 1);
    l += __shfl_xor_sync(0xffffffffu, l, 2);
    if (lane % 4 == 0) row_sum[half * kHeadTile + row0 + 8 * h] = l;
  }
  ptx::named_barrier_sync(barrier_id, 2 * 128);
  timeline::mark(p.timeline, timeline::kResultsSumsShared, threadIdx.x == 128);
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int row = row0 + 8 * h;
    row_l[h] = row_sum[row] + row_sum[kHeadTile + row];
  }
  // The row sums are read: the next item may overwrite them.
  ptx::named_barrier_sync(barrier_id, 2 * 128);

  const int q = lane % 4;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int head = head0 + row0 + 8 * h;
    // The same for the four lanes of a quad; a row past h_q still joins the exchanges below.
    const bool in_range = head < p.h_q;
    const bool empty = top[h] == -INFINITY;
    const float lse = empty ? INFINITY : (reference_max(top[h]) + log2f(row_l[h])) * kLn2;
    float f = 1.0f;
    if (segment < 0 && p.sink != nullptr && !empty) {
      f = 1.0f / (1.0f + expf(tile_sink[row0 + 8 * h] - lse));
    }
    const float scale = empty ? 0.0f : f / row_l[h];
    if (in_range && half == 0 && q == 0) {
      if (segment >= 0) {
        p.part_lse[int64_t{segment} * p.h_q + head] = lse;
        p.part_max[int64_t{segment} * p.h_q + head] = empty ? -INFINITY : top[h] * kLn2;
      } else {
        if (p.lse) p.lse[token * p.lse_stride_t + head * p.lse_stride_h] = lse;
        if (p.max_logits) {
          p.max_logits[token * p.max_stride_t + head * p.max_stride_h] =
              empty ? -INFINITY : top[h] * kLn2;
        }
      }
    }
    if (segment >= 0) {
      if constexpr (kWidePartials) {
        // 16 bytes a lane (quad_float4_of_pair): a warp's store fills 64 bytes of each of its
        // eight rows where float2 stores fill 32, half the stores and L2 requests of a burst
        // that at decode b = 2 every CTA writes at once (perf-notes ledger, s53).
        float* dst = p.part_out + (int64_t{segment} * p.h_q + head) * kDv + half * (kDv / 2) +
                     8 * (q & 1) + 2 * (q & 2);
#pragma unroll
        for (int m = 0; m < 16; ++m) {
          const float4 cols = quad_float4_of_pair(
              make_float2(o[8 * m + 2 * h] * scale, o[8 * m + 2 * h + 1] * scale),
              make_float2(o[8 * m + 4 + 2 * h] * scale, o[8 * m + 4 + 2 * h + 1] * scale), q);
          if (in_range) *reinterpret_cast<float4*>(dst + 16 * m) = cols;
        }
      } else {
        // A quad's four float2 fill a 32-byte sector per j, with no exchange.
        if (!in_range) continue;
        float* dst = p.part_out + (int64_t{segment} * p.h_q + head) * kDv + half * (kDv / 2);
#pragma unroll
        for (int j = 0; j < 32; ++j) {
          *reinterpret_cast<float2*>(dst + 8 * j + 2 * q) =
              make_float2(o[4 * j + 2 * h] * scale, o[4 * j + 2 * h + 1] * scale);
        }
      }
    } else {
      // bf16: attend's checks make out rows 16-byte aligned on a CUDA device (the rows16 rule
      // of src/api/validate.cpp), so lane q stores the eight columns of j = 4 k + q at once.
      uint16_t* dst = p.out + token * p.out_stride_t + head * p.out_stride_h + half * (kDv / 2);
#pragma unroll
      for (int k = 0; k < 8; ++k) {
        uint32_t v[4];
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const int j = 4 * k + i;
          v[i] = ptx::float2_to_bf16x2_rn(o[4 * j + 2 * h] * scale, o[4 * j + 2 * h + 1] * scale);
        }
        const uint4 bits = quad_columns_of_j(v, q);
        if (in_range) *reinterpret_cast<uint4*>(dst + 8 * (4 * k + q)) = bits;
      }
    }
  }
  timeline::mark(p.timeline, timeline::kResultsWritten, threadIdx.x == 128);
  timeline::mark_item_change(p.timeline, timeline::kChangeResultsWritten, item,
                             threadIdx.x == 128);
}

// Launches an attention kernel of THREADS threads and SMEM_BYTES of dynamic shared memory
// over one CTA per (work unit, head tile), with the TMA map of q for rows of D values; `name`
// names it in errors.
template <int THREADS, int SMEM_BYTES, int D>
Status launch_attend_kernel(void (*kernel)(AttendParams, QTileMap), const char* name,
                            const AttendParams& p, int units, cudaStream_t stream) {
  // Set on every launch: a cache of it would outlive a cudaDeviceReset, which drops it.
  const cudaError_t set_smem =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES);
  if (set_smem != cudaSuccess) {  // the call site's text is built only for the error
    const std::string what = std::string("cudaFuncSetAttribute(") + name + ")";
    return cuda_backend::cuda_status(set_smem, "attend", what.c_str());
  }
  const QTileMap q_map = make_q_tile_map(p, D);
  const int64_t ctas = int64_t{units} * p.head_tiles;
  kernel<<<static_cast<unsigned>(ctas), THREADS, SMEM_BYTES, stream>>>(p, q_map);
  return cuda_backend::launch_status("attend", name);
}

}  // namespace smla::hopper
