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

// The consumer design of the kernel of quantized pools (attend_kernel.cuh): two halves, each
// computing half of S and half of O (the default), or an S owner and a P·V helper
// (attend_s_owner.cuh), which SMLA_HOPPER_CONSUMERS=s-owner picks while it is measured.
enum class ConsumerRoles { halves, s_owner };

// When the producer of that kernel loads a lane's quantized pieces: within the step that
// converts them (the default), or a step ahead, into the registers the conversion frees
// (attend_kernel.cuh), which SMLA_HOPPER_PRODUCER=load-ahead picks while it is measured.
enum class ProducerLoads { in_step, ahead };

struct AttendVariant {
  portable::AttendLaunch launch;
  int smem_bytes;  // the most dynamic shared memory any of its launches takes
  // `launch` takes per-slot |V| bounds (AttendParams::main_v_bounds): the block-pair kernel.
  bool reads_v_bounds = false;
  // `launch` with ProducerLoads::ahead, which reads the bounds if `launch` does (for bf16
  // pools, which have nothing to dequantize, `launch` itself).
  portable::AttendLaunch launch_load_ahead = nullptr;
  // The kernel of quantized pools with ConsumerRoles::s_owner on the same pools (for bf16
  // pools in place of the block-pair kernel, which has one design), without and with
  // ProducerLoads::ahead; it reads no bounds. Both nullptr where the variant has no S owner.
  portable::AttendLaunch launch_s_owner = nullptr;
  portable::AttendLaunch launch_s_owner_load_ahead = nullptr;
};

// One per main format: the variant of (main, extra), or nullptr when this build lacks it.
// `extra` is the main format itself when the call has no extra pool.
const AttendVariant* attend_variant_bf16_576(KvFormat extra);
const AttendVariant* attend_variant_fp8_v32(KvFormat extra);
const AttendVariant* attend_variant_bf16_512(KvFormat extra);
const AttendVariant* attend_variant_fp8_ds_mla(KvFormat extra);
const AttendVariant* attend_variant_int8_ds_mla(KvFormat extra);

}  // namespace smla::hopper
