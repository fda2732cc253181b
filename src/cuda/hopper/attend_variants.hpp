// The compiled Hopper attention kernel variants: one per (d_qk, main format, extra format)
// pair, in the same presets as the portable path (src/cuda/portable/attend_variants.hpp).
// The attend_*.cu files of this directory instantiate them, one file per main format so the
// build compiles them in parallel; they hold code only when SMLA_HOPPER_PATH is defined.
#pragma once

#include <cuda_runtime.h>

#include "cuda/portable/attend_host.hpp"
#include "smla/format.hpp"
#include "smla/status.hpp"

namespace smla::hopper {

struct AttendVariant {
  portable::AttendLaunch launch;
  int smem_bytes;
  // The kernel takes per-slot |V| bounds (AttendParams::main_v_bounds): the block-pair kernel.
  bool reads_v_bounds = false;
};

// One per main format: the variant of (main, extra), or nullptr when this build lacks it.
// `extra` is the main format itself when the call has no extra pool.
const AttendVariant* attend_variant_bf16_576(KvFormat extra);
const AttendVariant* attend_variant_fp8_v32(KvFormat extra);
const AttendVariant* attend_variant_bf16_512(KvFormat extra);
const AttendVariant* attend_variant_fp8_ds_mla(KvFormat extra);
const AttendVariant* attend_variant_int8_ds_mla(KvFormat extra);

}  // namespace smla::hopper
