// A deliberately plain float64 evaluation of SPEC §1, written apart from src/reference: one
// (token, head) at a time, the formulas as SPEC states them. It shares only the
// dequantization (smla::fmt::decode_token) with the library, which SPEC defines as the
// input of the accuracy contract ("the same dequantized bf16 K").
#pragma once

#include <cstdint>
#include <vector>

#include "smla/ops.hpp"

namespace smla::test {

struct AttendResult {
  int64_t T = 0;
  int h_q = 0;
  std::vector<double> out;         // [T, h_q, 512]
  std::vector<double> lse;         // [T, h_q], +inf for a token with no valid entry
  std::vector<double> max_logits;  // [T, h_q], -inf for a token with no valid entry
};

// Evaluates attend for host arguments (q, pools, indices, lengths, sink, scale); the output
// views of `args` are ignored. lse and max_logits are computed whether or not args has them.
AttendResult naive_attend(const AttendArgs& args);

}  // namespace smla::test
