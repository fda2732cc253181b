// Building blocks of argument validation; see checks.hpp for the rules they enforce.
#include "api/checks.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "api/cuda_backend.hpp"

namespace smla::api {
namespace {

// A rank beyond kMaxRank only comes from a TensorView built with too long a shape list; it
// stores kMaxRank extents, so that is all there is to print or check.
int32_t stored_rank(const TensorView& t) { return std::clamp(t.rank, 0, kMaxRank); }

std::string list_string(const int64_t* values, int32_t n) {
  std::string s = "[";
  for (int32_t i = 0; i < n; ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(values[i]);
  }
  return s + "]";
}

std::string strides_string(const TensorView& t) { return list_string(t.stride, stored_rank(t)); }

std::string dims_string(const std::vector<Dim>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) s += ", ";
    s += dims[i].symbol;
    if (dims[i].extent != kAny) {
      s += '=';
      s += std::to_string(dims[i].extent);
    }
  }
  return s + "]";
}

std::string dtype_string(DType dtype) {
  std::string name = dtype_name(dtype);
  // Out-of-enum values arrive through the C ABI; show the number that was passed.
  if (name == "unknown") name += " (" + std::to_string(static_cast<int>(dtype)) + ")";
  return name;
}

std::string address_string(const void* p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%p", p);
  return buf;
}

bool aligned(uintptr_t value, uintptr_t alignment) { return value % alignment == 0; }
bool aligned(const void* p, uintptr_t alignment) {
  return aligned(reinterpret_cast<uintptr_t>(p), alignment);
}

// a * b + c in int64, false on overflow.
bool mul_add_fits(int64_t a, int64_t b, int64_t c, int64_t* result) {
  int64_t product = 0;
  return !__builtin_mul_overflow(a, b, &product) && !__builtin_add_overflow(product, c, result);
}

// Whether the bytes from a tensor's first element to its last, and its element count, fit
// int64 (the aliasing checks and the backends compute both). Extents and strides are
// non-negative here; an empty tensor spans nothing.
bool byte_extent_fits(const TensorView& t) {
  for (int32_t d = 0; d < t.rank; ++d)
    if (t.shape[d] == 0) return true;
  int64_t count = 1, last = 0;
  for (int32_t d = 0; d < t.rank; ++d) {
    if (!mul_add_fits(count, t.shape[d], 0, &count) ||
        !mul_add_fits(t.shape[d] - 1, t.stride[d], last, &last))
      return false;
  }
  int64_t bytes = 0;
  return mul_add_fits(last, dtype_size(t.dtype), dtype_size(t.dtype), &bytes);
}

// An output must give each element its own address. Sorting the dims of extent > 1 by
// stride, each stride must step over the whole extent of the dims inside it: sufficient,
// exact for every layout a framework produces, and O(rank log rank).
bool has_no_self_overlap(const TensorView& t) {
  std::vector<std::pair<int64_t, int64_t>> dims;  // (stride, extent)
  for (int32_t d = 0; d < stored_rank(t); ++d)
    if (t.shape[d] > 1) dims.emplace_back(t.stride[d], t.shape[d]);
  std::sort(dims.begin(), dims.end());
  int64_t reach = 1;  // elements covered by the dims inside the current one
  for (const auto& [stride, extent] : dims) {
    if (stride < reach) return false;
    // Past int64, no further dim can step over it (its stride would have to be larger).
    if (__builtin_mul_overflow(stride, extent, &reach)) reach = INT64_MAX;
  }
  return true;
}

}  // namespace

std::string shape_string(const TensorView& t) { return list_string(t.shape, stored_rank(t)); }

std::string device_string(Device device) {
  switch (device.kind) {
    // The CPU has one index, 0; another one is shown so a mismatch message makes sense.
    case DeviceKind::cpu: return device.index == 0 ? "cpu" : "cpu:" + std::to_string(device.index);
    case DeviceKind::cuda: return "cuda:" + std::to_string(device.index);
  }
  return "unknown device kind " + std::to_string(static_cast<int>(device.kind));
}

Status invalid_arg(const char* op, const std::string& name, const std::string& expected,
                   const std::string& given) {
  return Status(StatusCode::invalid_argument, std::string(op) + ": argument '" + name +
                                                  "': expected " + expected + ", got " + given);
}

Status check_tensor(const char* op, const char* name, const TensorView& t,
                    const TensorRule& rule, Device device, Need need) {
  std::string expected_shape = "shape " + dims_string(rule.dims);
  if (rule.shape_note[0] != '\0') expected_shape += std::string(" ") + rule.shape_note;

  if (!t.present()) return invalid_arg(op, name, expected_shape, "an absent tensor (rank 0)");
  if (t.rank != static_cast<int32_t>(rule.dims.size()))
    return invalid_arg(op, name, expected_shape,
                       "rank " + std::to_string(t.rank) + " shape " + shape_string(t));
  for (int32_t d = 0; d < t.rank; ++d) {
    const int64_t want = rule.dims[d].extent;
    if (t.shape[d] < 0 || (want != kAny && t.shape[d] != want))
      return invalid_arg(op, name, expected_shape, shape_string(t));
  }

  if (std::find(rule.dtypes.begin(), rule.dtypes.end(), t.dtype) == rule.dtypes.end()) {
    std::string want;
    for (DType d : rule.dtypes) want += (want.empty() ? "" : " or ") + dtype_string(d);
    return invalid_arg(op, name, "dtype " + want, dtype_string(t.dtype));
  }

  for (int32_t d = 0; d < t.rank; ++d)
    if (t.stride[d] < 0)
      return invalid_arg(op, name, "non-negative strides", "strides " + strides_string(t));
  if (!byte_extent_fits(t))
    return invalid_arg(op, name, "shape and strides spanning at most 2^63 - 1 bytes",
                       "shape " + shape_string(t) + " strides " + strides_string(t));
  // An empty tensor has no element to overlap, align or load, whatever its strides (NumPy 2
  // makes every stride of a fresh empty array 0).
  const bool empty = t.numel() == 0;
  const int32_t last = t.rank - 1;
  if (rule.unit_last_stride && !empty && t.shape[last] > 1 && t.stride[last] != 1)
    return invalid_arg(op, name, "unit stride on the last dim", "strides " + strides_string(t));
  if (rule.output && !empty && !has_no_self_overlap(t))
    return invalid_arg(op, name, "strides giving every element its own address (an output)",
                       "strides " + strides_string(t) + " for shape " + shape_string(t));

  if (!empty && t.data == nullptr && need == Need::data)
    return invalid_arg(op, name, "a data pointer", "null with shape " + shape_string(t));
  if (t.data == nullptr) return Status::success();

  const int esize = dtype_size(t.dtype);
  if (!aligned(t.data, esize))
    return invalid_arg(op, name, "data aligned to " + std::to_string(esize) + " bytes (" +
                                     dtype_string(t.dtype) + ")",
                       "address " + address_string(t.data));
  if (rule.rows16 && device.kind == DeviceKind::cuda && !empty) {
    bool ok = aligned(t.data, 16);
    for (int32_t d = 0; d < last; ++d)
      ok = ok && (t.shape[d] <= 1 || aligned(static_cast<uintptr_t>(t.stride[d] * esize), 16));
    if (!ok)
      return invalid_arg(op, name,
                         "rows 16-byte aligned on a CUDA device (data address and every "
                         "stride but the last a multiple of 16 bytes)",
                         "address " + address_string(t.data) + " strides " + strides_string(t) +
                             " of " + std::to_string(esize) + "-byte elements");
  }
  return Status::success();
}

Status check_ranks(const char* op, std::initializer_list<NamedTensor> tensors) {
  for (const NamedTensor& t : tensors) {
    if (t.tensor->rank < 0)
      return invalid_arg(op, t.name, "a rank >= 0 (0: absent)",
                         "rank " + std::to_string(t.tensor->rank));
  }
  return Status::success();
}

Status check_pool(const char* op, const char* name, const KvPool& pool, int d_qk,
                  Device device, Need need) {
  const std::string n = name;
  const int fmt = static_cast<int>(pool.format);
  if (fmt < static_cast<int>(KvFormat::bf16) || fmt > static_cast<int>(KvFormat::int8_ds_mla))
    return invalid_arg(op, n + ".format", "bf16, fp8_v32, fp8_ds_mla or int8_ds_mla",
                       "format value " + std::to_string(fmt));
  if (!format_supports_d_qk(pool.format, d_qk))
    return invalid_arg(op, n + ".format", "a format holding rows of d_qk=" +
                                              std::to_string(d_qk) + " (from the rows/q)",
                       format_name(pool.format));
  if (pool.block_size <= 0)
    return invalid_arg(op, n + ".block_size", "> 0", std::to_string(pool.block_size));
  if (pool.num_blocks < 0)
    return invalid_arg(op, n + ".num_blocks", ">= 0", std::to_string(pool.num_blocks));
  int64_t slots = 0;
  if (!mul_add_fits(pool.num_blocks, pool.block_size, 0, &slots))
    return invalid_arg(op, n + ".num_blocks",
                       "num_blocks x block_size slots fitting int64 (block_size " +
                           std::to_string(pool.block_size) + ")",
                       std::to_string(pool.num_blocks));
  if (pool.scales != nullptr && pool.format != KvFormat::int8_ds_mla)
    return invalid_arg(op, n + ".scales",
                       "null (separate scales exist only for int8_ds_mla)",
                       "a pointer with format " + std::string(format_name(pool.format)));
  if (pool.slots() > 0 && pool.data == nullptr && need == Need::data)
    return invalid_arg(op, n + ".data",
                       "a data pointer for " + std::to_string(pool.num_blocks) +
                           " blocks of " + std::to_string(pool.block_size) + " slots",
                       "null");

  // f32 scales sit inside the packed layouts; the GPU loads blocks with 16-byte vectors.
  const int64_t align = device.kind == DeviceKind::cuda ? 16 : 4;
  const int64_t packed = pool.packed_block_bytes(d_qk);
  if (pool.num_blocks > 0) {
    if (pool.block_stride < packed)
      return invalid_arg(op, n + ".block_stride",
                         ">= " + std::to_string(packed) + " bytes (one packed block of " +
                             std::to_string(pool.block_size) + " slots in " +
                             format_name(pool.format) + ")",
                         std::to_string(pool.block_stride));
    if (pool.block_stride % align != 0)
      return invalid_arg(op, n + ".block_stride",
                         "a multiple of " + std::to_string(align) + " bytes on " +
                             device_string(device),
                         std::to_string(pool.block_stride));
    int64_t reach = 0;
    if (!mul_add_fits(pool.num_blocks - 1, pool.block_stride, packed, &reach))
      return invalid_arg(op, n + ".block_stride",
                         "blocks spanning at most 2^63 - 1 bytes (" +
                             std::to_string(pool.num_blocks) + " blocks)",
                         std::to_string(pool.block_stride));
  }
  if (pool.data != nullptr && !aligned(pool.data, align))
    return invalid_arg(op, n + ".data",
                       "an address aligned to " + std::to_string(align) + " bytes on " +
                           device_string(device),
                       address_string(pool.data));

  if (pool.int8_split() && pool.num_blocks > 0) {
    const int64_t scale_bytes = int64_t{pool.block_size} * 4;
    int64_t reach = 0;
    if (pool.scale_block_stride < scale_bytes || pool.scale_block_stride % 4 != 0 ||
        !mul_add_fits(pool.num_blocks - 1, pool.scale_block_stride, scale_bytes, &reach))
      return invalid_arg(op, n + ".scale_block_stride",
                         "a multiple of 4 bytes >= " + std::to_string(scale_bytes) + " (" +
                             std::to_string(pool.block_size) +
                             " f32 scales per block), spanning at most 2^63 - 1 bytes",
                         std::to_string(pool.scale_block_stride));
    if (!aligned(pool.scales, 4))
      return invalid_arg(op, n + ".scales", "an address aligned to 4 bytes (f32)",
                         address_string(pool.scales));
  }
  return Status::success();
}

Span tensor_span(const std::string& name, const TensorView& t) {
  Span s{name};
  if (t.data == nullptr || t.numel() == 0) return s;
  int64_t last_element = 0;
  for (int32_t d = 0; d < stored_rank(t); ++d) last_element += (t.shape[d] - 1) * t.stride[d];
  s.lo = reinterpret_cast<uintptr_t>(t.data);
  s.hi = s.lo + static_cast<uintptr_t>((last_element + 1) * dtype_size(t.dtype));
  return s;
}

std::vector<Span> pool_spans(const std::string& name, const KvPool& pool, int d_qk) {
  std::vector<Span> spans;
  if (pool.data != nullptr && pool.num_blocks > 0) {
    Span s{name};
    s.lo = reinterpret_cast<uintptr_t>(pool.data);
    s.hi = s.lo + static_cast<uintptr_t>((pool.num_blocks - 1) * pool.block_stride +
                                         pool.packed_block_bytes(d_qk));
    spans.push_back(s);
  }
  if (pool.int8_split() && pool.num_blocks > 0) {
    Span s{name + ".scales"};
    s.lo = reinterpret_cast<uintptr_t>(pool.scales);
    s.hi = s.lo + static_cast<uintptr_t>((pool.num_blocks - 1) * pool.scale_block_stride +
                                         int64_t{pool.block_size} * 4);
    spans.push_back(s);
  }
  return spans;
}

Status check_disjoint(const char* op, const std::vector<Span>& outputs,
                      const std::vector<Span>& inputs) {
  auto overlap = [](const Span& a, const Span& b) {
    return a.lo < a.hi && b.lo < b.hi && a.lo < b.hi && b.lo < a.hi;
  };
  auto range = [](const Span& s) {
    std::string r = "[";
    r += address_string(reinterpret_cast<const void*>(s.lo));
    r += ", ";
    r += address_string(reinterpret_cast<const void*>(s.hi));
    return r + ")";
  };
  auto fail = [&](const Span& out, const Span& other) {
    return invalid_arg(op, out.name, "memory disjoint from '" + other.name + "'",
                       "overlapping byte ranges " + range(out) + " and " + range(other));
  };
  for (size_t i = 0; i < outputs.size(); ++i) {
    for (const Span& in : inputs)
      if (overlap(outputs[i], in)) return fail(outputs[i], in);
    for (size_t j = i + 1; j < outputs.size(); ++j)
      if (overlap(outputs[i], outputs[j])) return fail(outputs[j], outputs[i]);
  }
  return Status::success();
}

Status check_same_device(const char* op, Device device, const std::vector<Placed>& args) {
  const char* first = args.empty() ? "" : args.front().name;
  for (const Placed& a : args)
    if (!(a.device == device))
      return invalid_arg(op, a.name,
                         "device " + device_string(device) + " (the device of '" + first +
                             "'; every argument of a call on one device)",
                         device_string(a.device));
  return Status::success();
}

Status check_pointers(const char* op, Device device, const std::vector<Pointer>& ptrs) {
  for (const Pointer& p : ptrs) {
    if (p.ptr == nullptr) continue;
    Status s = cuda_backend::check_pointer(p.ptr, device, op, p.name);
    if (!s.ok()) return s;
  }
  return Status::success();
}

}  // namespace smla::api
