// Attention variants with an int8_ds_mla main pool (d_qk 512; interleaved or split scales,
// one kernel: the row loader reads the scale through the pool's scale pointer).
#include "cuda/portable/attend_kernel.cuh"

namespace smla::portable {

const AttendVariant* attend_variant_int8_ds_mla(KvFormat extra) {
  static const AttendVariant same = make_attend_variant<Int8DsMlaRows, Int8DsMlaRows>();
#if defined(SMLA_KERNEL_PRESET_ALL)
  static const AttendVariant with_bf16 = make_attend_variant<Int8DsMlaRows, Bf16Rows<512>>();
  static const AttendVariant with_fp8 = make_attend_variant<Int8DsMlaRows, Fp8DsMlaRows>();
  if (extra == KvFormat::bf16) return &with_bf16;
  if (extra == KvFormat::fp8_ds_mla) return &with_fp8;
#endif
  return extra == KvFormat::int8_ds_mla ? &same : nullptr;
}

}  // namespace smla::portable
