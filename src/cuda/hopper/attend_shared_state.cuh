// The shared state of a CTA of the Hopper kernel of quantized pools (attend_kernel.cuh): the
// views of dynamic shared memory its roles hand data over through, per HopperConfig.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/hopper/attend_config.cuh"
#include "cuda/hopper/p_rounding.hpp"
#include "formats/numeric.hpp"

namespace smla::hopper {

template <class C>
struct SharedState {
  __device__ explicit SharedState(uint8_t* base)
      : q(base + C::Q_OFF),
        stages(base + C::STAGE_OFF),
        p(base + C::P_OFF),
        row_max(reinterpret_cast<float*>(base + C::ROWMAX_OFF)),
        row_sum(reinterpret_cast<float*>(base + C::ROWSUM_OFF)),
        valid(base + C::VALID_OFF),
        v_max(reinterpret_cast<uint32_t*>(base + C::V_MAX_OFF)),
        scale_bound(reinterpret_cast<uint32_t*>(base + C::SCALE_BOUND_OFF)),
        tile_sink(reinterpret_cast<float*>(base + C::TILE_SINK_OFF)),
        bars(reinterpret_cast<uint64_t*>(base + C::BAR_OFF)) {}

  __device__ uint8_t* stage(int s) const { return stages + s * C::TILE_BYTES; }
  __device__ uint64_t* full(int s) const { return bars + C::BAR_FULL + s; }
  __device__ uint64_t* empty(int s) const { return bars + C::BAR_EMPTY + s; }
  __device__ uint64_t* q_full() const { return bars + C::BAR_Q_FULL; }
  __device__ uint64_t* q_empty() const { return bars + C::BAR_Q_EMPTY; }

  // The |V| bound of each d_v half of stage `stage` (p_rounding.hpp): the producer's from the
  // scales (C::SCALE_BOUNDS), else the scan's, folded over the kScanWarps warps that published
  // it in v_max. The caller orders the publication before this read.
  template <int kScanWarps>
  __device__ void v_bound(int stage, float (&bound)[2]) const {
#pragma unroll
    for (int c = 0; c < 2; ++c) {
      uint32_t bits = 0;
      if constexpr (C::SCALE_BOUNDS) {
#pragma unroll
        for (int w = 0; w < C::PRODUCER_WARPS; ++w) {
          bits = max(bits, scale_bound[(stage * C::PRODUCER_WARPS + w) * 2 + c]);
        }
        bound[c] = fmt::float_from_bits(bits);
      } else {
#pragma unroll
        for (int w = 0; w < kScanWarps; ++w) bits = max(bits, v_max[2 * w + c]);
        bound[c] = v_magnitude_bound(bits);
      }
    }
  }

  uint8_t* q;           // [HT][D] bf16, swizzled blocks
  uint8_t* stages;      // [STAGES][BN][D] bf16, swizzled blocks
  uint8_t* p;           // [HT][BN] bf16, one swizzled block
  float* row_max;       // [CONSUMERS][HT]: the halves' step maxima
  float* row_sum;       // [CONSUMERS][HT]
  uint8_t* valid;       // [STAGES][BN]
  uint32_t* v_max;      // [scanning warps][2]: per warp, |V| bits seen per d_v half
  uint32_t* scale_bound;  // [STAGES][PRODUCER_WARPS][2]: the quantized groups' |V| bound, f32 bits
  float* tile_sink;     // [HT]: the head tile's sinks (stage_tile_sinks)
  uint64_t* bars;
};

}  // namespace smla::hopper
