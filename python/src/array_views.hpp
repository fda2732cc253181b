// From DLPack arrays (nanobind ndarrays of NumPy, torch, CuPy, JAX ...) to smla's non-owning
// views. The binding never copies: a view points at the caller's memory, on the caller's
// device, with the caller's strides; the library then validates it like any C++ caller's.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <exception>
#include <optional>
#include <string>
#include <utility>

#include "smla/smla.hpp"

namespace smla::python {

namespace nb = nanobind;

using InArray = nb::ndarray<nb::ro>;  // read by the op: read-only arrays are accepted
using OutArray = nb::ndarray<>;       // written by the op: must be writable

// A failed smla::Status travelling as a C++ exception to the module's translator, which
// raises the Python class of its code (smla._errors). Binding-side rejections use the same
// codes as the library so that Python sees one kind of error per cause.
class StatusError : public std::exception {
 public:
  explicit StatusError(Status status) : status_(std::move(status)) {}
  const Status& status() const { return status_; }
  const char* what() const noexcept override { return status_.message().c_str(); }

 private:
  Status status_;
};

inline void throw_if_error(const Status& status) {
  if (!status.ok()) throw StatusError(status);
}
[[noreturn]] void throw_invalid(const std::string& message);

// The smla dtype of a DLPack dtype. bf16 arrives as DLPack bfloat16 or, from NumPy (which has
// no bfloat16 DLPack export), as uint16 holding bf16 bits. Every 8-bit type (uint8, int8,
// float8_e4m3fn, float8_e8m0fnu) is raw bytes of a cache: u8, except int8 which stays i8.
DType to_dtype(nb::dlpack::dtype dtype, const char* name);
Device to_device(int device_type, int device_id, const char* name);

// A view of `array`; `name` (the Python argument name) appears in every error message.
template <typename Array>
TensorView tensor_view(const Array& array, const char* name) {
  if (array.ndim() < 1 || array.ndim() > static_cast<size_t>(kMaxRank)) {
    throw_invalid(std::string(name) + ": expected an array of rank 1.." +
                  std::to_string(kMaxRank) + ", got rank " + std::to_string(array.ndim()));
  }
  TensorView view;
  view.data = const_cast<void*>(static_cast<const void*>(array.data()));
  view.dtype = to_dtype(array.dtype(), name);
  view.rank = static_cast<int32_t>(array.ndim());
  for (size_t i = 0; i < array.ndim(); ++i) {
    view.shape[i] = static_cast<int64_t>(array.shape(i));
    view.stride[i] = array.stride(i);
  }
  view.device = to_device(array.device_type(), array.device_id(), name);
  return view;
}

// An absent optional argument is the library's rank-0 view.
template <typename Array>
TensorView optional_view(const std::optional<Array>& array, const char* name) {
  return array ? tensor_view(*array, name) : TensorView{};
}

// A KV pool over a cache array [num_blocks, block_size, token] or, FlashMLA's layout,
// [num_blocks, block_size, 1, token], whose token dim holds format_token_bytes(format, d_qk)
// bytes (fp8_ds_mla: 584, the block's data and scales together). Blocks may be strided (a
// padded or sliced cache); tokens inside a block are packed. int8_ds_mla may come as two
// arrays: `scales` [num_blocks, block_size(, 1)] f32 beside values of 512 B per token.
KvPool kv_pool(const InArray& cache, const std::string& format, int d_qk,
               const std::optional<InArray>& scales, const char* name);

KvFormat parse_format_or_throw(const std::string& format, const char* name);

}  // namespace smla::python
