// Hopper attention variants with an fp8_ds_mla main pool (DeepSeek-V4's FP8 cache, d_qk 512).
#include "cuda/hopper/attend_variants.hpp"

#if defined(SMLA_HOPPER_PATH)
#include "cuda/hopper/attend_kernel.cuh"
#endif

namespace smla::hopper {

const AttendVariant* attend_variant_fp8_ds_mla(KvFormat extra) {
#if defined(SMLA_HOPPER_PATH)
  static const AttendVariant same = make_attend_variant<Fp8DsMlaGroups, Fp8DsMlaGroups>();
#if defined(SMLA_KERNEL_PRESET_ALL)
  static const AttendVariant with_bf16 = make_attend_variant<Fp8DsMlaGroups, Bf16Groups<512>>();
  static const AttendVariant with_int8_ds_mla =
      make_attend_variant<Fp8DsMlaGroups, Int8DsMlaGroups>();
  if (extra == KvFormat::bf16) return &with_bf16;
  if (extra == KvFormat::int8_ds_mla) return &with_int8_ds_mla;
#endif
  return extra == KvFormat::fp8_ds_mla ? &same : nullptr;
#else
  (void)extra;
  return nullptr;
#endif
}

}  // namespace smla::hopper
