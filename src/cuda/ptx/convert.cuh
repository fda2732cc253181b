// Hardware number-format conversions: the KV-row dequantizers' and P's, the residual's and
// the results' bf16 packing.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

// 1 in device code for sm_89 and newer, where PTX has the e4m3 conversions.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
#define SMLA_PTX_HAS_E4M3_CVT 1
#else
#define SMLA_PTX_HAS_E4M3_CVT 0
#endif

namespace smla::ptx {

#if SMLA_PTX_HAS_E4M3_CVT
// cvt.rn.f16x2.e4m3x2: two e4m3 codes (low byte -> .x) as f32, through f16. Exact for every
// e4m3 value, subnormals included (f16 holds all of them); a NaN code gives a NaN.
__device__ __forceinline__ float2 e4m3x2_to_float2(uint16_t codes) {
  uint32_t halves;
  asm("cvt.rn.f16x2.e4m3x2 %0, %1;\n" : "=r"(halves) : "h"(codes));
  return __half22float2(*reinterpret_cast<const __half2*>(&halves));
}
#endif

// cvt.rn.bf16x2.f32 (sm_80+): (lo, hi) rounded to nearest even, lo in the low half. Equal to
// fmt::float_to_bf16_rne for every non-NaN value (subnormals and overflow to inf included); a
// NaN gives a NaN whose payload may differ.
__device__ __forceinline__ uint32_t float2_to_bf16x2_rn(float lo, float hi) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<const uint32_t*>(&v);
}

}  // namespace smla::ptx
