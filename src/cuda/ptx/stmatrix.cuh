// stmatrix (sm_90): the store twin of ldmatrix (ldmatrix.cuh). A warp stores 8x8 b16 matrices
// from the mma fragment layout (lane l holds row l / 4, columns 2 (l % 4) and 2 (l % 4) + 1
// of each matrix, as one b16x2 register); lanes 0-7 give the shared-memory addresses of
// matrix 0's eight 16-byte rows, lanes 8-15 matrix 1's, and so on. One instruction stores
// what four 4-byte st.shared per lane store.
#pragma once

#include <cstdint>

namespace smla::ptx {

// stmatrix.sync.aligned.m8n8.x4.shared.b16: r[i] is matrix i's fragment; `row_addr` (a
// shared-space address, as from smem_u32) is this lane's row of matrix lane / 8.
__device__ __forceinline__ void stmatrix_x4(uint32_t row_addr, uint32_t r0, uint32_t r1,
                                            uint32_t r2, uint32_t r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n"
               :
               : "r"(row_addr), "r"(r0), "r"(r1), "r"(r2), "r"(r3)
               : "memory");
}

}  // namespace smla::ptx
