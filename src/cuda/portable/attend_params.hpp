// The parameters of the portable attention kernel and the byte layout of its split-KV plan.
// Host-side code fills them from validated AttendArgs (portable_attention.cu); kernels take
// them by value as __grid_constant__. Strides are in elements unless named *_bytes.
#pragma once

#include <cstdint>

namespace smla::portable {

// A pool as the kernels see it (smla::KvPool minus the host-only fields).
struct PoolView {
  const uint8_t* data = nullptr;    // block b at data + b * block_stride
  // int8_ds_mla split form: block b at scales + b * scale_block_stride
  const uint8_t* scales = nullptr;
  int64_t block_stride = 0;         // bytes
  int64_t scale_block_stride = 0;   // bytes
  int64_t slots = 0;                // valid slot ids are [0, slots)
  int32_t block_size = 1;
};

// One selection list per token: slot ids idx[t * idx_stride + j] for j < min(len[t], k)
// (len absent: k). Shared by the main and the extra pool.
struct SelectionView {
  const int32_t* idx = nullptr;  // [T, k] (row stride idx_stride, unit column stride)
  int64_t idx_stride = 0;
  const int32_t* len = nullptr;  // optional [T] (stride len_stride)
  int64_t len_stride = 0;
  int32_t k = 0;                 // 0: no list (no extra pool)
};

// The number of entries of token t's list that are in use: min(len[t], k), at least 0.
#if defined(__CUDACC__)
__host__ __device__
#endif
inline int32_t used_entries(const SelectionView& s, int64_t t) {
  if (s.len == nullptr) return s.k;
  const int32_t len = s.len[t * s.len_stride];
  return len < 0 ? 0 : (len < s.k ? len : s.k);
}

// The entries of token t's concatenated list in use: its main list's, then its extra list's.
#if defined(__CUDACC__)
__host__ __device__
#endif
inline int32_t used_entries(const SelectionView& main, const SelectionView& extra, int64_t t) {
  return used_entries(main, t) + used_entries(extra, t);
}

// A work item of a split launch: entries [lo, hi) of token `token`'s concatenated list (main
// entries first, then extra entries). Its result is row `partial` of the f32 partials, or,
// with partial = -1, the token's final outputs (the item is the whole token).
struct Segment {
  int32_t token;
  int32_t lo;
  int32_t hi;
  int32_t partial;
};

// The plan buffer: int32 words, laid out by PlanLayout. Every array is written by the plan
// kernel on the device; the host only knows the sizes.
//
// The first whole_rounds * P tokens run whole (the Hopper path's rounds-and-tail schedule;
// whole_rounds is 0 everywhere else): token t is one item of partition t % P, with no partial,
// and a partition's whole tokens come before its segments of the split tokens, the rest.
struct PlanLayout {
  int64_t tokens = 0;        // T
  int64_t partitions = 0;    // P: work units per head tile, from the SM count (no grid sync)
  int64_t whole_rounds = 0;  // whole tokens per partition
  int64_t spread = 0;        // partitions that get the split tokens' entries (<= P), the rest none

  int64_t first_split() const { return whole_rounds * partitions; }
  int64_t split_tokens() const { return tokens - first_split(); }   // S
  int64_t max_partials() const { return split_tokens() + spread; }  // each boundary splits once
  int64_t max_segments() const { return first_split() + max_partials(); }
  // [P + 1] items of partition p are segments [part_seg_begin[p], part_seg_begin[p + 1])
  int64_t part_seg_begin_offset() const { return 0; }
  // [S + 1] split token first_split() + i has rows [token_seg_begin[i], [i + 1]): its
  // segments' partials, or, with one row (a token inside one partition), none: that row is
  // unused and the token runs whole (plan_kernel.cu)
  int64_t token_seg_begin_offset() const { return partitions + 1; }
  // [S + 1] exclusive prefix sum of the split tokens' entry counts (the plan kernel's scratch)
  int64_t work_prefix_offset() const { return token_seg_begin_offset() + split_tokens() + 1; }
  // [max_segments] Segment, 16 B-aligned
  int64_t segments_offset() const {
    return (work_prefix_offset() + split_tokens() + 1 + 3) / 4 * 4;
  }
  int64_t bytes() const { return 4 * (segments_offset() + 4 * max_segments()); }
};

// Device pointers into a plan buffer.
struct PlanView {
  const int32_t* part_seg_begin = nullptr;   // [P + 1]
  const int32_t* token_seg_begin = nullptr;  // [S + 1]
  const Segment* segments = nullptr;         // [max_segments]
};

struct AttendParams {
  const uint16_t* q = nullptr;  // [T, h_q, d_qk] bf16
  int64_t q_stride_t = 0;
  int64_t q_stride_h = 0;
  PoolView main;
  PoolView extra;
  SelectionView main_sel;
  SelectionView extra_sel;  // k == 0 without an extra pool
  const float* sink = nullptr;  // optional [h_q]
  int64_t sink_stride = 0;
  int32_t tokens = 0;
  int32_t h_q = 0;
  int32_t head_tiles = 0;  // ceil(h_q / HT)
  float scale_log2 = 0;    // scale * log2(e): scores live in the exp2 domain
  // Hopper block-pair kernel only: per slot of each pool its |V| bounds (hopper/v_bounds.hpp),
  // or null, and the kernel scans V in shared memory instead. Both or neither.
  const uint32_t* main_v_bounds = nullptr;
  const uint32_t* extra_v_bounds = nullptr;

  // One-pass strategy (plan.segments == nullptr): the final outputs.
  uint16_t* out = nullptr;  // [T, h_q, 512] bf16
  int64_t out_stride_t = 0;
  int64_t out_stride_h = 0;
  float* lse = nullptr;  // optional [T, h_q]
  int64_t lse_stride_t = 0;
  int64_t lse_stride_h = 0;
  float* max_logits = nullptr;  // optional [T, h_q]
  int64_t max_stride_t = 0;
  int64_t max_stride_h = 0;
  // Hopper one-pass launches of several rounds: per head tile, the count of tokens taken so
  // far (zeroed before the launch; hopper/token_claims.cuh), or null, and each CTA walks
  // every units-th token. The schedule claims only over one head tile today.
  int32_t* claims = nullptr;  // [head_tiles]

  // Split strategies: the plan and the f32 partials, one row per segment of a split token (the
  // row of a token inside one partition, which runs whole, stays unused).
  PlanView plan;
  float* part_out = nullptr;  // [max_partials, h_q, 512]
  float* part_lse = nullptr;  // [max_partials, h_q] natural log, +inf: no valid entry
  float* part_max = nullptr;  // [max_partials, h_q] scaled max logit, -inf: no valid entry

  // Timeline builds (cuda/timeline.hpp): the Hopper kernels' per-CTA marks, else null.
  uint64_t* timeline = nullptr;
};

}  // namespace smla::portable
