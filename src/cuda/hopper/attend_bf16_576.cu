// Hopper attention variants with a bf16 main pool of d_qk 576 (DeepSeek-V3.2, unquantized cache).
#include "cuda/hopper/attend_variants.hpp"

#if defined(SMLA_HOPPER_PATH)
#include "cuda/hopper/attend_kernel.cuh"
#include "cuda/hopper/pair_kernel.cuh"
#endif

namespace smla::hopper {

const AttendVariant* attend_variant_bf16_576(KvFormat extra) {
#if defined(SMLA_HOPPER_PATH)
  // Both pools bf16: the block-pair kernel (pair_kernel.cuh).
  static const AttendVariant same = make_pair_attend_variant<576>();
#if defined(SMLA_KERNEL_PRESET_ALL)
  static const AttendVariant with_fp8_v32 = make_attend_variant<Bf16Groups<576>, Fp8V32Groups>();
  if (extra == KvFormat::fp8_v32) return &with_fp8_v32;
#endif
  return extra == KvFormat::bf16 ? &same : nullptr;
#else
  (void)extra;
  return nullptr;
#endif
}

}  // namespace smla::hopper
