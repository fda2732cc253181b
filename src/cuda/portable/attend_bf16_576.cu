// Attention variants with a bf16 main pool of d_qk 576 (DeepSeek-V3.2, unquantized cache).
#include "cuda/portable/attend_kernel.cuh"

namespace smla::portable {

const AttendVariant* attend_variant_bf16_576(KvFormat extra) {
  static const AttendVariant same = make_attend_variant<Bf16Rows<576>, Bf16Rows<576>>();
#if defined(SMLA_KERNEL_PRESET_ALL)
  static const AttendVariant with_fp8_v32 = make_attend_variant<Bf16Rows<576>, Fp8V32Rows>();
  if (extra == KvFormat::fp8_v32) return &with_fp8_v32;
#endif
  return extra == KvFormat::bf16 ? &same : nullptr;
}

}  // namespace smla::portable
