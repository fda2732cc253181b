// The split-KV plan kernel: one block that spreads the selected entries of the split tokens
// (PlanLayout: every token, or those after the whole rounds) evenly over the first `spread`
// of the P partitions, on the stream, from the lengths alone (no host synchronization, so a
// CUDA graph can capture it).
//
// The entries of every split token, main then extra, are laid end to end: split token i owns
// positions [C_i, C_{i+1}) of [0, W) where C is the exclusive prefix sum of its used entry counts.
// Partition p owns [B_p, B_{p+1}) with B_p = floor(p * W / P'), P' = min(spread, W), so each
// partition below P' is non-empty and sizes differ by at most one; the rest are empty. A segment is
// the intersection of a token and a partition; its row is its rank in (token, partition) order,
// which is also (partition, token) order, so each token's rows are a contiguous range. A token over
// several partitions writes its segments' f32 partials to those rows for the combine kernel. A
// token inside one partition is that partition's whole item (partial -1: the attend kernel writes
// its outputs, sink included) and leaves its one row unused, which tells the combine kernel to
// leave the token alone (at h_q = 128, ~231 of the top-k 16384 decode rows' 296 tokens: ~59 of
// their ~92 MB of partials not written and read back; 0.7-1.9% of those rows on an H200). Partition
// p's items are its whole tokens (p, p + P, ..., whole_rounds of them), then its segments:
// contiguous in the segment array, whose index is the item's rank in (partition, item) order.
#include <cub/block/block_scan.cuh>

#include "cuda/cuda_check.hpp"
#include "cuda/portable/attend_params.hpp"
#include "cuda/portable/plan_kernel.hpp"

namespace smla::portable {
namespace {

constexpr int kPlanThreads = 1024;
using BlockScan = cub::BlockScan<int32_t, kPlanThreads>;

struct PlanKernelParams {
  SelectionView main_sel;
  SelectionView extra_sel;
  int32_t whole_rounds;      // whole tokens per partition
  int32_t tokens;            // S: split tokens
  int32_t partitions;        // P
  int32_t spread;            // partitions that take the split tokens' entries
  int32_t* part_seg_begin;   // [P + 1]
  int32_t* token_seg_begin;  // [S + 1]
  int32_t* work_prefix;      // [S + 1]
  Segment* segments;         // [whole_rounds * P + S + spread]
};

// The partition holding position x (0 <= x < W): the largest p with floor(p * W / P') <= x.
__device__ int32_t partition_of(int64_t x, int64_t work, int64_t parts) {
  return static_cast<int32_t>(((x + 1) * parts - 1) / work);
}

__device__ int32_t partition_begin(int64_t p, int64_t work, int64_t parts) {
  return static_cast<int32_t>(p * work / parts);
}

// out[t] = exclusive prefix sum of value(t) over t < n, out[n] = the total; returns it.
template <class Value>
__device__ int32_t block_exclusive_scan(int32_t n, int32_t* out, BlockScan::TempStorage& tmp,
                                        Value value) {
  int32_t carry = 0;
  for (int32_t base = 0; base < n; base += kPlanThreads) {
    const int32_t t = base + static_cast<int32_t>(threadIdx.x);
    int32_t prefix = 0;
    int32_t chunk_total = 0;
    BlockScan(tmp).ExclusiveSum(t < n ? value(t) : 0, prefix, chunk_total);
    if (t < n) out[t] = carry + prefix;
    carry += chunk_total;
    __syncthreads();  // tmp is reused by the next chunk
  }
  if (threadIdx.x == 0) out[n] = carry;
  __syncthreads();  // out[] (global memory) is visible to the whole block after this
  return carry;
}

__global__ void __launch_bounds__(kPlanThreads)
    plan_kernel(const __grid_constant__ PlanKernelParams p) {
  __shared__ BlockScan::TempStorage tmp;
  const int32_t first_split = p.whole_rounds * p.partitions;  // whole tokens come first
  const int32_t work = block_exclusive_scan(p.tokens, p.work_prefix, tmp, [&](int32_t i) {
    return used_entries(p.main_sel, p.extra_sel, first_split + i);
  });
  const int64_t parts = work < p.spread ? work : p.spread;  // P'

  const int32_t* c = p.work_prefix;
  const int32_t partials = block_exclusive_scan(p.tokens, p.token_seg_begin, tmp, [&](int32_t i) {
    if (c[i + 1] == c[i]) return 0;
    return partition_of(c[i + 1] - 1, work, parts) - partition_of(c[i], work, parts) + 1;
  });

  // Partition `part`'s whole tokens come before its segments, and every earlier partition's
  // items before them.
  const int32_t w = p.whole_rounds;
  for (int32_t i = threadIdx.x; i < p.tokens; i += kPlanThreads) {
    const int32_t first = p.token_seg_begin[i];
    const int32_t count = p.token_seg_begin[i + 1] - first;
    if (count == 0) continue;
    const int32_t part0 = partition_of(c[i], work, parts);
    for (int32_t j = 0; j < count; ++j) {
      const int32_t part = part0 + j;
      const int32_t row = first + j;
      const int32_t begin = max(c[i], partition_begin(part, work, parts));
      const int32_t end = min(c[i + 1], partition_begin(part + 1, work, parts));
      p.segments[w * (part + 1) + row] =
          Segment{first_split + i, begin - c[i], end - c[i], count == 1 ? -1 : row};
      // The segment holding a partition's first position opens that partition's segments.
      if (begin == partition_begin(part, work, parts)) p.part_seg_begin[part] = w * part + row;
    }
  }
  // Partitions past P' (fewer entries than partitions, or past the spread) have no segment.
  for (int64_t part = parts + threadIdx.x; part <= p.partitions; part += kPlanThreads) {
    p.part_seg_begin[part] = static_cast<int32_t>(w * part) + partials;
  }
  __syncthreads();  // part_seg_begin (global memory) is visible to the whole block after this
  // Whole token t: item t / P of partition t % P.
  for (int32_t t = threadIdx.x; t < first_split; t += kPlanThreads) {
    const int32_t part = t % p.partitions;
    p.segments[p.part_seg_begin[part] + t / p.partitions] =
        Segment{t, 0, used_entries(p.main_sel, p.extra_sel, t), -1};
  }
}

}  // namespace

Status launch_plan(const SelectionView& main_sel, const SelectionView& extra_sel,
                   const PlanLayout& layout, void* plan_data, cudaStream_t stream) {
  auto* words = static_cast<int32_t*>(plan_data);
  PlanKernelParams p{};
  p.main_sel = main_sel;
  p.extra_sel = extra_sel;
  p.whole_rounds = static_cast<int32_t>(layout.whole_rounds);
  p.tokens = static_cast<int32_t>(layout.split_tokens());
  p.partitions = static_cast<int32_t>(layout.partitions);
  p.spread = static_cast<int32_t>(layout.spread);
  p.part_seg_begin = words + layout.part_seg_begin_offset();
  p.token_seg_begin = words + layout.token_seg_begin_offset();
  p.work_prefix = words + layout.work_prefix_offset();
  p.segments = reinterpret_cast<Segment*>(words + layout.segments_offset());
  plan_kernel<<<1, kPlanThreads, 0, stream>>>(p);
  return cuda_backend::launch_status("make_plan", "plan_kernel");
}

PlanView plan_view(const PlanLayout& layout, const void* plan_data) {
  const auto* words = static_cast<const int32_t*>(plan_data);
  return PlanView{words + layout.part_seg_begin_offset(), words + layout.token_seg_begin_offset(),
                  reinterpret_cast<const Segment*>(words + layout.segments_offset())};
}

}  // namespace smla::portable
