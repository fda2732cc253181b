// Argument validation of every op (SPEC §5), shared by all backends and run before any
// work, so that a failed call writes nothing. Index VALUES are never checked: SPEC §1 makes
// every value safe on the device.
//
// The rules beyond SPEC's shapes and dtypes, decided here:
// - h_q is 1..128; T, k, k_x and N may be 0 (an empty call succeeds and writes nothing).
// - A rank is 0 (absent) or the argument's rank, never negative: an optional output with a
//   negative rank is an error, not a silently skipped output.
// - Strides are in elements and never negative. q, out, rows, partial_out and indices have
//   unit stride on the last dim (the kernels load rows with vector loads); lse, max_logits,
//   lengths, slots, sink and partial_lse take any strides. An output's strides must give
//   every element its own address.
// - Alignment: every data pointer is aligned to its dtype. On a CUDA device q, out, rows and
//   partial_out start every row on a 16-byte boundary, and a pool's data and block_stride
//   are multiples of 16 bytes (4 bytes on the CPU). block_stride >= the packed block size.
// - Every extent in elements, slots and bytes (a tensor's from first to last element, a
//   pool's num_blocks x block_size and its blocks' bytes) fits int64, so that no check or
//   backend computes it with an overflow.
// - Pools: block_size > 0, num_blocks >= 0, separate scales only for int8_ds_mla, and a data
//   pointer whenever the pool has slots. An empty pool (no slots) is allowed: every index
//   into it is invalid, so it contributes nothing.
// - All arguments live on one device, and every pointer is really memory of that device
//   (asked of the CUDA seam, for CPU arguments too).
// - extra_kv is present iff extra_indices is; extra_lengths needs extra_kv.
// - Outputs (out, lse, max_logits; dequantize's rows; the pool written by quantize and
//   write_cache) do not overlap any input nor each other (byte ranges).
// - attend's scale is finite; combine has 1 to 2^30 partials; a token selects at most 2^30
//   entries (k + k_x): the GPU kernels count both in int32.
#pragma once

#include "smla/ops.hpp"

namespace smla::api {

// How much of an attend call must be real. The size queries only need shapes (null data
// pointers and absent outputs are accepted); make_plan needs the inputs but not the outputs.
enum class AttendUse { size_query, plan, run };

Status validate_attend(const char* op, const AttendArgs& args, AttendUse use);
// The workspace of a validated attend call: at least `needed` bytes, a pointer of the call's
// device (16-byte aligned on CUDA) when needed > 0, disjoint from every argument.
Status validate_workspace(const char* op, const AttendArgs& args, Workspace workspace,
                          size_t needed);
Status validate_combine(const char* op, const CombineArgs& args);
// quantize reads rows and writes the pool; dequantize reads the pool and writes rows.
Status validate_quantize(const char* op, const TensorView& rows, const KvPool& pool);
Status validate_dequantize(const char* op, const KvPool& pool, const TensorView& rows);
Status validate_write_cache(const char* op, const TensorView& rows, const TensorView& slots,
                            const KvPool& pool);

}  // namespace smla::api
