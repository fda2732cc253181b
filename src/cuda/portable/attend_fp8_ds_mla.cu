// Attention variants with an fp8_ds_mla main pool (DeepSeek-V4's FP8 cache, d_qk 512).
#include "cuda/portable/attend_kernel.cuh"

namespace smla::portable {

const AttendVariant* attend_variant_fp8_ds_mla(KvFormat extra) {
  static const AttendVariant same = make_attend_variant<Fp8DsMlaRows, Fp8DsMlaRows>();
#if defined(SMLA_KERNEL_PRESET_ALL)
  static const AttendVariant with_bf16 = make_attend_variant<Fp8DsMlaRows, Bf16Rows<512>>();
  static const AttendVariant with_int8 = make_attend_variant<Fp8DsMlaRows, Int8DsMlaRows>();
  if (extra == KvFormat::bf16) return &with_bf16;
  if (extra == KvFormat::int8_ds_mla) return &with_int8;
#endif
  return extra == KvFormat::fp8_ds_mla ? &same : nullptr;
}

}  // namespace smla::portable
