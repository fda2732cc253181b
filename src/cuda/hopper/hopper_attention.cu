// Orchestration of the Hopper path: which calls it covers, the schedule (strategy and
// partitions), the variant lookup and the launches. The split strategy's plan, partials and
// combine are the portable path's (src/cuda/portable/attend_host.hpp).
#include "cuda/hopper/hopper_attention.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

#include "cuda/cuda_check.hpp"
#include "cuda/hopper/attend_variants.hpp"
#include "cuda/hopper/v_bounds.hpp"
#include "cuda/portable/attend_host.hpp"
#include "cuda/timeline.hpp"
#include "smla_build_config.hpp"

namespace smla::hopper {
namespace {

constexpr int32_t kOnePass = 1;
constexpr int32_t kSplit = 2;
constexpr int32_t kRoundsAndTail = 3;  // one pass for the full rounds, the rest split
constexpr int kHeadTile = 64;  // heads per CTA: the M of one wgmma (rows past h_q are zeros)
// Plan::strategy tag of this path's schedules: portable plans use head tiles 0..4 in the
// same bit field, so a plan made for one path is rejected by the other.
constexpr int32_t kPathTag = 15;

using portable::entries;
using portable::extra_entries;
using portable::heads;
using portable::tokens;

struct Schedule {
  int32_t strategy = kOnePass;
  int head_tiles = 1;
  int64_t partitions = 0;    // split, rounds and tail
  int64_t whole_rounds = 0;  // rounds and tail: the rounds of whole tokens
  int64_t rounds = 0;        // of a one-pass launch: tokens per CTA, rounded up
  // One pass of several rounds over one head tile: the CTAs claim their tokens
  // (AttendParams::claims). With two head tiles a counter per tile lets a token's two CTAs
  // drift apart, and they no longer share its rows in L2: the h_q = 128 topk 1024 prefill
  // row lost 2% with claims (H100, docs/perf-notes.md), the h_q = 64 rows gained ~0.8%.
  bool claims_tokens() const { return strategy == kOnePass && rounds >= 2 && head_tiles == 1; }
  // Plan::strategy: the kind, the path and the partition count.
  int32_t plan_id() const {
    return strategy | (kPathTag << 4) | static_cast<int32_t>(partitions << 8);
  }
};

constexpr portable::VariantLookups<AttendVariant> kVariants{
    &attend_variant_bf16_576, &attend_variant_bf16_512, &attend_variant_fp8_v32,
    &attend_variant_fp8_ds_mla, &attend_variant_int8_ds_mla};

// The CTAs of a one-pass launch, per head tile: at most one per SM (the ring takes most of
// the shared memory), each walking every units-th token.
int64_t one_pass_units(const AttendArgs& a, int head_tiles, const cuda_backend::DeviceInfo& info) {
  return std::min(tokens(a), std::max<int64_t>(1, info.sm_count / head_tiles));
}

// Each strategy's time is estimated in steps (64 entries of one CTA; ~3.7 us on the H200's
// long decode rows) and the cheapest one taken:
//   one pass: the CTAs walk rounds of tokens, a token's steps in one CTA, the last round
//     partly idle;
//   split: every SM takes an even share of all steps, plus what the split adds: about two
//     steps of extra item starts per partition and the combine, ~0.15 us (0.04 of a step) per
//     (token, head tile) row set of partials (H200, docs/perf-notes.md);
//   rounds and tail: one pass for the full rounds, then the last round's tokens split over
//     every CTA (V4 decode b = 148: 296 tokens on 132 CTAs, 3 rounds of 10 steps where 2.24
//     would do), taken only where it saves at least kMinTailGain of one pass (a prefill chunk
//     of 4096 tokens, 62 rounds of 66 CTAs and 4 tokens left, saves 1.3-2.8% and stays one
//     pass).
// Only where one pass beats the split does the tail take its place: the estimate counts k
// entries per token, and a split's even share also absorbs unequal lengths, which one pass's
// rounds do not (the top-k 16384 decode rows, whose cache lengths vary, stay split). Split
// and tail also need enough entries per token and int32 entry offsets. A pure function of
// (T, h_q, k, k_x, SM count).
Schedule make_schedule(const AttendArgs& a, const cuda_backend::DeviceInfo& info) {
  Schedule s;
  s.head_tiles = static_cast<int>((heads(a) + kHeadTile - 1) / kHeadTile);
  if (tokens(a) == 0) return s;
  constexpr int64_t kMinSplitEntries = 256;
  constexpr double kSplitStartSteps = 2.0;
  constexpr double kCombineStepsPerRowSet = 0.04;
  // The tail must save more than its split costs beyond this estimate. On an H100 the
  // prefill rows' predicted 1.3-2.8% became 0.7-2.5% losses (30-45 us of partial writes,
  // combine and an item start per CTA in the block-pair kernel), while V4 decode b = 148's
  // predicted 12% gave 10% (docs/perf-notes.md).
  constexpr double kMinTailGain = 0.05;
  const int64_t sms = info.sm_count;
  // The main and extra ranges step separately.
  const int64_t steps_per_token = (a.indices.shape[1] + 63) / 64 + (extra_entries(a) + 63) / 64;
  const auto split_steps = [&](int64_t split_tokens) {
    const int64_t row_sets = split_tokens * s.head_tiles;
    return static_cast<double>((row_sets * steps_per_token + sms - 1) / sms) + kSplitStartSteps +
           kCombineStepsPerRowSet * static_cast<double>(row_sets);
  };
  const int64_t units = one_pass_units(a, s.head_tiles, info);
  const int64_t rounds = (tokens(a) + units - 1) / units;
  const double one_pass_steps = static_cast<double>(rounds * steps_per_token);
  const bool fits_int32 = tokens(a) * entries(a) < (int64_t{1} << 30);
  s.rounds = rounds;
  if (entries(a) < kMinSplitEntries || !fits_int32) return s;
  if (split_steps(tokens(a)) < one_pass_steps) {
    s.strategy = kSplit;
    s.partitions = (sms + s.head_tiles - 1) / s.head_tiles;
    return s;
  }
  const int64_t whole = (rounds - 1) * units;  // tokens of the full rounds
  const double tail_steps = static_cast<double>((rounds - 1) * steps_per_token) +
                            split_steps(tokens(a) - whole);
  if (rounds >= 2 && tail_steps < (1.0 - kMinTailGain) * one_pass_steps) {
    s.strategy = kRoundsAndTail;
    s.partitions = units;  // the whole tokens' round robin: one unit per SM and head tile
    s.whole_rounds = rounds - 1;
  }
  return s;
}

portable::PlanLayout plan_layout(const AttendArgs& a, const Schedule& s) {
  return portable::split_plan_layout(a, s.partitions, s.whole_rounds);
}

int64_t pool_slots(const AttendArgs& a) {
  return a.kv.slots() + (a.extra_kv.present() ? a.extra_kv.slots() : 0);
}

// Selected entries per slot of the pools at least, for a call to use bounds tables.
constexpr int64_t kEntriesPerTableSlot = 16;

// The workspace the block-pair kernel's |V| bounds tables (v_bounds.hpp) may take: 4 bytes
// per kEntriesPerTableSlot selected entries, whatever the pools (the workspace is sized by
// the selection, never by the pool: include/smla/ops.hpp), reserved for every call of a
// variant that reads them.
size_t v_bounds_bytes(const AttendArgs& a) {
  const AttendVariant* variant = portable::find_variant(a, kVariants);
  if (variant == nullptr || !variant->reads_v_bounds) return 0;
  return portable::align_workspace(
      static_cast<size_t>(4 * (tokens(a) * entries(a) / kEntriesPerTableSlot)));
}

// Whether the pools' tables fit the room v_bounds_bytes reserved (none: no table).
bool tables_fit(const AttendArgs& a, size_t reserved) {
  return reserved > 0 && 4 * static_cast<size_t>(pool_slots(a)) <= reserved;
}

}  // namespace

std::string why_not_covered(const AttendArgs& args, const cuda_backend::DeviceInfo& info) {
  if (!compiled()) return "this build has no sm_90a kernels";
  if (info.arch() != 90) {
    return "the device is sm_" + std::to_string(info.arch()) + ", the Hopper kernels need sm_90";
  }
  const AttendVariant* variant = portable::find_variant(args, kVariants);
  if (variant == nullptr) {
    return "the kernel variant " + portable::variant_name(args) +
           " is not compiled (kernel preset '" SMLA_KERNEL_PRESET_STRING
           "'; configure with -DSMLA_KERNEL_PRESET=all)";
  }
  if (variant->smem_bytes > info.max_smem_per_block_optin) {
    return "the kernel needs " + std::to_string(variant->smem_bytes) +
           " B of shared memory per block, the device allows " +
           std::to_string(info.max_smem_per_block_optin);
  }
  return {};
}

const char* schedule_name(const AttendArgs& args, const cuda_backend::DeviceInfo& info) {
  const Schedule s = make_schedule(args, info);
  switch (s.strategy) {
    case kSplit:
      return "split";
    case kRoundsAndTail:
      return "rounds and tail";
    default:
      return s.claims_tokens() ? "one pass, claimed tokens" : "one pass";
  }
}

Status plan_size(const AttendArgs& args, const cuda_backend::DeviceInfo& info, size_t* bytes) {
  const Schedule s = make_schedule(args, info);
  *bytes = s.strategy != kOnePass ? static_cast<size_t>(plan_layout(args, s).bytes()) : 0;
  return Status::success();
}

Status make_plan(const AttendArgs& args, const cuda_backend::DeviceInfo& info, Plan* plan,
                 cudaStream_t stream) {
  const Schedule s = make_schedule(args, info);
  plan->strategy = s.plan_id();
  if (s.strategy == kOnePass || tokens(args) == 0) return Status::success();
  return portable::make_split_plan(args, plan_layout(args, s), plan->data, stream);
}

bool uses_v_bounds(const AttendArgs& args) { return tables_fit(args, v_bounds_bytes(args)); }

// The workspace of the token counters of a launch whose CTAs claim tokens (one per head tile).
size_t claims_bytes(const Schedule& s) {
  return s.claims_tokens() ? portable::align_workspace(sizeof(int32_t) * s.head_tiles) : 0;
}

// The first `bytes` of `ws` (a region workspace_size counted), which then starts after them.
void* take_front(Workspace& ws, size_t bytes) {
  void* const front = ws.data;
  ws = {static_cast<uint8_t*>(ws.data) + bytes, ws.bytes - bytes};
  return front;
}

Status workspace_size(const AttendArgs& args, const cuda_backend::DeviceInfo& info,
                      size_t* bytes) {
  const Schedule s = make_schedule(args, info);
  *bytes = timeline::kBytes + claims_bytes(s) + v_bounds_bytes(args);
  if (s.strategy != kOnePass) *bytes += portable::split_workspace_bytes(args, plan_layout(args, s));
  return Status::success();
}

Status attend(const AttendArgs& args, const cuda_backend::DeviceInfo& info, Workspace ws,
              cudaStream_t stream, const Plan* plan) {
  const Schedule s = make_schedule(args, info);
  if (plan != nullptr && plan->strategy != s.plan_id()) {
    return Status(StatusCode::invalid_argument,
                  "smla::attend: plan: expected a plan made on this device for these arguments "
                  "(Hopper schedule " +
                      std::to_string(s.plan_id()) + "), got one for schedule " +
                      std::to_string(plan->strategy));
  }
  if (tokens(args) == 0) return Status::success();
  const AttendVariant* variant = portable::find_variant(args, kVariants);
  portable::AttendParams p = portable::attend_params(args, s.head_tiles);
  if constexpr (timeline::kEnabled) {
    p.timeline = static_cast<uint64_t*>(take_front(ws, timeline::kBytes));
  }
  if (s.claims_tokens()) {
    p.claims = static_cast<int32_t*>(take_front(ws, claims_bytes(s)));
    SMLA_CUDA_TRY(cudaMemsetAsync(p.claims, 0, sizeof(int32_t) * s.head_tiles, stream),
                  "attend", "cudaMemsetAsync(token counters)");
  }
  const size_t table_bytes = v_bounds_bytes(args);
  // The tables' room is taken whether or not they are made: the rest is the split tokens'
  // (split, rounds and tail).
  auto* const table = static_cast<uint32_t*>(take_front(ws, table_bytes));
  if (tables_fit(args, table_bytes)) {
    p.main_v_bounds = table;
    if (Status st = launch_v_bounds(p.main, portable::d_qk(args), table, stream); !st.ok()) {
      return st;
    }
    if (args.extra_kv.present()) {
      uint32_t* const extra_table = table + args.kv.slots();
      p.extra_v_bounds = extra_table;
      if (Status st = launch_v_bounds(p.extra, portable::d_qk(args), extra_table, stream);
          !st.ok()) {
        return st;
      }
    }
  }
  if (s.strategy == kOnePass) {
    // One CTA per SM at most, each walking every units-th token or claiming its next token
    // (for_each_item): the next token's loads overlap the end of the last one instead of
    // waiting for a new CTA.
    return variant->launch(p, static_cast<int>(one_pass_units(args, s.head_tiles, info)), stream);
  }
  return portable::run_split(args, p, plan_layout(args, s), ws, plan, variant->launch, info,
                             stream);
}

}  // namespace smla::hopper
