// Names, d_qk support and packed sizes of the KV formats (include/smla/format.hpp).
#include <cstring>

#include "formats/kv_layout.hpp"
#include "smla/format.hpp"

namespace smla {

namespace {

struct FormatName {
  KvFormat format;
  const char* name;
};

constexpr FormatName kFormatNames[] = {
    {KvFormat::bf16, "bf16"},
    {KvFormat::fp8_v32, "fp8_v32"},
    {KvFormat::fp8_ds_mla, "fp8_ds_mla"},
    {KvFormat::int8_ds_mla, "int8_ds_mla"},
};

}  // namespace

const char* format_name(KvFormat format) {
  for (const FormatName& f : kFormatNames) {
    if (f.format == format) return f.name;
  }
  // Out-of-enum values arrive through the C ABI; validation names them with this.
  return "unknown";
}

bool parse_format(const char* name, KvFormat* format) {
  if (name == nullptr) return false;
  for (const FormatName& f : kFormatNames) {
    if (std::strcmp(f.name, name) == 0) {
      *format = f.format;
      return true;
    }
  }
  return false;
}

bool is_model_d_qk(int64_t d_qk) { return d_qk == fmt::kDqkV32 || d_qk == fmt::kDqkV4; }

bool format_supports_d_qk(KvFormat format, int d_qk) {
  switch (format) {
    case KvFormat::bf16: return is_model_d_qk(d_qk);
    case KvFormat::fp8_v32: return d_qk == fmt::Fp8V32Layout::kDqk;
    case KvFormat::fp8_ds_mla: return d_qk == fmt::Fp8DsMlaLayout::kDqk;
    case KvFormat::int8_ds_mla: return d_qk == fmt::Int8DsMlaLayout::kDqk;
  }
  return false;
}

int64_t format_token_bytes(KvFormat format, int d_qk, bool int8_split_scales) {
  // 0 means "no such layout", so a caller that skipped format_supports_d_qk sizes nothing.
  if (!format_supports_d_qk(format, d_qk)) return 0;
  switch (format) {
    case KvFormat::bf16: return fmt::Bf16Layout::token_bytes(d_qk);
    case KvFormat::fp8_v32: return fmt::Fp8V32Layout::kTokenBytes;
    case KvFormat::fp8_ds_mla: return fmt::Fp8DsMlaLayout::kTokenBytes;
    case KvFormat::int8_ds_mla:
      return int8_split_scales ? fmt::Int8DsMlaLayout::kSplitValueBytes
                               : fmt::Int8DsMlaLayout::kInterleavedTokenBytes;
  }
  return 0;
}

int64_t KvPool::packed_block_bytes(int d_qk) const {
  // Every format's block is block_size tokens of format_token_bytes; fp8_ds_mla's block holds
  // the data part of all its tokens followed by their scale part, which adds up the same.
  return int64_t{block_size} * format_token_bytes(format, d_qk, int8_split());
}

KvPool KvPool::packed(KvFormat format, void* data, int64_t num_blocks, int32_t block_size,
                      int d_qk, Device device) {
  KvPool pool;
  pool.format = format;
  pool.data = data;
  pool.num_blocks = num_blocks;
  pool.block_size = block_size;
  pool.device = device;
  pool.block_stride = pool.packed_block_bytes(d_qk);
  return pool;
}

}  // namespace smla
