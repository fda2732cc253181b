// Attention variants with an fp8_v32 main pool (DeepSeek-V3.2's FP8 cache, d_qk 576).
#include "cuda/portable/attend_kernel.cuh"

namespace smla::portable {

const AttendVariant* attend_variant_fp8_v32(KvFormat extra) {
  static const AttendVariant same = make_attend_variant<Fp8V32Rows, Fp8V32Rows>();
#if defined(SMLA_KERNEL_PRESET_ALL)
  static const AttendVariant with_bf16 = make_attend_variant<Fp8V32Rows, Bf16Rows<576>>();
  if (extra == KvFormat::bf16) return &with_bf16;
#endif
  return extra == KvFormat::fp8_v32 ? &same : nullptr;
}

}  // namespace smla::portable
