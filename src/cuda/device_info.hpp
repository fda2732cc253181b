// What a kernel launcher needs to know about the device it runs on, read once per device
// (cudaGetDeviceProperties is slow) and cached for the process.
#pragma once

#include "smla/status.hpp"

namespace smla::cuda_backend {

struct DeviceInfo {
  int ordinal = 0;
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  int max_smem_per_block_optin = 0;  // bytes, after cudaFuncSetAttribute opt-in
  int l2_bytes = 0;
  int arch() const { return cc_major * 10 + cc_minor; }  // 80, 86, 89, 90, 100, 120
};

// The cached properties of CUDA device `ordinal`; fails if it does not exist.
Status device_info(int ordinal, const DeviceInfo** info);

// The PTX version of the code this binary runs on device `ordinal` (90 for code built for
// sm_90 or later; every kernel of libsmla's CUDA_ARCHITECTURES list shares it), read once by
// the check_device of the first op on that device (backend.cu); 0 before that.
int kernel_image_version(int ordinal);

}  // namespace smla::cuda_backend
