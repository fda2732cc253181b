// Attention variants with a bf16 main pool of d_qk 512 (DeepSeek-V4, unquantized cache).
#include "cuda/portable/attend_kernel.cuh"

namespace smla::portable {

const AttendVariant* attend_variant_bf16_512(KvFormat extra) {
  static const AttendVariant same = make_attend_variant<Bf16Rows<512>, Bf16Rows<512>>();
#if defined(SMLA_KERNEL_PRESET_ALL)
  static const AttendVariant with_fp8 = make_attend_variant<Bf16Rows<512>, Fp8DsMlaRows>();
  static const AttendVariant with_int8 = make_attend_variant<Bf16Rows<512>, Int8DsMlaRows>();
  if (extra == KvFormat::fp8_ds_mla) return &with_fp8;
  if (extra == KvFormat::int8_ds_mla) return &with_int8;
#endif
  return extra == KvFormat::bf16 ? &same : nullptr;
}

}  // namespace smla::portable
