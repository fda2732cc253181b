// quantize, dequantize and write_cache on the CPU (SPEC §3.4): loops of the host token
// codecs over rows. Arguments were validated by src/api: rows [N, d_qk] bf16 with unit
// stride on the last dim and any row stride, slots [N] i32, N <= pool.slots() for
// quantize/dequantize, a pool whose format supports d_qk.
#include <cstdint>

#include "formats/token_codec.hpp"
#include "reference/parallel.hpp"
#include "reference/reference.hpp"
#include "reference/strided.hpp"

namespace smla::reference {

namespace {

int row_dim(const TensorView& rows) { return static_cast<int>(rows.shape[1]); }

}  // namespace

Status quantize(const TensorView& rows, const KvPool& pool) {
  // Row i goes to slot i: distinct bytes per row, so rows run in parallel.
  const int64_t n = rows.shape[0];
  const int d_qk = row_dim(rows);
  parallel_for(n, parallel_workers(n), [&](int64_t i, int) {
    fmt::encode_token(pool, i, d_qk, element<const uint16_t>(rows, i, 0));
  });
  return Status::success();
}

Status dequantize(const KvPool& pool, const TensorView& rows) {
  const int64_t n = rows.shape[0];
  const int d_qk = row_dim(rows);
  parallel_for(n, parallel_workers(n), [&](int64_t i, int) {
    fmt::decode_token(pool, i, d_qk, element<uint16_t>(rows, i, 0));
  });
  return Status::success();
}

Status write_cache(const TensorView& rows, const TensorView& slots, const KvPool& pool) {
  // Sequential on purpose: two rows may name the same slot, and a parallel write could leave
  // it holding bytes of both. In order, the last such row wins (SPEC allows either).
  const int64_t n = rows.shape[0];
  const int d_qk = row_dim(rows);
  const int64_t slot_count = pool.slots();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t slot = *element<const int32_t>(slots, i);
    if (slot < 0 || slot >= slot_count) continue;  // vLLM's -1 padding and stale ids
    fmt::encode_token(pool, slot, d_qk, element<const uint16_t>(rows, i, 0));
  }
  return Status::success();
}

}  // namespace smla::reference
