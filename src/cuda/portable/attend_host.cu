// Host-side pieces both GPU paths share (see attend_host.hpp).
#include "cuda/portable/attend_host.hpp"

#include <cstdint>
#include <numbers>
#include <string>

#include "cuda/portable/combine_kernel.hpp"
#include "cuda/portable/plan_kernel.hpp"
#include "cuda/timeline.hpp"
#include "smla/format.hpp"

namespace smla::portable {
namespace {

constexpr int kDv = 512;

// Bytes of the f32 partials of a split schedule: out, lse and max per partial row and head.
size_t partials_bytes(const AttendArgs& a, const PlanLayout& layout) {
  const auto rows = static_cast<size_t>(layout.max_partials() * heads(a));
  return align_workspace(rows * kDv * 4) + 2 * align_workspace(rows * 4);
}

SelectionView selection(const TensorView& idx, const TensorView& len) {
  SelectionView s;
  if (!idx.present()) return s;
  s.idx = static_cast<const int32_t*>(idx.data);
  s.idx_stride = idx.stride[0];
  s.k = static_cast<int32_t>(idx.shape[1]);
  if (len.present()) {
    s.len = static_cast<const int32_t*>(len.data);
    s.len_stride = len.stride[0];
  }
  return s;
}

PoolView pool_view(const KvPool& pool) {
  PoolView v;
  if (!pool.present()) return v;
  v.data = static_cast<const uint8_t*>(pool.data);
  v.scales = static_cast<const uint8_t*>(pool.scales);
  v.block_stride = pool.block_stride;
  v.scale_block_stride = pool.scale_block_stride;
  v.slots = pool.slots();
  v.block_size = pool.block_size;
  return v;
}

}  // namespace

std::string variant_name(const AttendArgs& a) {
  return "d_qk=" + std::to_string(d_qk(a)) + " main=" + format_name(a.kv.format) +
         " extra=" + (a.extra_kv.present() ? format_name(a.extra_kv.format) : "none");
}

AttendParams attend_params(const AttendArgs& a, int head_tiles) {
  AttendParams p;
  p.q = static_cast<const uint16_t*>(a.q.data);
  p.q_stride_t = a.q.stride[0];
  p.q_stride_h = a.q.stride[1];
  p.main = pool_view(a.kv);
  p.extra = pool_view(a.extra_kv);
  p.main_sel = selection(a.indices, a.lengths);
  p.extra_sel =
      a.extra_kv.present() ? selection(a.extra_indices, a.extra_lengths) : SelectionView{};
  if (a.sink.present()) {
    p.sink = static_cast<const float*>(a.sink.data);
    p.sink_stride = a.sink.stride[0];
  }
  p.tokens = static_cast<int32_t>(tokens(a));
  p.h_q = static_cast<int32_t>(heads(a));
  p.head_tiles = head_tiles;
  p.scale_log2 = a.scale * std::numbers::log2e_v<float>;
  p.out = static_cast<uint16_t*>(a.out.data);
  p.out_stride_t = a.out.stride[0];
  p.out_stride_h = a.out.stride[1];
  if (a.lse.present()) {
    p.lse = static_cast<float*>(a.lse.data);
    p.lse_stride_t = a.lse.stride[0];
    p.lse_stride_h = a.lse.stride[1];
  }
  if (a.max_logits.present()) {
    p.max_logits = static_cast<float*>(a.max_logits.data);
    p.max_stride_t = a.max_logits.stride[0];
    p.max_stride_h = a.max_logits.stride[1];
  }
  return p;
}

namespace {

// Merges the split tokens' partials into their final outputs, applying the sink.
Status launch_split_combine(const AttendParams& p, const PlanLayout& layout,
                            const cuda_backend::DeviceInfo& info, cudaStream_t stream) {
  const int64_t first = layout.first_split();
  CombineParams<float> c;
  c.part_out = p.part_out;
  c.out_stride_s = int64_t{p.h_q} * kDv;
  c.out_stride_h = kDv;
  c.part_lse = p.part_lse;
  c.part_max = p.part_max;
  c.lse_stride_s = p.h_q;
  c.lse_stride_h = 1;
  c.token_partials = p.plan.token_seg_begin;
  c.sink = p.sink;
  c.sink_stride = p.sink_stride;
  c.tokens = static_cast<int32_t>(layout.split_tokens());
  c.h_q = p.h_q;
  // The results of split token i are those of token first + i.
  c.out = p.out + first * p.out_stride_t;
  c.res_stride_t = p.out_stride_t;
  c.res_stride_h = p.out_stride_h;
  c.lse = p.lse != nullptr ? p.lse + first * p.lse_stride_t : nullptr;
  c.res_lse_stride_t = p.lse_stride_t;
  c.res_lse_stride_h = p.lse_stride_h;
  c.max_logits = p.max_logits != nullptr ? p.max_logits + first * p.max_stride_t : nullptr;
  c.res_max_stride_t = p.max_stride_t;
  c.res_max_stride_h = p.max_stride_h;
  c.timeline = p.timeline != nullptr ? p.timeline + timeline::kAttendWords : nullptr;
  const CombineLaunch how{cuda_backend::kernel_image_version(info.ordinal) >= 90, info.sm_count,
                          info.max_smem_per_block_optin};
  return launch_combine(c, how, stream, "smla::attend");
}

}  // namespace

PlanLayout split_plan_layout(const AttendArgs& args, int64_t partitions, int64_t whole_rounds) {
  const int64_t split = tokens(args) - whole_rounds * partitions;
  int64_t spread = partitions;
  if (split > 0 && split <= partitions) spread = partitions / split * split;
  // With every token split the launch needs no more units than it spreads over; whole tokens
  // go round all P.
  return PlanLayout{tokens(args), whole_rounds == 0 ? spread : partitions, whole_rounds, spread};
}

size_t split_workspace_bytes(const AttendArgs& args, const PlanLayout& layout) {
  // The plan's room is counted even when the caller brings a plan: the size query cannot
  // know, and a call without a plan must not fail for want of it.
  return partials_bytes(args, layout) + align_workspace(static_cast<size_t>(layout.bytes()));
}

Status make_split_plan(const AttendArgs& args, const PlanLayout& layout, void* plan_data,
                       cudaStream_t stream) {
  const SelectionView main_sel = selection(args.indices, args.lengths);
  const SelectionView extra_sel =
      args.extra_kv.present() ? selection(args.extra_indices, args.extra_lengths) : SelectionView{};
  return launch_plan(main_sel, extra_sel, layout, plan_data, stream);
}

Status run_split(const AttendArgs& args, AttendParams p, const PlanLayout& layout,
                 Workspace ws, const Plan* plan, AttendLaunch launch,
                 const cuda_backend::DeviceInfo& info, cudaStream_t stream) {
  auto* base = static_cast<uint8_t*>(ws.data);
  const auto rows = static_cast<size_t>(layout.max_partials() * heads(args));
  p.part_out = reinterpret_cast<float*>(base);
  const size_t out_bytes = align_workspace(rows * kDv * 4);
  p.part_lse = reinterpret_cast<float*>(base + out_bytes);
  p.part_max = reinterpret_cast<float*>(base + out_bytes + align_workspace(rows * 4));
  const void* plan_data = plan != nullptr ? plan->data : base + partials_bytes(args, layout);
  if (plan == nullptr) {
    if (Status st = launch_plan(p.main_sel, p.extra_sel, layout,
                                base + partials_bytes(args, layout), stream);
        !st.ok())
      return st;
  }
  p.plan = plan_view(layout, plan_data);
  if (Status st = launch(p, static_cast<int>(layout.partitions), stream); !st.ok()) return st;
  return launch_split_combine(p, layout, info, stream);
}

}  // namespace smla::portable
