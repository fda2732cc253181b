// Orchestration of the portable path: the schedule (strategy, head tile, partitions), the
// plan and workspace sizes, the variant lookup and the launches. See docs/portable-path.md.
#include <cstdint>
#include <string>

#include "cuda/cuda_check.hpp"
#include "cuda/portable/attend_host.hpp"
#include "cuda/portable/attend_params.hpp"
#include "cuda/portable/attend_variants.hpp"
#include "cuda/portable/combine_kernel.hpp"
#include "smla_build_config.hpp"
#include "cuda/portable/portable_attention.hpp"

namespace smla::portable {
namespace {

constexpr int32_t kOnePass = 1;
constexpr int32_t kSplit = 2;

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

constexpr VariantLookups<AttendVariant> kVariants{
    &attend_variant_bf16_576, &attend_variant_bf16_512, &attend_variant_fp8_v32,
    &attend_variant_fp8_ds_mla, &attend_variant_int8_ds_mla};

Status lookup_variant(const AttendArgs& a, const AttendVariant** variant) {
  *variant = find_variant(a, kVariants);
  if (*variant != nullptr) return Status::success();
  return Status(StatusCode::not_built,
                "smla::attend: the portable kernel variant " + variant_name(a) +
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
  const int64_t ctas = tokens(a) * s.head_tiles;
  const int64_t target_ctas = 2 * int64_t{info.sm_count};
  constexpr int64_t kMinSplitEntries = 256;  // below this a token is cheap in one pass
  // Positions in the plan are int32: keep the total selection well inside that range.
  const bool fits_int32 = tokens(a) * entries(a) < (int64_t{1} << 30);
  if (ctas < target_ctas && entries(a) >= kMinSplitEntries && fits_int32) {
    s.strategy = kSplit;
    s.partitions = (target_ctas + s.head_tiles - 1) / s.head_tiles;
  }
  return s;
}

Status schedule_for(const AttendArgs& a, const cuda_backend::DeviceInfo& info, Schedule* s,
                    const AttendVariant** variant) {
  if (Status st = lookup_variant(a, variant); !st.ok()) return st;
  *s = make_schedule(a, info, **variant);
  return Status::success();
}

}  // namespace

Status plan_size(const AttendArgs& args, const cuda_backend::DeviceInfo& info, size_t* bytes) {
  Schedule s;
  const AttendVariant* variant = nullptr;
  if (Status st = schedule_for(args, info, &s, &variant); !st.ok()) return st;
  *bytes = s.strategy == kSplit
               ? static_cast<size_t>(split_plan_layout(args, s.partitions).bytes())
               : 0;
  return Status::success();
}

Status make_plan(const AttendArgs& args, const cuda_backend::DeviceInfo& info, Plan* plan,
                 cudaStream_t stream) {
  Schedule s;
  const AttendVariant* variant = nullptr;
  if (Status st = schedule_for(args, info, &s, &variant); !st.ok()) return st;
  plan->strategy = s.plan_id();
  if (s.strategy != kSplit || tokens(args) == 0) return Status::success();
  return make_split_plan(args, split_plan_layout(args, s.partitions), plan->data, stream);
}

Status workspace_size(const AttendArgs& args, const cuda_backend::DeviceInfo& info, size_t* bytes) {
  Schedule s;
  const AttendVariant* variant = nullptr;
  if (Status st = schedule_for(args, info, &s, &variant); !st.ok()) return st;
  *bytes = 0;
  if (s.strategy == kSplit) {
    *bytes = split_workspace_bytes(args, split_plan_layout(args, s.partitions));
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

  const AttendParams p = attend_params(args, s.head_tiles);
  const AttendLaunch launch = variant->launch[head_tile_index(s.mt)];
  if (s.strategy == kOnePass) return launch(p, static_cast<int>(tokens(args)), stream);
  return run_split(args, p, split_plan_layout(args, s.partitions), ws, plan, launch, info,
                   stream);
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
    return launch_combine(c, CombineLaunch{}, stream, "smla::combine");
  }
  CombineParams<uint16_t> c;
  c.part_out = static_cast<const uint16_t*>(po.data);
  fill(&c);
  return launch_combine(c, CombineLaunch{}, stream, "smla::combine");
}

}  // namespace smla::portable
