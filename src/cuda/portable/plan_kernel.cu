// The split-KV plan kernel: one block that spreads the selected entries of all tokens evenly
// over P partitions, on the stream, from the lengths alone (no host synchronization, so a
// CUDA graph can capture it).
//
// The entries of every token, main then extra, are laid end to end: token t owns positions
// [C_t, C_{t+1}) of [0, W) where C is the exclusive prefix sum of its used entry counts.
// Partition p owns [B_p, B_{p+1}) with B_p = floor(p * W / P'), P' = min(P, W), so each
// partition is non-empty and sizes differ by at most one. A segment is the intersection of a
// token and a partition; segments are numbered by (token, partition), which is also
// (partition, token) order, so each token's segments and each partition's segments are
// contiguous ranges of one array.
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
  int32_t tokens;
  int32_t partitions;
  int32_t* part_seg_begin;   // [P + 1]
  int32_t* token_seg_begin;  // [T + 1]
  int32_t* work_prefix;      // [T + 1]
  Segment* segments;         // [T + P]
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

__global__ void __launch_bounds__(kPlanThreads) plan_kernel(const __grid_constant__ PlanKernelParams p) {
  __shared__ BlockScan::TempStorage tmp;
  const int32_t work = block_exclusive_scan(p.tokens, p.work_prefix, tmp, [&](int32_t t) {
    return used_entries(p.main_sel, t) + used_entries(p.extra_sel, t);
  });
  const int64_t parts = work < p.partitions ? work : p.partitions;  // P'

  const int32_t* c = p.work_prefix;
  const int32_t segments = block_exclusive_scan(p.tokens, p.token_seg_begin, tmp, [&](int32_t t) {
    if (c[t + 1] == c[t]) return 0;
    return partition_of(c[t + 1] - 1, work, parts) - partition_of(c[t], work, parts) + 1;
  });

  for (int32_t t = threadIdx.x; t < p.tokens; t += kPlanThreads) {
    const int32_t first = p.token_seg_begin[t];
    const int32_t count = p.token_seg_begin[t + 1] - first;
    if (count == 0) continue;
    const int32_t part0 = partition_of(c[t], work, parts);
    for (int32_t j = 0; j < count; ++j) {
      const int32_t part = part0 + j;
      const int32_t begin = max(c[t], partition_begin(part, work, parts));
      const int32_t end = min(c[t + 1], partition_begin(part + 1, work, parts));
      p.segments[first + j] = Segment{t, begin - c[t], end - c[t], 0};
      // The segment holding a partition's first position opens that partition.
      if (begin == partition_begin(part, work, parts)) p.part_seg_begin[part] = first + j;
    }
  }
  // Partitions past P' (fewer entries than partitions) are empty.
  for (int64_t part = parts + threadIdx.x; part <= p.partitions; part += kPlanThreads) {
    p.part_seg_begin[part] = segments;
  }
}

}  // namespace

Status launch_plan(const SelectionView& main_sel, const SelectionView& extra_sel,
                   const PlanLayout& layout, void* plan_data, cudaStream_t stream) {
  auto* words = static_cast<int32_t*>(plan_data);
  PlanKernelParams p{};
  p.main_sel = main_sel;
  p.extra_sel = extra_sel;
  p.tokens = static_cast<int32_t>(layout.tokens);
  p.partitions = static_cast<int32_t>(layout.partitions);
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
