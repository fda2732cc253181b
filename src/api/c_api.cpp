// The C ABI of smla.h over the C++ API. The C structs mirror the C++ views field by field
// (the device is split into kind and index), so each call converts, forwards, and records
// the message of a failure in a thread-local buffer for smla_last_error().
#include "smla/smla.h"

#include <cstring>
#include <exception>
#include <string>
#include <type_traits>

#include "smla/ops.hpp"

namespace {

using smla::Status;
using smla::StatusCode;

// The message of the last failed call on this thread; a successful call leaves it alone so
// it can still be read after a later cleanup call succeeds.
thread_local std::string last_error;

smla_status_code record(const Status& s) noexcept {
  if (!s.ok()) {
    try {
      last_error = s.message();
    } catch (...) {
      // Out of memory while copying a message: keep the code, lose the text.
      last_error.clear();
    }
  }
  return static_cast<smla_status_code>(s.code());
}

smla_status_code null_argument(const char* op, const char* name) noexcept {
  try {
    return record(Status(StatusCode::invalid_argument,
                         std::string(op) + ": argument '" + name +
                             "': expected a pointer to the argument, got NULL"));
  } catch (...) {
    return SMLA_INVALID_ARGUMENT;
  }
}

// A C enum field's value as its C++ counterpart. C callers may store any int there (the
// tests pass 9 as a dtype, which validation rejects), and loading a value outside a C++
// enum's range is undefined, so the bytes are read as the underlying integer.
template <class CppEnum, class CEnum>
CppEnum enum_field(const CEnum& field) {
  std::underlying_type_t<CEnum> raw;
  static_assert(sizeof raw == sizeof field);
  std::memcpy(&raw, &field, sizeof raw);
  return static_cast<CppEnum>(raw);
}

smla::Device to_device(const smla_device_kind& kind, int32_t index) {
  return {enum_field<smla::DeviceKind>(kind), index};
}

smla::TensorView to_view(const smla_tensor& t) {
  smla::TensorView v;
  v.data = t.data;
  v.dtype = enum_field<smla::DType>(t.dtype);
  v.rank = t.rank;
  for (int d = 0; d < SMLA_MAX_RANK; ++d) {
    v.shape[d] = t.shape[d];
    v.stride[d] = t.stride[d];
  }
  v.device = to_device(t.device_kind, t.device_index);
  return v;
}

smla::KvPool to_pool(const smla_pool& p) {
  smla::KvPool pool;
  pool.format = enum_field<smla::KvFormat>(p.format);
  pool.data = p.data;
  pool.num_blocks = p.num_blocks;
  pool.block_size = p.block_size;
  pool.block_stride = p.block_stride;
  pool.scales = p.scales;
  pool.scale_block_stride = p.scale_block_stride;
  pool.device = to_device(p.device_kind, p.device_index);
  return pool;
}

smla::AttendArgs to_attend(const smla_attend_args& a) {
  smla::AttendArgs args;
  args.q = to_view(a.q);
  args.kv = to_pool(a.kv);
  args.indices = to_view(a.indices);
  args.lengths = to_view(a.lengths);
  args.extra_kv = to_pool(a.extra_kv);
  args.extra_indices = to_view(a.extra_indices);
  args.extra_lengths = to_view(a.extra_lengths);
  args.sink = to_view(a.sink);
  args.scale = a.scale;
  args.out = to_view(a.out);
  args.lse = to_view(a.lse);
  args.max_logits = to_view(a.max_logits);
  return args;
}

smla::Plan to_plan(const smla_plan& p) { return {p.data, p.bytes, p.key, p.strategy}; }

smla::Stream to_stream(smla_stream s) { return static_cast<smla::Stream>(s); }

}  // namespace

extern "C" {

const char* smla_last_error(void) { return last_error.c_str(); }

const char* smla_status_name(smla_status_code code) {
  return smla::status_code_name(static_cast<StatusCode>(code));
}

const char* smla_version(void) { return smla::version(); }

smla_status_code smla_plan_size(const smla_attend_args* args, size_t* bytes) {
  if (args == nullptr) return null_argument("smla::plan_size", "args");
  return record(smla::plan_size(to_attend(*args), bytes));
}

smla_status_code smla_make_plan(const smla_attend_args* args, smla_plan* plan,
                                smla_stream stream) {
  if (args == nullptr) return null_argument("smla::make_plan", "args");
  if (plan == nullptr) return null_argument("smla::make_plan", "plan");
  smla::Plan p = to_plan(*plan);
  const smla_status_code code = record(smla::make_plan(to_attend(*args), &p, to_stream(stream)));
  // A failed call writes nothing, the plan included.
  if (code == SMLA_OK) {
    plan->key = p.key;
    plan->strategy = p.strategy;
  }
  return code;
}

smla_status_code smla_attend_workspace_size(const smla_attend_args* args, size_t* bytes) {
  if (args == nullptr) return null_argument("smla::attend_workspace_size", "args");
  return record(smla::attend_workspace_size(to_attend(*args), bytes));
}

smla_status_code smla_attend(const smla_attend_args* args, void* workspace,
                             size_t workspace_bytes, smla_stream stream, const smla_plan* plan) {
  if (args == nullptr) return null_argument("smla::attend", "args");
  const smla::Plan p = plan != nullptr ? to_plan(*plan) : smla::Plan{};
  return record(smla::attend(to_attend(*args), {workspace, workspace_bytes}, to_stream(stream),
                             plan != nullptr ? &p : nullptr));
}

smla_status_code smla_combine(const smla_combine_args* args, smla_stream stream) {
  if (args == nullptr) return null_argument("smla::combine", "args");
  smla::CombineArgs c;
  c.partial_out = to_view(args->partial_out);
  c.partial_lse = to_view(args->partial_lse);
  c.sink = to_view(args->sink);
  c.out = to_view(args->out);
  c.lse = to_view(args->lse);
  return record(smla::combine(c, to_stream(stream)));
}

smla_status_code smla_quantize(const smla_tensor* rows, const smla_pool* pool,
                               smla_stream stream) {
  if (rows == nullptr) return null_argument("smla::quantize", "rows");
  if (pool == nullptr) return null_argument("smla::quantize", "pool");
  return record(smla::quantize(to_view(*rows), to_pool(*pool), to_stream(stream)));
}

smla_status_code smla_dequantize(const smla_pool* pool, const smla_tensor* rows,
                                 smla_stream stream) {
  if (pool == nullptr) return null_argument("smla::dequantize", "pool");
  if (rows == nullptr) return null_argument("smla::dequantize", "rows");
  return record(smla::dequantize(to_pool(*pool), to_view(*rows), to_stream(stream)));
}

smla_status_code smla_write_cache(const smla_tensor* rows, const smla_tensor* slots,
                                  const smla_pool* pool, smla_stream stream) {
  if (rows == nullptr) return null_argument("smla::write_cache", "rows");
  if (slots == nullptr) return null_argument("smla::write_cache", "slots");
  if (pool == nullptr) return null_argument("smla::write_cache", "pool");
  return record(smla::write_cache(to_view(*rows), to_view(*slots), to_pool(*pool),
                                  to_stream(stream)));
}

}  // extern "C"
