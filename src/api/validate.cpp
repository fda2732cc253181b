// The per-op argument rules of validate.hpp, built from the blocks of checks.hpp. Each op
// checks in the same order: shapes/dtypes/strides of every argument, then the option
// combinations, then placement (one device, pointers really there), then aliasing.
#include "api/validate.hpp"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "api/checks.hpp"
#include "api/cuda_backend.hpp"

namespace smla::api {
namespace {

constexpr int kMaxHeads = 128;
// Entries one token selects (k + k_x), and partials one combine merges: the GPU kernels count
// both in int32 (with room to round a count up to a block), far above any model's top-k.
constexpr int64_t kMaxSelected = int64_t{1} << 30;

bool valid_device(Device d) {
  return (d.kind == DeviceKind::cpu || d.kind == DeviceKind::cuda) && d.index >= 0;
}

Status check_call_device(const char* op, const char* name, Device device) {
  if (!valid_device(device))
    return invalid_arg(op, name, "a device of kind cpu or cuda with index >= 0",
                       device_string(device) + " index " + std::to_string(device.index));
  return Status::success();
}

Status check_heads(const char* op, const char* name, const TensorView& t, int64_t h_q) {
  if (h_q < 1 || h_q > kMaxHeads)
    return invalid_arg(op, name, "h_q in 1.." + std::to_string(kMaxHeads) + " heads",
                       "h_q=" + std::to_string(h_q) + " in shape " + shape_string(t));
  return Status::success();
}

Status check_d_qk(const char* op, const char* name, const TensorView& t, int64_t d_qk) {
  if (!is_model_d_qk(d_qk))
    return invalid_arg(op, name, "d_qk 576 (DeepSeek-V3.2) or 512 (DeepSeek-V4)",
                       "d_qk=" + std::to_string(d_qk) + " in shape " + shape_string(t));
  return Status::success();
}

// Placement of every argument: one device, then the device itself (present in this build
// and process), then each pointer asked of the CUDA seam.
Status check_placement(const char* op, Device device, const std::vector<Placed>& placed,
                       const std::vector<Pointer>& pointers) {
  SMLA_RETURN_IF_ERROR(check_same_device(op, device, placed));
  SMLA_RETURN_IF_ERROR(cuda_backend::check_device(device, op));
  return check_pointers(op, device, pointers);
}

// The rows of quantize, dequantize and write_cache, and the pool they meet.
Status check_rows_and_pool(const char* op, const TensorView& rows, bool rows_written,
                           const KvPool& pool) {
  const Device device = rows.device;
  SMLA_RETURN_IF_ERROR(check_ranks(op, {{"rows", &rows}}));
  SMLA_RETURN_IF_ERROR(check_call_device(op, "rows", device));
  TensorRule rule{{DType::bf16}, {{"N", kAny}, {"d_qk", kAny}}};
  rule.unit_last_stride = true;
  rule.rows16 = true;
  rule.output = rows_written;
  SMLA_RETURN_IF_ERROR(check_tensor(op, "rows", rows, rule, device, Need::data));
  const int64_t d_qk = rows.shape[1];
  SMLA_RETURN_IF_ERROR(check_d_qk(op, "rows", rows, d_qk));
  return check_pool(op, "pool", pool, static_cast<int>(d_qk), device, Need::data);
}

Status check_rows_fit(const char* op, const TensorView& rows, const KvPool& pool) {
  if (rows.shape[0] > pool.slots())
    return invalid_arg(op, "rows",
                       "at most " + std::to_string(pool.slots()) + " rows (the pool's slots: " +
                           std::to_string(pool.num_blocks) + " blocks x " +
                           std::to_string(pool.block_size) + ")",
                       "N=" + std::to_string(rows.shape[0]) + " in shape " + shape_string(rows));
  return Status::success();
}

void add_pool_spans(std::vector<Span>* spans, const char* name, const KvPool& pool, int d_qk) {
  for (Span& s : pool_spans(name, pool, d_qk)) spans->push_back(std::move(s));
}

std::vector<Span> attend_input_spans(const AttendArgs& a) {
  const int d_qk = static_cast<int>(a.q.shape[2]);
  std::vector<Span> spans{tensor_span("q", a.q), tensor_span("indices", a.indices),
                          tensor_span("lengths", a.lengths),
                          tensor_span("extra_indices", a.extra_indices),
                          tensor_span("extra_lengths", a.extra_lengths),
                          tensor_span("sink", a.sink)};
  add_pool_spans(&spans, "kv", a.kv, d_qk);
  add_pool_spans(&spans, "extra_kv", a.extra_kv, d_qk);
  return spans;
}

std::vector<Span> attend_output_spans(const AttendArgs& a) {
  return {tensor_span("out", a.out), tensor_span("lse", a.lse),
          tensor_span("max_logits", a.max_logits)};
}

}  // namespace

Status validate_attend(const char* op, const AttendArgs& a, AttendUse use) {
  const Need need = use == AttendUse::size_query ? Need::shapes_only : Need::data;
  const Device device = a.q.device;
  SMLA_RETURN_IF_ERROR(check_ranks(
      op, {{"q", &a.q}, {"indices", &a.indices}, {"lengths", &a.lengths},
           {"extra_indices", &a.extra_indices}, {"extra_lengths", &a.extra_lengths},
           {"sink", &a.sink}, {"out", &a.out}, {"lse", &a.lse}, {"max_logits", &a.max_logits}}));
  SMLA_RETURN_IF_ERROR(check_call_device(op, "q", device));

  // q defines T, h_q and d_qk for every other argument.
  TensorRule q_rule{{DType::bf16}, {{"T", kAny}, {"h_q", kAny}, {"d_qk", kAny}}};
  q_rule.unit_last_stride = true;
  q_rule.rows16 = true;
  SMLA_RETURN_IF_ERROR(check_tensor(op, "q", a.q, q_rule, device, need));
  const int64_t T = a.q.shape[0], h_q = a.q.shape[1], d_qk = a.q.shape[2];
  SMLA_RETURN_IF_ERROR(check_heads(op, "q", a.q, h_q));
  SMLA_RETURN_IF_ERROR(check_d_qk(op, "q", a.q, d_qk));

  SMLA_RETURN_IF_ERROR(check_pool(op, "kv", a.kv, static_cast<int>(d_qk), device, need));
  TensorRule idx_rule{{DType::i32}, {{"T", T}, {"k", kAny}}, "with T matching q"};
  idx_rule.unit_last_stride = true;
  SMLA_RETURN_IF_ERROR(check_tensor(op, "indices", a.indices, idx_rule, device, need));
  const TensorRule len_rule{{DType::i32}, {{"T", T}}, "with T matching q"};
  if (a.lengths.present())
    SMLA_RETURN_IF_ERROR(check_tensor(op, "lengths", a.lengths, len_rule, device, need));

  // The extra pool and its indices come together; its lengths only with them.
  if (a.extra_kv.present() && !a.extra_indices.present())
    return invalid_arg(op, "extra_indices", "shape [T=" + std::to_string(T) +
                                                ", k_x] since extra_kv is given",
                       "an absent tensor (rank 0)");
  if (!a.extra_kv.present() && a.extra_indices.present())
    return invalid_arg(op, "extra_kv", "a pool since extra_indices is given",
                       "an absent pool (null data, 0 blocks)");
  if (a.extra_kv.present()) {
    SMLA_RETURN_IF_ERROR(
        check_pool(op, "extra_kv", a.extra_kv, static_cast<int>(d_qk), device, need));
    SMLA_RETURN_IF_ERROR(
        check_tensor(op, "extra_indices", a.extra_indices, idx_rule, device, need));
  }
  const int64_t selected =
      a.indices.shape[1] + (a.extra_kv.present() ? a.extra_indices.shape[1] : 0);
  if (selected > kMaxSelected)
    return invalid_arg(op, a.extra_kv.present() ? "extra_indices" : "indices",
                       "at most 2^30 entries per token (k + k_x)",
                       "k + k_x = " + std::to_string(selected));
  if (a.extra_lengths.present()) {
    if (!a.extra_kv.present())
      return invalid_arg(op, "extra_lengths", "an absent tensor since no extra_kv is given",
                         "shape " + shape_string(a.extra_lengths));
    SMLA_RETURN_IF_ERROR(
        check_tensor(op, "extra_lengths", a.extra_lengths, len_rule, device, need));
  }

  if (a.sink.present()) {
    const TensorRule sink_rule{{DType::f32}, {{"h_q", h_q}}, "with h_q matching q"};
    SMLA_RETURN_IF_ERROR(check_tensor(op, "sink", a.sink, sink_rule, device, need));
  }
  if (!std::isfinite(a.scale))
    return invalid_arg(op, "scale", "a finite number", std::to_string(a.scale));

  // Outputs. A size query or a plan may be made before the outputs exist.
  TensorRule out_rule{{DType::bf16}, {{"T", T}, {"h_q", h_q}, {"d_v", kDv}},
                      "with T and h_q matching q"};
  out_rule.unit_last_stride = true;
  out_rule.rows16 = true;
  out_rule.output = true;
  if (use == AttendUse::run || a.out.present())
    SMLA_RETURN_IF_ERROR(check_tensor(op, "out", a.out, out_rule, device, need));
  TensorRule stat_rule{{DType::f32}, {{"T", T}, {"h_q", h_q}}, "with T and h_q matching q"};
  stat_rule.output = true;
  if (a.lse.present())
    SMLA_RETURN_IF_ERROR(check_tensor(op, "lse", a.lse, stat_rule, device, need));
  if (a.max_logits.present())
    SMLA_RETURN_IF_ERROR(check_tensor(op, "max_logits", a.max_logits, stat_rule, device, need));

  std::vector<Placed> placed{{"q", a.q.device}, {"kv", a.kv.device}, {"indices", a.indices.device}};
  auto place_if = [&placed](const char* name, const TensorView& t) {
    if (t.present()) placed.push_back({name, t.device});
  };
  place_if("lengths", a.lengths);
  if (a.extra_kv.present()) placed.push_back({"extra_kv", a.extra_kv.device});
  place_if("extra_indices", a.extra_indices);
  place_if("extra_lengths", a.extra_lengths);
  place_if("sink", a.sink);
  place_if("out", a.out);
  place_if("lse", a.lse);
  place_if("max_logits", a.max_logits);
  SMLA_RETURN_IF_ERROR(check_placement(
      op, device, placed,
      {{"q", a.q.data}, {"kv.data", a.kv.data}, {"kv.scales", a.kv.scales},
       {"indices", a.indices.data}, {"lengths", a.lengths.data},
       {"extra_kv.data", a.extra_kv.data}, {"extra_kv.scales", a.extra_kv.scales},
       {"extra_indices", a.extra_indices.data}, {"extra_lengths", a.extra_lengths.data},
       {"sink", a.sink.data}, {"out", a.out.data}, {"lse", a.lse.data},
       {"max_logits", a.max_logits.data}}));

  return check_disjoint(op, attend_output_spans(a), attend_input_spans(a));
}

Status validate_workspace(const char* op, const AttendArgs& a, Workspace workspace,
                          size_t needed) {
  const Device device = a.q.device;
  if (workspace.bytes < needed)
    return invalid_arg(op, "workspace",
                       "at least " + std::to_string(needed) +
                           " bytes (smla::attend_workspace_size for these arguments)",
                       std::to_string(workspace.bytes) + " bytes");
  if (needed == 0) return Status::success();
  if (workspace.data == nullptr)
    return invalid_arg(op, "workspace", "a data pointer for " + std::to_string(needed) + " bytes",
                       "null");
  if (device.kind == DeviceKind::cuda && reinterpret_cast<uintptr_t>(workspace.data) % 16 != 0)
    return invalid_arg(op, "workspace", "an address aligned to 16 bytes on a CUDA device",
                       "an unaligned address");
  SMLA_RETURN_IF_ERROR(check_pointers(op, device, {{"workspace", workspace.data}}));
  Span ws{"workspace", reinterpret_cast<uintptr_t>(workspace.data)};
  ws.hi = ws.lo + workspace.bytes;
  std::vector<Span> args = attend_input_spans(a);
  for (Span& s : attend_output_spans(a)) args.push_back(std::move(s));
  return check_disjoint(op, {ws}, args);
}

Status validate_combine(const char* op, const CombineArgs& a) {
  const Device device = a.partial_out.device;
  SMLA_RETURN_IF_ERROR(check_ranks(op, {{"partial_out", &a.partial_out},
                                        {"partial_lse", &a.partial_lse}, {"sink", &a.sink},
                                        {"out", &a.out}, {"lse", &a.lse}}));
  SMLA_RETURN_IF_ERROR(check_call_device(op, "partial_out", device));

  // partial_out defines S, T and h_q.
  TensorRule part_rule{{DType::f32, DType::bf16},
                       {{"S", kAny}, {"T", kAny}, {"h_q", kAny}, {"d_v", kDv}}};
  part_rule.unit_last_stride = true;
  part_rule.rows16 = true;
  SMLA_RETURN_IF_ERROR(check_tensor(op, "partial_out", a.partial_out, part_rule, device,
                                    Need::data));
  const int64_t S = a.partial_out.shape[0], T = a.partial_out.shape[1],
                h_q = a.partial_out.shape[2];
  if (S < 1 || S > kMaxSelected)
    return invalid_arg(op, "partial_out", "1 to 2^30 partials (S)",
                       "S=" + std::to_string(S) + " in shape " + shape_string(a.partial_out));
  SMLA_RETURN_IF_ERROR(check_heads(op, "partial_out", a.partial_out, h_q));

  const TensorRule lse_in_rule{{DType::f32}, {{"S", S}, {"T", T}, {"h_q", h_q}},
                               "matching partial_out"};
  SMLA_RETURN_IF_ERROR(check_tensor(op, "partial_lse", a.partial_lse, lse_in_rule, device,
                                    Need::data));
  if (a.sink.present()) {
    const TensorRule sink_rule{{DType::f32}, {{"h_q", h_q}}, "with h_q matching partial_out"};
    SMLA_RETURN_IF_ERROR(check_tensor(op, "sink", a.sink, sink_rule, device, Need::data));
  }
  TensorRule out_rule{{DType::bf16}, {{"T", T}, {"h_q", h_q}, {"d_v", kDv}},
                      "with T and h_q matching partial_out"};
  out_rule.unit_last_stride = true;
  out_rule.rows16 = true;
  out_rule.output = true;
  SMLA_RETURN_IF_ERROR(check_tensor(op, "out", a.out, out_rule, device, Need::data));
  if (a.lse.present()) {
    TensorRule lse_rule{{DType::f32}, {{"T", T}, {"h_q", h_q}},
                        "with T and h_q matching partial_out"};
    lse_rule.output = true;
    SMLA_RETURN_IF_ERROR(check_tensor(op, "lse", a.lse, lse_rule, device, Need::data));
  }

  std::vector<Placed> placed{{"partial_out", a.partial_out.device},
                             {"partial_lse", a.partial_lse.device},
                             {"out", a.out.device}};
  if (a.sink.present()) placed.push_back({"sink", a.sink.device});
  if (a.lse.present()) placed.push_back({"lse", a.lse.device});
  SMLA_RETURN_IF_ERROR(check_placement(
      op, device, placed,
      {{"partial_out", a.partial_out.data}, {"partial_lse", a.partial_lse.data},
       {"sink", a.sink.data}, {"out", a.out.data}, {"lse", a.lse.data}}));

  return check_disjoint(op, {tensor_span("out", a.out), tensor_span("lse", a.lse)},
                        {tensor_span("partial_out", a.partial_out),
                         tensor_span("partial_lse", a.partial_lse), tensor_span("sink", a.sink)});
}

Status validate_quantize(const char* op, const TensorView& rows, const KvPool& pool) {
  SMLA_RETURN_IF_ERROR(check_rows_and_pool(op, rows, /*rows_written=*/false, pool));
  SMLA_RETURN_IF_ERROR(check_rows_fit(op, rows, pool));
  SMLA_RETURN_IF_ERROR(check_placement(
      op, rows.device, {{"rows", rows.device}, {"pool", pool.device}},
      {{"rows", rows.data}, {"pool.data", pool.data}, {"pool.scales", pool.scales}}));
  std::vector<Span> written;
  add_pool_spans(&written, "pool", pool, static_cast<int>(rows.shape[1]));
  return check_disjoint(op, written, {tensor_span("rows", rows)});
}

Status validate_dequantize(const char* op, const KvPool& pool, const TensorView& rows) {
  SMLA_RETURN_IF_ERROR(check_rows_and_pool(op, rows, /*rows_written=*/true, pool));
  SMLA_RETURN_IF_ERROR(check_rows_fit(op, rows, pool));
  SMLA_RETURN_IF_ERROR(check_placement(
      op, rows.device, {{"rows", rows.device}, {"pool", pool.device}},
      {{"rows", rows.data}, {"pool.data", pool.data}, {"pool.scales", pool.scales}}));
  std::vector<Span> read;
  add_pool_spans(&read, "pool", pool, static_cast<int>(rows.shape[1]));
  return check_disjoint(op, {tensor_span("rows", rows)}, read);
}

Status validate_write_cache(const char* op, const TensorView& rows, const TensorView& slots,
                            const KvPool& pool) {
  SMLA_RETURN_IF_ERROR(check_rows_and_pool(op, rows, /*rows_written=*/false, pool));
  SMLA_RETURN_IF_ERROR(check_ranks(op, {{"slots", &slots}}));
  const TensorRule slot_rule{{DType::i32}, {{"N", rows.shape[0]}}, "with N matching rows"};
  SMLA_RETURN_IF_ERROR(check_tensor(op, "slots", slots, slot_rule, rows.device, Need::data));
  SMLA_RETURN_IF_ERROR(check_placement(
      op, rows.device, {{"rows", rows.device}, {"slots", slots.device}, {"pool", pool.device}},
      {{"rows", rows.data}, {"slots", slots.data}, {"pool.data", pool.data},
       {"pool.scales", pool.scales}}));
  std::vector<Span> written;
  add_pool_spans(&written, "pool", pool, static_cast<int>(rows.shape[1]));
  return check_disjoint(op, written, {tensor_span("rows", rows), tensor_span("slots", slots)});
}

}  // namespace smla::api
