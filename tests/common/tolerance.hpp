// SPEC §1's accuracy contract as GoogleTest predicates. Each returns an AssertionResult whose
// message names the first bad element, its values and how many elements failed, so
// EXPECT_TRUE(check_...) says what went wrong without a debugger.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/combine_workload.hpp"
#include "common/naive_attention.hpp"
#include "common/workload.hpp"

namespace smla::test {

// out [..., 512] against a float64 reference: per element |err| <= 1e-3 + |ref|/64 and over
// the tensor 1 - cos(out, ref) <= 1e-5 (an all-zero reference needs an all-zero out).
// `shape` names elements in the message ([t, h, d]). NaN never passes.
::testing::AssertionResult check_out(const std::vector<float>& got, const std::vector<double>& ref,
                                     const std::vector<int64_t>& shape);

// lse or max_logits: |err| <= 1e-5 + |ref|/16384; infinities must match exactly (sign
// included); NaN never passes. `name` heads the message.
::testing::AssertionResult check_stat(const char* name, const std::vector<float>& got,
                                      const std::vector<double>& ref,
                                      const std::vector<int64_t>& shape);

// Byte-for-byte equality (SPEC: same inputs, same outputs), naming the first differing byte.
::testing::AssertionResult check_bitwise_equal(const char* name, const std::vector<uint8_t>& a,
                                               const std::vector<uint8_t>& b);

// Every element of the view (at byte offset 0 of the buffer) was written, i.e. holds no
// all-kPoisonByte pattern, and every byte of the buffer outside the view (row padding) still
// holds kPoisonByte.
::testing::AssertionResult check_view_written(const Buffer& buffer, const TensorView& layout);

// check_view_written for every output of the problem.
::testing::AssertionResult check_writes(const Problem& problem);
::testing::AssertionResult check_writes(const CombineProblem& problem);

// All of the above for one run: writes, out, and lse / max_logits where the problem has them.
::testing::AssertionResult check_attend(const Problem& problem, const AttendResult& ref);

// Writes, out and (where the problem has it) lse of one combine run.
::testing::AssertionResult check_combine(const CombineProblem& problem, const AttendResult& ref);

// Bitwise equality of every output buffer of two runs of the same problem.
::testing::AssertionResult check_outputs_identical(const Problem& a, const Problem& b);

}  // namespace smla::test
