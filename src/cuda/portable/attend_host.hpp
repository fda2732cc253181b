// Host-side pieces of an attention launch that both GPU paths (portable and Hopper) share:
// a call's shape, the lookup of a compiled kernel variant, the kernel parameters, and the
// split strategy's workspace, plan and combine. The paths differ in their kernels and
// schedules, not in these.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "cuda/device_info.hpp"
#include "cuda/portable/attend_params.hpp"
#include "smla/ops.hpp"

namespace smla::portable {

// `bytes` rounded up to the 256 B boundary every workspace region starts on.
inline size_t align_workspace(size_t bytes) {
  constexpr size_t kAlign = 256;
  return (bytes + kAlign - 1) / kAlign * kAlign;
}

// The shape of a validated call.
inline int64_t tokens(const AttendArgs& a) { return a.q.shape[0]; }
inline int64_t heads(const AttendArgs& a) { return a.q.shape[1]; }
inline int d_qk(const AttendArgs& a) { return static_cast<int>(a.q.shape[2]); }
// Selected entries per token of the extra selection (0 without an extra pool), and of both:
// the main selection, then the extra one.
inline int64_t extra_entries(const AttendArgs& a) {
  return a.extra_kv.present() ? a.extra_indices.shape[1] : 0;
}
inline int64_t entries(const AttendArgs& a) { return a.indices.shape[1] + extra_entries(a); }

// A path's compiled kernel variants, one lookup per main format; each takes the extra pool's
// format (the main format itself when the call has none) and gives nullptr when this build
// lacks that pair.
template <class Variant>
struct VariantLookups {
  using Lookup = const Variant* (*)(KvFormat extra);
  Lookup bf16_576, bf16_512, fp8_v32, fp8_ds_mla, int8_ds_mla;
};

// The variant a call needs, or nullptr when this build lacks it.
template <class Variant>
const Variant* find_variant(const AttendArgs& a, const VariantLookups<Variant>& lookups) {
  const KvFormat extra = a.extra_kv.present() ? a.extra_kv.format : a.kv.format;
  switch (a.kv.format) {
    case KvFormat::bf16:
      return d_qk(a) == 576 ? lookups.bf16_576(extra) : lookups.bf16_512(extra);
    case KvFormat::fp8_v32:
      return lookups.fp8_v32(extra);
    case KvFormat::fp8_ds_mla:
      return lookups.fp8_ds_mla(extra);
    case KvFormat::int8_ds_mla:
      return lookups.int8_ds_mla(extra);
  }
  return nullptr;
}

// "d_qk=576 main=bf16 extra=none": the kernel variant a call needs, for messages.
std::string variant_name(const AttendArgs& a);

// The kernel parameters of a validated call, for the one-pass form (no plan, no partials).
AttendParams attend_params(const AttendArgs& args, int head_tiles);

// The split strategy's plan layout for this call and about `partitions` CTAs' worth of work
// units per head tile, the first whole_rounds * partitions tokens run whole (PlanLayout) and
// the rest split. When there are no more split tokens than partitions, their entries are spread
// over the largest multiple of their count, so that with equal lengths no partition
// straddles two tokens: a straddling partition runs two items one after the other, each with
// its own start (Q, indices, first gathers) and partial, and the slowest partition sets the
// call's time (H200, V3.2 decode b = 2: 36 us at 66 partitions, 30 us at 64;
// docs/perf-notes.md).
PlanLayout split_plan_layout(const AttendArgs& args, int64_t partitions, int64_t whole_rounds = 0);
// Bytes of workspace a split call needs: the f32 partials, plus room for a plan that attend
// makes itself when the caller brings none.
size_t split_workspace_bytes(const AttendArgs& args, const PlanLayout& layout);
// Fills a caller's plan buffer for a split schedule on `stream` (device kernel, no sync).
Status make_split_plan(const AttendArgs& args, const PlanLayout& layout, void* plan_data,
                       cudaStream_t stream);

using AttendLaunch = Status (*)(const AttendParams& params, int units, cudaStream_t stream);

// The split strategy: partials in the workspace, the plan (the caller's, or one made into
// the workspace), `launch` over layout.partitions work units, then the combine kernel over
// the split tokens, launched beside the attention kernel where it is small enough and built
// for sm_90+ (CombineLaunch): every attention kernel allows its dependents' launch as it
// starts.
Status run_split(const AttendArgs& args, AttendParams params, const PlanLayout& layout,
                 Workspace ws, const Plan* plan, AttendLaunch launch,
                 const cuda_backend::DeviceInfo& info, cudaStream_t stream);

}  // namespace smla::portable
