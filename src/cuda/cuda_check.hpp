// Turning CUDA runtime errors into smla::Status. Every CUDA call and every launch in smla
// is checked; a failure becomes a cuda_error status naming the call site.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "smla/status.hpp"

namespace smla::cuda_backend {

inline Status cuda_status(cudaError_t err, const char* op, const char* what) {
  if (err == cudaSuccess) return Status::success();
  return Status(StatusCode::cuda_error, std::string(op) + ": " + what + " failed: " +
                                            cudaGetErrorName(err) + " (" +
                                            cudaGetErrorString(err) + ")");
}

// Checks the launch that just happened (configuration errors surface here, not at sync).
inline Status launch_status(const char* op, const char* kernel) {
  return cuda_status(cudaGetLastError(), op, kernel);
}

}  // namespace smla::cuda_backend

#define SMLA_CUDA_TRY(expr, op, what)                                     \
  do {                                                                    \
    ::smla::Status smla_cuda_try_status_ =                                \
        ::smla::cuda_backend::cuda_status((expr), (op), (what));          \
    if (!smla_cuda_try_status_.ok()) return smla_cuda_try_status_;        \
  } while (0)
