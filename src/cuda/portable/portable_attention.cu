// Orchestration of the portable path: the schedule (strategy, head tile, partitions), the
// plan and workspace sizes, the variant lookup and the launches. See docs/portable-path.md.
#include <cstdint>
#include <numbers>
#include <string>

#include "cuda/cuda_check.hpp"
#include "cuda/portable/attend_params.hpp"
#include "cuda/portable/attend_variants.hpp"
#include "cuda/portable/combine_kernel.hpp"
#include "cuda/portable/plan_kernel.hpp"
#include "smla_build_config.hpp"
#include "cuda/portable/portable_attention.hpp"

namespace smla::portable {
namespace {

constexpr int32_t kOnePass = 1;
constexpr int32_t kSplit = 2;
constexpr int kDv = 512;
constexpr size_t kAlign = 256;  // workspace regions start on 256 B boundaries

size_t align_up(size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

// Everything about a call's launch that is decided on the host.
struct Schedule {
  int32_t strategy = kOnePass;
  int mt = 1;              // m-tiles per CTA: head_tile_heads(mt) heads (0: transposed 8)
  int head_tiles = 1;      // ceil(h_q / head_tile_heads(mt))
  int64_t partitions = 0;  // split only
  // Plan::strategy of a plan made for this schedule: the kind, the head tile and the
  // partition count, so attend can reject a plan from another device (another SM count).
  int32_t plan_id() const { return strategy | (mt << 4) | static_cast<int32_t>(partitions << 8); }
};

int64_t tokens(const AttendArgs& a) { return a.q.shape[0]; }
int64_t heads(const AttendArgs& a) { return a.q.shape[1]; }
int d_qk(const AttendArgs& a) { return static_cast<int>(a.q.shape[2]); }
int64_t topk(const AttendArgs& a) { return a.indices.shape[1]; }
int64_t extra_topk(const AttendArgs& a) {
  return a.extra_kv.present() ? a.extra_indices.shape[1] : 0;
}

const AttendVariant* find_variant(const AttendArgs& a) {
  const KvFormat main = a.kv.format;
  const KvFormat extra = a.extra_kv.present() ? a.extra_kv.format : main;
  switch (main) {
    case KvFormat::bf16:
      return d_qk(a) == 576 ? attend_variant_bf16_576(extra) : attend_variant_bf16_512(extra);
    case KvFormat::fp8_v32:
      return attend_variant_fp8_v32(extra);
    case KvFormat::fp8_ds_mla:
      return attend_variant_fp8_ds_mla(extra);
    case KvFormat::int8_ds_mla:
      return attend_variant_int8_ds_mla(extra);
  }
  return nullptr;
}

Status lookup_variant(const AttendArgs& a, const AttendVariant** variant) {
  *variant = find_variant(a);
  if (*variant != nullptr) return Status::success();
  std::string name = "d_qk=" + std::to_string(d_qk(a)) + " main=" + format_name(a.kv.format) +
                     " extra=" + (a.extra_kv.present() ? format_name(a.extra_kv.format) : "none");
  return Status(StatusCode::not_built,
                "smla::attend: the portable kernel variant " + name +
                    " is not compiled in this build (kernel preset '" SMLA_KERNEL_PRESET_STRING
                    "'); configure with -DSMLA_KERNEL_PRESET=all");
}

// The schedule is a pure function of (T, h_q, k + k_x, the device's SMs and shared memory).
// Head tile: the smallest of 8/16/32/64 heads that covers h_q (64 only where its shared
// memory fits: not on the 99 KB parts), so h_q = 22 pads to 32 rows instead of 64. h_q <= 8
// takes the transposed tile, which has no padded MMA rows (8 heads are the N dimension);
// h_q = 9..16 stays on one 16-head tile (two 8-head CTAs would gather every row twice).
// The transposed tile of a mixed-format pair exceeds 99 KB: there it falls back to 16 heads.
// Strategy: one pass when the (token, head tile) CTAs fill the GPU or each token has little
// to do; otherwise split the entries over about two CTAs per SM and combine.
Schedule make_schedule(const AttendArgs& a, const cuda_backend::DeviceInfo& info,
                       const AttendVariant& variant) {
  Schedule s;
  const int64_t h_q = heads(a);
  s.mt = h_q <= 8 ? 0 : (h_q <= 16 ? 1 : (h_q <= 32 ? 2 : 4));
  const auto fits = [&](int mt) {
    return variant.smem_bytes[head_tile_index(mt)] <= info.max_smem_per_block_optin;
  };
  if (s.mt == 4 && !fits(4)) s.mt = 2;
  if (s.mt == 0 && !fits(0)) s.mt = 1;
  const int ht = head_tile_heads(s.mt);
  s.head_tiles = static_cast<int>((h_q + ht - 1) / ht);
  const int64_t entries = topk(a) + extra_topk(a);
  const int64_t ctas = tokens(a) * s.head_tiles;
  const int64_t target_ctas = 2 * int64_t{info.sm_count};
  constexpr int64_t kMinSplitEntries = 256;  // below this a token is cheap in one pass
  // Positions in the plan are int32: keep the total selection well inside that range.
  const bool fits_int32 = tokens(a) * entries < (int64_t{1} << 30);
  if (ctas < target_ctas && entries >= kMinSplitEntries && fits_int32) {
    s.strategy = kSplit;
    s.partitions = (target_ctas + s.head_tiles - 1) / s.head_tiles;
  }
  return s;
}

PlanLayout plan_layout(const AttendArgs& a, const Schedule& s) {
  return PlanLayout{tokens(a), s.partitions};
}

// Bytes of the f32 partials of a split schedule: out, lse and max per segment and head.
size_t partials_bytes(const AttendArgs& a, const Schedule& s) {
  const auto rows = static_cast<size_t>(plan_layout(a, s).max_segments() * heads(a));
  return align_up(rows * kDv * 4) + 2 * align_up(rows * 4);
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

AttendParams attend_params(const AttendArgs& a, const Schedule& s) {
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
  p.head_tiles = s.head_tiles;
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

Status schedule_for(const AttendArgs& a, const cuda_backend::DeviceInfo& info, Schedule* s,
                    const AttendVariant** variant) {
  if (Status st = lookup_variant(a, variant); !st.ok()) return st;
  *s = make_schedule(a, info, **variant);
  return Status::success();
}

// Merges the split partials into the final outputs, applying the sink.
Status launch_split_combine(const AttendParams& p, cudaStream_t stream) {
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
  c.tokens = p.tokens;
  c.h_q = p.h_q;
  c.out = p.out;
  c.res_stride_t = p.out_stride_t;
  c.res_stride_h = p.out_stride_h;
  c.lse = p.lse;
  c.res_lse_stride_t = p.lse_stride_t;
  c.res_lse_stride_h = p.lse_stride_h;
  c.max_logits = p.max_logits;
  c.res_max_stride_t = p.max_stride_t;
  c.res_max_stride_h = p.max_stride_h;
  return launch_combine(c, stream, "smla::attend");
}

}  // namespace

Status plan_size(const AttendArgs& args, const cuda_backend::DeviceInfo& info, size_t* bytes) {
  Schedule s;
  const AttendVariant* variant = nullptr;
  if (Status st = schedule_for(args, info, &s, &variant); !st.ok()) return st;
  *bytes = s.strategy == kSplit ? static_cast<size_t>(plan_layout(args, s).bytes()) : 0;
  return Status::success();
}

Status make_plan(const AttendArgs& args, const cuda_backend::DeviceInfo& info, Plan* plan,
                 cudaStream_t stream) {
  Schedule s;
  const AttendVariant* variant = nullptr;
  if (Status st = schedule_for(args, info, &s, &variant); !st.ok()) return st;
  plan->strategy = s.plan_id();
  if (s.strategy != kSplit || tokens(args) == 0) return Status::success();
  const SelectionView main_sel = selection(args.indices, args.lengths);
  const SelectionView extra_sel =
      args.extra_kv.present() ? selection(args.extra_indices, args.extra_lengths) : SelectionView{};
  return launch_plan(main_sel, extra_sel, plan_layout(args, s), plan->data, stream);
}

Status workspace_size(const AttendArgs& args, const cuda_backend::DeviceInfo& info, size_t* bytes) {
  Schedule s;
  const AttendVariant* variant = nullptr;
  if (Status st = schedule_for(args, info, &s, &variant); !st.ok()) return st;
  *bytes = 0;
  if (s.strategy == kSplit) {
    // The plan's room is counted even when the caller brings a plan: the size query cannot
    // know, and a call without a plan must not fail for want of it.
    *bytes = partials_bytes(args, s) + align_up(static_cast<size_t>(plan_layout(args, s).bytes()));
  }
  return Status::success();
}

Status attend(const AttendArgs& args, const cuda_backend::DeviceInfo& info, Workspace ws,
              cudaStream_t stream, const Plan* plan) {
  Schedule s;
  const AttendVariant* variant = nullptr;
  if (Status st = schedule_for(args, info, &s, &variant); !st.ok()) return st;
  if (plan != nullptr && plan->strategy != s.plan_id()) {
    return Status(StatusCode::invalid_argument,
                  "smla::attend: plan: expected a plan made on this device for these arguments "
                  "(schedule " +
                      std::to_string(s.plan_id()) + "), got one for schedule " +
                      std::to_string(plan->strategy));
  }
  if (tokens(args) == 0) return Status::success();

  AttendParams p = attend_params(args, s);
  const AttendLauncher launch = variant->launch[head_tile_index(s.mt)];
  if (s.strategy == kOnePass) return launch(p, static_cast<int>(tokens(args)), stream);

  // Split: partials, then the plan (the caller's, or one made here after the partials).
  const PlanLayout layout = plan_layout(args, s);
  auto* base = static_cast<uint8_t*>(ws.data);
  const auto rows = static_cast<size_t>(layout.max_segments() * heads(args));
  p.part_out = reinterpret_cast<float*>(base);
  p.part_lse = reinterpret_cast<float*>(base + align_up(rows * kDv * 4));
  p.part_max = reinterpret_cast<float*>(base + align_up(rows * kDv * 4) + align_up(rows * 4));
  const void* plan_data = plan != nullptr ? plan->data : base + partials_bytes(args, s);
  if (plan == nullptr) {
    if (Status st =
            launch_plan(p.main_sel, p.extra_sel, layout, base + partials_bytes(args, s), stream);
        !st.ok())
      return st;
  }
  p.plan = plan_view(layout, plan_data);
  if (Status st = launch(p, static_cast<int>(layout.partitions), stream); !st.ok()) return st;
  return launch_split_combine(p, stream);
}

Status combine(const CombineArgs& args, const cuda_backend::DeviceInfo& info, cudaStream_t stream) {
  (void)info;
  const TensorView& po = args.partial_out;
  const TensorView& pl = args.partial_lse;
  auto fill = [&](auto* c) {
    c->out_stride_s = po.stride[0];
    c->out_stride_t = po.stride[1];
    c->out_stride_h = po.stride[2];
    c->part_lse = static_cast<const float*>(pl.data);
    c->lse_stride_s = pl.stride[0];
    c->lse_stride_t = pl.stride[1];
    c->lse_stride_h = pl.stride[2];
    c->num_partials = static_cast<int32_t>(po.shape[0]);
    if (args.sink.present()) {
      c->sink = static_cast<const float*>(args.sink.data);
      c->sink_stride = args.sink.stride[0];
    }
    c->tokens = static_cast<int32_t>(po.shape[1]);
    c->h_q = static_cast<int32_t>(po.shape[2]);
    c->out = static_cast<uint16_t*>(args.out.data);
    c->res_stride_t = args.out.stride[0];
    c->res_stride_h = args.out.stride[1];
    if (args.lse.present()) {
      c->lse = static_cast<float*>(args.lse.data);
      c->res_lse_stride_t = args.lse.stride[0];
      c->res_lse_stride_h = args.lse.stride[1];
    }
  };
  if (po.dtype == DType::f32) {
    CombineParams<float> c;
    c.part_out = static_cast<const float*>(po.data);
    fill(&c);
    return launch_combine(c, stream, "smla::combine");
  }
  CombineParams<uint16_t> c;
  c.part_out = static_cast<const uint16_t*>(po.data);
  fill(&c);
  return launch_combine(c, stream, "smla::combine");
}

}  // namespace smla::portable
