// Helpers of the format tests: bf16 rows, poisoned pool buffers with padded block strides,
// and the byte ranges of a token written out from SPEC §2 directly (not from kv_layout.hpp),
// so the layout code is checked against the contract rather than against itself.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "formats/numeric.hpp"
#include "smla/format.hpp"
#include "smla/tensor.hpp"

namespace smla::test {

inline constexpr uint8_t kPoison = 0xA5;

inline uint16_t bf16(float x) { return fmt::float_to_bf16_rne(x); }

// A [n, d_qk] bf16 row block as a contiguous view.
struct Rows {
  std::vector<uint16_t> values;
  int64_t n = 0;
  int d_qk = 0;

  Rows(int64_t n_rows, int dim)
      : values(static_cast<size_t>(n_rows * dim), 0), n(n_rows), d_qk(dim) {}
  uint16_t* row(int64_t i) { return values.data() + i * d_qk; }
  TensorView view() { return TensorView::contiguous(values.data(), DType::bf16, {n, d_qk}); }
};

// A pool over its own buffer, every byte set to kPoison, blocks `pad` bytes further apart
// than packed. int8_ds_mla with `split` gets a value tensor and a separate scale tensor, the
// scale blocks also padded.
struct PoolBuffer {
  std::vector<uint8_t> data;
  std::vector<uint8_t> scales;
  KvPool pool;

  PoolBuffer(KvFormat format, int d_qk, int64_t num_blocks, int32_t block_size, int64_t pad = 0,
             bool split = false) {
    pool.format = format;
    pool.num_blocks = num_blocks;
    pool.block_size = block_size;
    pool.block_stride = block_size * format_token_bytes(format, d_qk, split) + pad;
    data.assign(static_cast<size_t>(num_blocks * pool.block_stride), kPoison);
    pool.data = data.data();
    if (split) {
      pool.scale_block_stride = block_size * 4 + pad;
      scales.assign(static_cast<size_t>(num_blocks * pool.scale_block_stride), kPoison);
      pool.scales = scales.data();
    }
  }
};

// [begin, end) byte offsets into a buffer.
using ByteRange = std::pair<int64_t, int64_t>;

// The bytes token `slot` owns in the pool's data buffer (SPEC §2): every byte a writer may
// change. fp8_ds_mla's pad byte and int8's 12 pad bytes are not owned. For split int8 the
// scale lives in the scale buffer: see split_scale_range.
inline std::vector<ByteRange> token_data_ranges(const KvPool& pool, int d_qk, int64_t slot) {
  const int64_t block = slot / pool.block_size;
  const int64_t offset = slot % pool.block_size;
  const int64_t base = block * pool.block_stride;
  switch (pool.format) {
    case KvFormat::bf16: return {{base + offset * 2 * d_qk, base + (offset + 1) * 2 * d_qk}};
    case KvFormat::fp8_v32: return {{base + offset * 656, base + offset * 656 + 656}};
    case KvFormat::fp8_ds_mla: {
      const int64_t scales = base + int64_t{pool.block_size} * 576 + offset * 8;
      return {{base + offset * 576, base + offset * 576 + 576}, {scales, scales + 7}};
    }
    case KvFormat::int8_ds_mla:
      if (pool.scales != nullptr) return {{base + offset * 512, base + offset * 512 + 512}};
      return {{base + offset * 528, base + offset * 528 + 516}};
  }
  return {};
}

inline ByteRange split_scale_range(const KvPool& pool, int64_t slot) {
  const int64_t at =
      (slot / pool.block_size) * pool.scale_block_stride + (slot % pool.block_size) * 4;
  return {at, at + 4};
}

// Marks the bytes the listed slots own; everything else must still hold kPoison.
inline std::vector<bool> owned_data_bytes(const KvPool& pool, int d_qk,
                                          const std::vector<int64_t>& slots, size_t size) {
  std::vector<bool> owned(size, false);
  for (int64_t slot : slots) {
    for (const ByteRange& r : token_data_ranges(pool, d_qk, slot)) {
      for (int64_t i = r.first; i < r.second; ++i) owned[static_cast<size_t>(i)] = true;
    }
  }
  return owned;
}

// The owned bytes of one token, concatenated (data ranges, then the split scale).
inline std::vector<uint8_t> token_bytes(const PoolBuffer& buf, int d_qk, int64_t slot) {
  std::vector<uint8_t> out;
  for (const ByteRange& r : token_data_ranges(buf.pool, d_qk, slot)) {
    out.insert(out.end(), buf.data.begin() + r.first, buf.data.begin() + r.second);
  }
  if (buf.pool.scales != nullptr) {
    const ByteRange r = split_scale_range(buf.pool, slot);
    out.insert(out.end(), buf.scales.begin() + r.first, buf.scales.begin() + r.second);
  }
  return out;
}

}  // namespace smla::test
