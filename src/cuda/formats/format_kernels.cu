// GPU quantize / dequantize / write_cache: one warp per row, one kernel template per
// direction, instantiated over the format codecs of token_codecs.cuh.
#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/cuda_check.hpp"
#include "cuda/formats/format_ops.hpp"
#include "cuda/formats/token_codecs.cuh"

namespace smla::cuda_backend::formats {
namespace {

// ---- config ------------------------------------------------------------------------------

// Rows per CTA. A row is one warp's work (576 values at most), so a CTA of 8 warps keeps
// enough rows in flight per SM without making small calls launch idle warps.
constexpr int WARPS_PER_CTA = 8;
constexpr int THREADS_PER_CTA = WARPS_PER_CTA * WARP;

// ---- params ------------------------------------------------------------------------------

struct EncodeParams {
  const uint16_t* rows;  // [N, d_qk] bf16, row stride `row_stride` elements
  int64_t row_stride;
  const int32_t* slots;  // [N] i32 with stride `slot_stride`; nullptr: row i -> slot i
  int64_t slot_stride;
  int64_t n;          // N
  int64_t num_slots;  // pool.slots(): the bound of a valid slot id
  PoolRef pool;
};

struct DecodeParams {
  uint16_t* rows;  // [N, d_qk] bf16, row stride `row_stride` elements
  int64_t row_stride;
  int64_t n;  // N: slots 0..N-1 are read
  PoolRef pool;
};

// ---- device helpers ----------------------------------------------------------------------

// Whether a row must not be written by write_cache because a later row names the same slot.
// Two warps encoding one slot at once could leave it holding a byte mix of both rows; letting
// only the last of them write makes the slot hold exactly one row, the one a sequential loop
// would leave. The scan is over the slot ids only (4 B per row, coalesced, L2-resident) and
// stops at the first match. Its cost grows as N^2 / 64 warp loads: nothing for a decode
// batch, tens of microseconds for a 16k-token prefill chunk, and always far below the
// attention over those same tokens. Deduplicating in O(N) would need scratch (a claim per
// slot, sized by the pool), and write_cache takes no workspace.
__device__ bool overwritten_later(const EncodeParams& p, int64_t row, int32_t slot, int lane) {
  for (int64_t base = row + 1; base < p.n; base += WARP) {
    const int64_t other = base + lane;
    const bool same = other < p.n && p.slots[other * p.slot_stride] == slot;
    if (__any_sync(0xFFFFFFFFu, same)) return true;
  }
  return false;
}

// ---- kernels -----------------------------------------------------------------------------

template <class Codec>
__global__ void __launch_bounds__(THREADS_PER_CTA) encode_rows_kernel(const EncodeParams p) {
  const int lane = threadIdx.x % WARP;
  const int64_t row = int64_t{blockIdx.x} * WARPS_PER_CTA + threadIdx.x / WARP;
  if (row >= p.n) return;  // whole warps leave together: `row` is uniform over a warp
  int64_t slot = row;
  if (p.slots != nullptr) {
    // Compared before any arithmetic: ids span all of int32 (-1 padding, INT_MIN, INT_MAX).
    const int32_t id = p.slots[row * p.slot_stride];
    if (id < 0 || id >= p.num_slots) return;
    if (overwritten_later(p, row, id, lane)) return;
    slot = id;
  }
  Codec::encode(p.pool, slot, p.rows + row * p.row_stride, lane);
}

template <class Codec>
__global__ void __launch_bounds__(THREADS_PER_CTA) decode_rows_kernel(const DecodeParams p) {
  const int lane = threadIdx.x % WARP;
  const int64_t row = int64_t{blockIdx.x} * WARPS_PER_CTA + threadIdx.x / WARP;
  if (row >= p.n) return;
  Codec::decode(p.pool, row, p.rows + row * p.row_stride, lane);
}

// ---- launchers ---------------------------------------------------------------------------

PoolRef pool_ref(const KvPool& pool) {
  return {static_cast<uint8_t*>(pool.data), pool.block_stride, pool.block_size,
          static_cast<uint8_t*>(pool.scales), pool.scale_block_stride};
}

dim3 grid_for(int64_t n) {
  // One warp per row; gridDim.x allows 2^31 - 1 CTAs, far beyond any pool (validated
  // N <= pool.slots()).
  return dim3(static_cast<unsigned>((n + WARPS_PER_CTA - 1) / WARPS_PER_CTA));
}

// Calls fn(Codec{}) with the codec of the pool's format and the rows' d_qk (a pair src/api
// has already validated).
template <class Fn>
void with_codec(KvFormat format, int64_t d_qk, Fn&& fn) {
  switch (format) {
    case KvFormat::bf16:
      if (d_qk == 576) {
        fn(Bf16Codec<576>{});
      } else {
        fn(Bf16Codec<512>{});
      }
      return;
    case KvFormat::fp8_v32:
      fn(TiledCodec<Fp8V32Format>{});
      return;
    case KvFormat::fp8_ds_mla:
      fn(TiledCodec<Fp8DsMlaFormat>{});
      return;
    case KvFormat::int8_ds_mla:
      fn(TiledCodec<Int8DsMlaFormat>{});
      return;
  }
}

Status encode(const char* op, const TensorView& rows, const TensorView* slots, const KvPool& pool,
              cudaStream_t stream) {
  const int64_t n = rows.shape[0];
  if (n == 0) return Status::success();
  EncodeParams p{};
  p.rows = static_cast<const uint16_t*>(rows.data);
  p.row_stride = rows.stride[0];
  p.slots = slots != nullptr ? static_cast<const int32_t*>(slots->data) : nullptr;
  p.slot_stride = slots != nullptr ? slots->stride[0] : 0;
  p.n = n;
  p.num_slots = pool.slots();
  p.pool = pool_ref(pool);
  with_codec(pool.format, rows.shape[1], [&](auto codec) {
    encode_rows_kernel<decltype(codec)><<<grid_for(n), THREADS_PER_CTA, 0, stream>>>(p);
  });
  return launch_status(op, "encode_rows_kernel");
}

}  // namespace

Status quantize(const TensorView& rows, const KvPool& pool, cudaStream_t stream) {
  return encode("smla::quantize", rows, nullptr, pool, stream);
}

Status write_cache(const TensorView& rows, const TensorView& slots, const KvPool& pool,
                   cudaStream_t stream) {
  return encode("smla::write_cache", rows, &slots, pool, stream);
}

Status dequantize(const KvPool& pool, const TensorView& rows, cudaStream_t stream) {
  const int64_t n = rows.shape[0];
  if (n == 0) return Status::success();
  DecodeParams p{};
  p.rows = static_cast<uint16_t*>(rows.data);
  p.row_stride = rows.stride[0];
  p.n = n;
  p.pool = pool_ref(pool);
  with_codec(pool.format, rows.shape[1], [&](auto codec) {
    decode_rows_kernel<decltype(codec)><<<grid_for(n), THREADS_PER_CTA, 0, stream>>>(p);
  });
  return launch_status("smla::dequantize", "decode_rows_kernel");
}

}  // namespace smla::cuda_backend::formats
