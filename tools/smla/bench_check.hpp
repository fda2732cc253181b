// The check `smla bench` runs before it times anything: the outputs of a sample of tokens
// against a float64 evaluation of SPEC §1 written here, independently of the library's
// attention code (it shares only dequantization, which defines what K is), with SPEC's
// tolerances. A row whose check fails reports no time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench_workload.hpp"

namespace smla::cli {

// The outputs of some tokens of a problem, copied back from wherever attend ran.
struct SampledOutputs {
  std::vector<int64_t> tokens;    // [S] token ids within the problem
  std::vector<uint16_t> out;      // [S, h_q, 512] bf16
  std::vector<float> lse;         // [S, h_q]
  std::vector<float> max_logits;  // [S, h_q]
};

struct CheckResult {
  bool passed = false;
  std::string detail;        // the first violation, or a summary when passed
  double max_out_error = 0;  // max |out - ref| over the sample
  double cosine_gap = 0;     // 1 - cos(out, ref) over the sample
  // FNV-1a of the sample's output bits (out, lse, max_logits), folded to 32 bits: two trees
  // whose rows print the same digest gave bitwise the same outputs (the data is seeded), but
  // for a 2^-32 chance of a collision.
  uint32_t outputs_digest = 0;
};

// FNV-1a of the sample's output bits, as CheckResult::outputs_digest.
uint32_t outputs_digest(const SampledOutputs& got);

// `count` token ids spread evenly over [0, tokens), the first and the last included.
std::vector<int64_t> sample_tokens(int64_t tokens, int64_t count);

CheckResult check_against_float64(const HostProblem& problem, const SampledOutputs& got);

}  // namespace smla::cli
