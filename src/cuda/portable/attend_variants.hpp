// The compiled attention kernel variants. A variant is one (d_qk, main format, extra format)
// pair; each holds its four head tiles (8 transposed, 16, 32, 64 heads per CTA). The
// attend_*.cu files instantiate them (one file per main format, so the build compiles them
// in parallel); which pairs exist depends on the kernel preset (docs/portable-path.md):
//   default: the DeepSeek shapes, extra pool absent or of the main pool's format:
//            d_qk 576 bf16 / fp8_v32, d_qk 512 bf16 / fp8_ds_mla / int8_ds_mla
//   all:     every (main, extra) pair of formats with the same d_qk.
#pragma once

#include <cuda_runtime.h>

#include "cuda/portable/attend_host.hpp"
#include "cuda/portable/attend_params.hpp"
#include "smla/format.hpp"
#include "smla/status.hpp"

namespace smla::portable {

// MT = 0 (transposed: heads on the MMA N dimension), 1, 2, 4 m-tiles: 8, 16, 32, 64 heads.
inline constexpr int kHeadTileVariants = 4;

struct AttendVariant {
  AttendLaunch launch[kHeadTileVariants];
  int smem_bytes[kHeadTileVariants];
};

// The head tile index of an MT (0, 1, 2, 4 -> 0, 1, 2, 3).
constexpr int head_tile_index(int mt) { return mt == 4 ? 3 : mt; }

// Heads per CTA of an MT.
constexpr int head_tile_heads(int mt) { return mt == 0 ? 8 : 16 * mt; }

// One per main format: the variant of (main, extra), or nullptr when this build lacks it.
// `extra` is the main format itself when the call has no extra pool.
const AttendVariant* attend_variant_bf16_576(KvFormat extra);
const AttendVariant* attend_variant_fp8_v32(KvFormat extra);
const AttendVariant* attend_variant_bf16_512(KvFormat extra);
const AttendVariant* attend_variant_fp8_ds_mla(KvFormat extra);
const AttendVariant* attend_variant_int8_ds_mla(KvFormat extra);

}  // namespace smla::portable
