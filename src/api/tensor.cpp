// TensorView helpers and dtype facts.
#include "smla/tensor.hpp"

#include <cstddef>
#include <cstdint>

namespace smla {

int dtype_size(DType dtype) {
  switch (dtype) {
    case DType::bf16: return 2;
    case DType::f32: return 4;
    case DType::i32: return 4;
    case DType::u8: return 1;
    case DType::i8: return 1;
  }
  // Out-of-enum values (through the C ABI) have no size; validation rejects them first.
  return 0;
}

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::bf16: return "bf16";
    case DType::f32: return "f32";
    case DType::i32: return "i32";
    case DType::u8: return "u8";
    case DType::i8: return "i8";
  }
  return "unknown";
}

int64_t TensorView::numel() const {
  // rank > kMaxRank only comes from a shape list too long to store; validation names it.
  if (rank <= 0 || rank > kMaxRank) return 0;
  // Zero first: an empty tensor's other extents may be anything (validation bounds them
  // only for tensors with elements). A product past int64 saturates instead of overflowing.
  for (int32_t d = 0; d < rank; ++d)
    if (shape[d] == 0) return 0;
  int64_t n = 1;
  for (int32_t d = 0; d < rank; ++d)
    if (__builtin_mul_overflow(n, shape[d], &n)) return INT64_MAX;
  return n;
}

bool TensorView::is_contiguous() const {
  // Row-major check; a dimension of extent 1 may carry any stride (PyTorch's rule), and an
  // empty tensor is trivially contiguous.
  if (rank > kMaxRank) return false;
  if (numel() == 0) return true;
  int64_t expected = 1;
  for (int32_t d = rank - 1; d >= 0; --d) {
    if (shape[d] != 1 && stride[d] != expected) return false;
    expected *= shape[d];
  }
  return true;
}

TensorView TensorView::contiguous(void* data, DType dtype, std::initializer_list<int64_t> shape,
                                  Device device) {
  TensorView v;
  v.data = data;
  v.dtype = dtype;
  v.device = device;
  // A longer list keeps its true rank (so validation can report it) but stores only
  // kMaxRank extents.
  v.rank = static_cast<int32_t>(shape.size());
  int32_t d = 0;
  for (int64_t extent : shape) {
    if (d == kMaxRank) break;
    v.shape[d++] = extent;
  }
  int64_t stride = 1;
  for (int32_t i = d - 1; i >= 0; --i) {
    v.stride[i] = stride;
    stride *= v.shape[i];
  }
  return v;
}

TensorView TensorView::strided(void* data, DType dtype, std::initializer_list<int64_t> shape,
                               std::initializer_list<int64_t> stride, Device device) {
  // Strides missing from a short list stay row-major.
  TensorView v = contiguous(data, dtype, shape, device);
  int32_t d = 0;
  for (int64_t s : stride) {
    if (d == kMaxRank || d == v.rank) break;
    v.stride[d++] = s;
  }
  return v;
}

}  // namespace smla
