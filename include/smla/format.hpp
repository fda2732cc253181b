// KV-cache formats (SPEC §2) and the pools that hold them.
#pragma once

#include <cstdint>

#include "smla/tensor.hpp"

namespace smla {

enum class KvFormat : int32_t {
  bf16 = 0,         // d_qk bf16 per token (576 or 512)
  fp8_v32 = 1,      // DeepSeek-V3.2, d_qk 576: 656 B per token, interleaved
  fp8_ds_mla = 2,   // DeepSeek-V4, d_qk 512: 584 B per token, blocked (data, then scales)
  int8_ds_mla = 3,  // d_qk 512: 512 int8 x one f32 scale; 528 B interleaved, or two tensors
};

inline constexpr int kDv = 512;          // d_v of every DeepSeek sparse-MLA model
inline constexpr int kRopeDim = 64;      // the bf16 RoPE tail of each K row

const char* format_name(KvFormat format);
// Parses "bf16", "fp8_v32", "fp8_ds_mla", "int8_ds_mla". Returns false on an unknown name.
bool parse_format(const char* name, KvFormat* format);

// Whether d_qk is a DeepSeek sparse-MLA model's: 576 (DeepSeek-V3.2) or 512 (DeepSeek-V4).
bool is_model_d_qk(int64_t d_qk);

// Whether a format can hold rows of this d_qk (bf16: 576 or 512; fp8_v32: 576; others: 512).
bool format_supports_d_qk(KvFormat format, int d_qk);

// Bytes one token occupies in the packed layout (SPEC §2 table). For int8_ds_mla with
// separate scales this is the value tensor's 512 B; the interleaved form is 528 B.
int64_t format_token_bytes(KvFormat format, int d_qk, bool int8_split_scales = false);

// A pool of `num_blocks` blocks of `block_size` slots; slot id = block * block_size + offset.
// Block b starts at (char*)data + b * block_stride, which may exceed the packed block size.
//
// int8_ds_mla comes in two layouts: interleaved (scales == nullptr; 528 B per token) or as
// two tensors (scales != nullptr): values [num_blocks, block_size, 512] int8 at `data`
// with block stride `block_stride`, and scales [num_blocks, block_size] f32 at `scales`
// with block stride `scale_block_stride` (bytes).
struct KvPool {
  KvFormat format = KvFormat::bf16;
  void* data = nullptr;
  int64_t num_blocks = 0;
  int32_t block_size = 0;
  int64_t block_stride = 0;  // bytes
  void* scales = nullptr;
  int64_t scale_block_stride = 0;  // bytes
  Device device{};

  bool present() const { return data != nullptr || num_blocks > 0; }
  int64_t slots() const { return num_blocks * static_cast<int64_t>(block_size); }
  bool int8_split() const { return format == KvFormat::int8_ds_mla && scales != nullptr; }

  // Bytes one packed block occupies at `data` for rows of this d_qk.
  int64_t packed_block_bytes(int d_qk) const;
  // A packed pool (block_stride = packed_block_bytes) over `data`.
  static KvPool packed(KvFormat format, void* data, int64_t num_blocks, int32_t block_size,
                       int d_qk, Device device = Device::cpu());
};

}  // namespace smla
