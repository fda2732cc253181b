// The TMA descriptor of a call's q, so that one producer thread loads a CTA's Q tile (FlashMLA
// does the same) instead of 128 threads issuing 16-byte copies (the V3.2 b = 2 decode row 36.7
// -> 35.5 us; docs/perf-log.md, "Q by TMA").
#pragma once

#include <cuda.h>

#include <cstdint>

#include "cuda/portable/attend_params.hpp"

namespace smla::hopper {

// Passed by value beside AttendParams (a __grid_constant__ kernel parameter: TMA reads the map
// where the launch put it).
struct QTileMap {
  // q as [T][h_q][d_qk] bf16 in boxes of 64 values x 64 heads x 1 token, 128-byte swizzled:
  // box (64 kb, head0, token) is block kb of the swizzled Q tile (ptx/wgmma.cuh). Heads past
  // h_q read as zeros.
  CUtensorMap map;
  // 0 when the driver could not describe q (the kernels then copy Q with cp.async).
  int32_t by_tma;
};

// The map of p.q for rows of d_qk values. SMLA's checks already make q's address and strides
// multiples of 16 bytes, as TMA needs; a zero stride (q shared by heads or tokens), a stride
// the driver refuses or a driver without cuTensorMapEncodeTiled gives by_tma = 0, not an
// error.
QTileMap make_q_tile_map(const portable::AttendParams& p, int d_qk);

}  // namespace smla::hopper
