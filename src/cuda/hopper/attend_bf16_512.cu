// Hopper attention variants with a bf16 main pool of d_qk 512 (DeepSeek-V4, unquantized cache).
#include "cuda/hopper/attend_variants.hpp"

#if defined(SMLA_HOPPER_PATH)
#include "cuda/hopper/attend_kernel.cuh"
#include "cuda/hopper/pair_kernel.cuh"
#endif

namespace smla::hopper {

const AttendVariant* attend_variant_bf16_512(KvFormat extra) {
#if defined(SMLA_HOPPER_PATH)
  // Both pools bf16: the block-pair kernel (pair_kernel.cuh).
  static const AttendVariant same = make_pair_attend_variant<512>();
#if defined(SMLA_KERNEL_PRESET_ALL)
  static const AttendVariant with_fp8_ds_mla =
      make_attend_variant<Bf16Groups<512>, Fp8DsMlaGroups>();
  static const AttendVariant with_int8_ds_mla =
      make_attend_variant<Bf16Groups<512>, Int8DsMlaGroups>();
  if (extra == KvFormat::fp8_ds_mla) return &with_fp8_ds_mla;
  if (extra == KvFormat::int8_ds_mla) return &with_int8_ds_mla;
#endif
  return extra == KvFormat::bf16 ? &same : nullptr;
#else
  (void)extra;
  return nullptr;
#endif
}

}  // namespace smla::hopper
