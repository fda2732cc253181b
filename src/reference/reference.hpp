// The CPU reference backend: the oracle for every GPU path. Entry points take arguments that
// src/api has already validated (shapes, dtypes, placement on the CPU).
#pragma once

#include "smla/ops.hpp"

namespace smla::reference {

Status attend(const AttendArgs& args);
Status combine(const CombineArgs& args);
Status quantize(const TensorView& rows, const KvPool& pool);
Status dequantize(const KvPool& pool, const TensorView& rows);
Status write_cache(const TensorView& rows, const TensorView& slots, const KvPool& pool);

}  // namespace smla::reference
