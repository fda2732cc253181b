// What every GPU test shares: the "no CUDA device" skip, device memory owned by a test, a
// workload (tests/common) mirrored on the device, and a full GPU run of a Problem (workspace,
// plan, attend, outputs read back into the Problem's host buffers, where tests/common's
// checks read them).
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/combine_workload.hpp"
#include "common/workload.hpp"
#include "smla/ops.hpp"

namespace smla::test::gpu {

bool cuda_available();

// First statement of every GPU test: a machine without a device reports the test as
// skipped (visibly, in ctest's summary), never as passed.
#define SMLA_REQUIRE_GPU()                                                      \
  do {                                                                          \
    if (!::smla::test::gpu::cuda_available()) GTEST_SKIP() << "no CUDA device"; \
  } while (0)

// Fails the current test (with the call and the CUDA error) unless `err` is cudaSuccess.
#define SMLA_CUDA_ASSERT(expr)                                                           \
  do {                                                                                   \
    const cudaError_t smla_err_ = (expr);                                                \
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

// Every non-empty buffer of a workload (a Problem or a CombineProblem, tests/common) copied
// to cuda:0, with views over the copies. NumBuffers is the workload's buffer count.
template <class Workload, int NumBuffers>
class DeviceMirror {
 public:
  explicit DeviceMirror(const Workload& workload) : workload_(workload), buffers_(NumBuffers) {
    for (int id = 0; id < NumBuffers; ++id) {
      buffers_[id] = DeviceBuffer(workload.buffer(id).bytes.size());
      buffers_[id].upload(workload.buffer(id).bytes);
    }
  }

  // The workload's arguments (AttendArgs, CombineArgs), rebased onto the device copies.
  auto args() const {
    return workload_.args(Device::cuda(0), [this](int id) { return buffers_[id].get(); });
  }
  // Copies host buffer `id` of `workload` (same spec, so same size) over the device copy.
  void upload(const Workload& workload, int id) { buffers_[id].upload(workload.buffer(id).bytes); }
  // Copies the device outputs back into `workload`'s host buffers.
  void download_outputs(Workload& workload) const {
    for (int id = 0; id < NumBuffers; ++id) {
      if (workload.buffer(id).output) workload.buffer(id).bytes = buffers_[id].download();
    }
  }

 private:
  const Workload& workload_;
  std::vector<DeviceBuffer> buffers_;  // empty where the workload has no such buffer
};

using DeviceProblem = DeviceMirror<Problem, kNumBuffers>;
using DeviceCombineProblem = DeviceMirror<CombineProblem, kNumCombineBuffers>;

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
// the default stream, waits, and reads the outputs back into the problem. A failing status
// or CUDA error makes the result a failure naming it.
::testing::AssertionResult run_attend(Problem& problem, bool with_plan = true);

// An assertion over a Status that prints its message.
::testing::AssertionResult status_ok(const Status& status);

}  // namespace smla::test::gpu
