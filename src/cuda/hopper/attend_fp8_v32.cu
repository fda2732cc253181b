// Hopper attention variants with an fp8_v32 main pool (DeepSeek-V3.2's FP8 cache, d_qk 576).
#include "cuda/hopper/attend_variants.hpp"

#if defined(SMLA_HOPPER_PATH)
#include "cuda/hopper/attend_kernel.cuh"
#endif

namespace smla::hopper {

const AttendVariant* attend_variant_fp8_v32(KvFormat extra) {
#if defined(SMLA_HOPPER_PATH)
  static const AttendVariant same = make_attend_variant<Fp8V32Groups, Fp8V32Groups>();
#if defined(SMLA_KERNEL_PRESET_ALL)
  static const AttendVariant with_bf16 = make_attend_variant<Fp8V32Groups, Bf16Groups<576>>();
  if (extra == KvFormat::bf16) return &with_bf16;
#endif
  return extra == KvFormat::fp8_v32 ? &same : nullptr;
#else
  (void)extra;
  return nullptr;
#endif
}

}  // namespace smla::hopper
