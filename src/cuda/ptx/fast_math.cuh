// Short arithmetic for the softmax and the |V| check of the Hopper kernels.
#pragma once

#include <cstdint>

namespace smla::ptx {

// ex2.approx.ftz.f32: 2^x with at most 2 ulp of error (PTX ISA); ex2(-inf) = +0, results below
// 2^-126 flush to zero. exp2f adds range scaling around the same instruction for subnormal
// results, which a softmax weight relative to its row maximum never needs.
__device__ __forceinline__ float ex2_approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

// max.NaN.xorsign.abs.bf16x2 (sm_86+): per half, the larger magnitude of a and b (a NaN if
// either is NaN); the sign bit is the xor of the inputs' and means nothing here.
__device__ __forceinline__ uint32_t max_abs_bf16x2(uint32_t a, uint32_t b) {
  uint32_t d;
  asm("max.NaN.xorsign.abs.bf16x2 %0, %1, %2;\n" : "=r"(d) : "r"(a), "r"(b));
  return d;
}

// The larger magnitude of a max_abs_bf16x2 result's two halves, as bf16 bits with the sign
// cleared (0..0x7FFF, a NaN's above every number's). The one place that turns the folds into
// |V| bits, so the block-pair kernel's scan and the bounds-table pass give the same bits.
__device__ __forceinline__ uint32_t bf16x2_magnitude_bits(uint32_t m) {
  return max(m & 0x7FFFu, (m >> 16) & 0x7FFFu);
}

}  // namespace smla::ptx
