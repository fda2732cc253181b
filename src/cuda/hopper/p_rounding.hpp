// What rounding P to bf16 for the P·V wgmma may cost `out`, and when a step of the Hopper
// consumers must also add the residual product (P - bf16(P))·V. Host and device code, so the
// CPU tests check it.
//
// For one element of out (head row h, d_v column n), rounding P errs by
//   |sum_j d_j V[j][n]| / l  <=  sum_j |d_j| M / l,   d_j = bf16(p_j) - p_j,
// where l is the row's softmax sum and M bounds |V| over the step's columns of n's half of d_v
// (the half a consumer accumulates). d_j is known exactly where P is rounded (a difference of
// neighbouring floats), so the bound uses the actual rounding, not the worst case 2^-8 p_j:
// over many random weights it is about a quarter of the worst case, but over a thread's 8 or
// 16 weights of a step it varies widely, so on benchmark data (N(0,1)/10, max |V| near 0.45)
// an item's first steps mostly take the second product (perf-notes.md, Findings s59).
//
// Each consumer thread keeps, for its columns of rows h over the item's steps, the running
// sum of |d_j| M, rescaled with its share of l. While every thread's sum stays within
// kRoundingBudget times its share, the shares add up to an error of at most kRoundingBudget
// on out, under SPEC's absolute 1e-3 (the margin covers the check's own float rounding). A
// step that would take some thread past its budget adds the residual product instead and
// nothing to the sums: the residual, itself rounded to bf16, errs by 2^-8 of d_j, under 2^-16
// max|V| (below 1e-3 while |V| < 65; such a V breaks SPEC's bound on bf16 inputs anyway).
#pragma once

#include <cstdint>

#include "formats/numeric.hpp"

namespace smla::hopper {

inline constexpr float kRoundingBudget = 0.9e-3f;

// The magnitude of a bf16 value from its bits with the sign cleared (0..0x7FFF), as a bound on
// |V|: infinite for an infinity or a NaN, so that the step takes the residual product.
SMLA_HD constexpr float v_magnitude_bound(uint32_t magnitude_bits) {
  return magnitude_bits >= 0x7F80u ? fmt::float_from_bits(fmt::kF32InfBits)
                                   : fmt::bf16_to_float(static_cast<uint16_t>(magnitude_bits));
}

// A bound on |V| over quantized groups from their scales alone, without reading the values:
// a group's dequantized values bf16(code * s) (SPEC §2) have magnitudes of at most max_code |s|
// rounded to bf16, below max_code |s| (1 + 2^-8); the factor 1 + 2^-7 also covers the f32
// rounding of the products on both sides, and 2^-126 the absolute rounding of subnormal
// products, where a relative margin does not hold. `abs_scale_bits` is the largest |s| as f32
// bits (a NaN's above +inf's); the result is the bound's f32 bits, +inf's for an infinite or NaN
// scale (the step then takes the residual product). The Hopper producer publishes it for the
// groups it dequantizes when a format's whole V is quantized under f32 scales (kv_groups.cuh
// kScalesBoundV), and the consumers then do not scan V.
SMLA_HD constexpr uint32_t scale_bound_bits(uint32_t abs_scale_bits, float max_code) {
  if (abs_scale_bits >= fmt::kF32InfBits) return fmt::kF32InfBits;
  const float bound = fmt::float_from_bits(abs_scale_bits) * (max_code * (1.0f + 0x1p-7f)) +
                      0x1p-126f;
  return fmt::float_bits(bound);
}

// Whether a thread's running rounding sum `total` (this step's included) stays within the
// budget of its share `l` of the softmax sum; false for a NaN or an infinite total.
SMLA_HD constexpr bool within_rounding_budget(float total, float l) {
  return total <= kRoundingBudget * l;
}

}  // namespace smla::hopper
