// GPU quantize / dequantize / write_cache (SPEC §2, §3.4): the seam between the backend
// dispatcher and the format kernels. Arguments arrive validated by src/api, with every
// pointer on the current device. The bytes written are identical to src/reference's: both
// sides encode through src/formats (numeric.hpp and kv_layout.hpp).
#pragma once

#include <cuda_runtime.h>

#include "smla/format.hpp"
#include "smla/status.hpp"
#include "smla/tensor.hpp"

namespace smla::cuda_backend::formats {

// Rows [N, d_qk] bf16 into slots 0..N-1 of `pool`.
Status quantize(const TensorView& rows, const KvPool& pool, cudaStream_t stream);
// Slots 0..N-1 of `pool` into rows [N, d_qk] bf16.
Status dequantize(const KvPool& pool, const TensorView& rows, cudaStream_t stream);
// Rows [N, d_qk] bf16 at slot ids [N] i32; ids outside [0, pool.slots()) are skipped.
Status write_cache(const TensorView& rows, const TensorView& slots, const KvPool& pool,
                   cudaStream_t stream);

}  // namespace smla::cuda_backend::formats
