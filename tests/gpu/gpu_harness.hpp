// What every GPU test shares: the "no CUDA device" skip, device memory owned by a test, a
// Problem (tests/common) mirrored on the device, and a full GPU run of a Problem (workspace,
// plan, attend, outputs read back into the Problem's host buffers, where tests/common's
// checks read them).
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/workload.hpp"
#include "smla/ops.hpp"

namespace smla::test::gpu {

bool cuda_available();

// First statement of every GPU test: a machine without a device reports the test as
// skipped (visibly, in ctest's summary), never as passed.
#define SMLA_REQUIRE_GPU()                                                            \
  do {                                                                                \
    if (!::smla::test::gpu::cuda_available()) GTEST_SKIP() << "no CUDA device";       \
  } while (0)

// Fails the current test (with the call and the CUDA error) unless `err` is cudaSuccess.
#define SMLA_CUDA_ASSERT(expr)                                                        \
  do {                                                                                \
    const cudaError_t smla_err_ = (expr);                                             \
    ASSERT_EQ(smla_err_, cudaSuccess) << #expr << ": " << cudaGetErrorString(smla_err_); \
  } while (0)

// Device memory of cuda:0 owned by a test. Throws std::runtime_error when the allocation
// fails (GoogleTest reports it as a failure of the test).
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* get() const { return data_; }
  size_t bytes() const { return bytes_; }
  // Synchronous copies of the whole buffer (host.size() must equal bytes()).
  void upload(const std::vector<uint8_t>& host);
  std::vector<uint8_t> download() const;

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

// A non-blocking stream owned by a test.
class TestStream {
 public:
  TestStream();
  ~TestStream();
  TestStream(const TestStream&) = delete;
  TestStream& operator=(const TestStream&) = delete;
  cudaStream_t get() const { return stream_; }
  Stream smla() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

// Every non-empty buffer of a Problem copied to cuda:0, with views over the copies.
class DeviceProblem {
 public:
  explicit DeviceProblem(const Problem& problem);

  // The Problem's AttendArgs, rebased onto the device copies.
  AttendArgs args() const;
  // Copies host buffer `id` of `problem` (same spec, so same size) over the device copy.
  void upload(const Problem& problem, int id);
  // Copies the device outputs back into `problem`'s host buffers.
  void download_outputs(Problem& problem) const;

 private:
  const Problem& problem_;
  std::vector<DeviceBuffer> buffers_;  // [kNumBuffers]; empty where the problem has none
};

// The caller-owned scratch of one attend call: a workspace sized by
// attend_workspace_size and a plan buffer sized by plan_size.
struct AttendScratch {
  DeviceBuffer workspace;
  DeviceBuffer plan_buffer;
  Plan plan;

  // Sizes and allocates both for `args`; fails the test when a size query fails.
  ::testing::AssertionResult allocate(const AttendArgs& args);
  Workspace ws() const { return {workspace.get(), workspace.bytes()}; }
};

// Poisons `problem`'s outputs, runs make_plan (when `with_plan`) and attend on cuda:0 on
// `stream`, waits, and reads the outputs back into the problem. A failing status or CUDA
// error makes the result a failure naming it.
::testing::AssertionResult run_attend(Problem& problem, bool with_plan = true,
                                      cudaStream_t stream = nullptr);

// An assertion over a Status that prints its message.
::testing::AssertionResult status_ok(const Status& status);

}  // namespace smla::test::gpu
