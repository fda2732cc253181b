#include "cuda/hopper/q_tile_map.hpp"

#include <cuda_runtime.h>
#include <cudaTypedefs.h>

#include <cstring>

namespace smla::hopper {
namespace {

constexpr int kBoxValues = 64;  // one 128-byte row of a swizzled block
constexpr int kBoxHeads = 64;   // the head tile

// cuTensorMapEncodeTiled through the runtime, so libsmla needs no link to the driver library;
// nullptr when the driver lacks it.
PFN_cuTensorMapEncodeTiled_v12000 encode_tiled() {
  static const PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult found{};
    const cudaError_t err = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000,
                                                             cudaEnableDefault, &found);
    return err == cudaSuccess && found == cudaDriverEntryPointSuccess
               ? reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(f)
               : nullptr;
  }();
  return fn;
}

}  // namespace

QTileMap make_q_tile_map(const portable::AttendParams& p, int d_qk) {
  QTileMap m;
  std::memset(&m, 0, sizeof(m));
  const PFN_cuTensorMapEncodeTiled_v12000 encode = encode_tiled();
  if (encode == nullptr || p.tokens <= 0 || p.h_q <= 0) return m;
  // A q shared by heads or tokens (stride 0 along an extent > 1) is a valid input; the
  // driver documents strides as multiples of 16 bytes without saying what 0 does, so such a
  // q takes the copy path rather than undocumented behaviour.
  if ((p.h_q > 1 && p.q_stride_h == 0) || (p.tokens > 1 && p.q_stride_t == 0)) return m;
  constexpr cuuint64_t kElement = 2;  // bf16
  // A dimension of extent 1 may have any stride (SMLA's checks allow it); TMA never steps
  // along it, so any valid stride describes it.
  const cuuint64_t stride_h = p.h_q > 1 ? p.q_stride_h * kElement : 16;
  const cuuint64_t stride_t = p.tokens > 1 ? p.q_stride_t * kElement : 16;
  const cuuint64_t dims[3] = {static_cast<cuuint64_t>(d_qk), static_cast<cuuint64_t>(p.h_q),
                              static_cast<cuuint64_t>(p.tokens)};
  const cuuint64_t strides[2] = {stride_h, stride_t};
  const cuuint32_t box[3] = {kBoxValues, kBoxHeads, 1};
  const cuuint32_t element_strides[3] = {1, 1, 1};
  const CUresult r = encode(&m.map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 3,
                            const_cast<uint16_t*>(p.q), dims, strides, box, element_strides,
                            CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                            CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  m.by_tma = r == CUDA_SUCCESS ? 1 : 0;
  return m;
}

}  // namespace smla::hopper
