// A plain float64 evaluation of combine (include/smla/ops.hpp), written apart from
// src/reference/combine.cpp: the oracle for the reference and the GPU combine.
#pragma once

#include "common/naive_attention.hpp"
#include "smla/ops.hpp"

namespace smla::test {

// out and lse of combine for host arguments (max_logits stays empty).
AttendResult naive_combine(const CombineArgs& args);

}  // namespace smla::test
