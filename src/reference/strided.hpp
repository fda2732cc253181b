// Element addresses inside a strided TensorView (strides in elements, SPEC §4), shared by
// the reference ops so none of them hand-rolls offset arithmetic.
#pragma once

#include <cstdint>

#include "smla/tensor.hpp"

namespace smla::reference {

// Address of element (i0, i1, ...) of `view`, read as T. The caller guarantees the dtype
// and that the indices are within the shape (src/api validated both).
template <class T, class... Index>
T* element(const TensorView& view, Index... index) {
  static_assert(sizeof...(Index) <= kMaxRank, "more indices than a TensorView has dims");
  int64_t offset = 0;
  int dim = 0;
  ((offset += static_cast<int64_t>(index) * view.stride[dim++]), ...);
  return static_cast<T*>(view.data) + offset;
}

}  // namespace smla::reference
