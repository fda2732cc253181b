// What every GPU test shares: the "no CUDA device" skip, the skips of a run forced onto the
// Hopper path (ctest runs this suite under SMLA_BACKEND=portable and, in builds with the
// Hopper path, again under SMLA_BACKEND=hopper), device memory owned by a test, a workload
// (tests/common) mirrored on the device, and a full GPU run of a Problem (workspace, plan,
// attend, outputs read back into the Problem's host buffers, where tests/common's checks
// read them).
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
// cuda:0's compute capability as major * 10 + minor (90 for an H100 or H200).
int device_arch();
// Whether this process runs with SMLA_BACKEND=hopper (the hopper.* run of this suite).
bool hopper_forced();
// The head count a test of a small-head case runs with: `portable_heads` itself, or 72 in the
// hopper.* run, so that the case meets a full and a padded 64-head tile of that path (its
// single padded tile of small h_q is the matrix's, test_gpu_attend_matrix.cpp).
int heads_for_forced_path(int portable_heads);
// Whether this build holds the Hopper path (smla::compiled_gpu_paths names it).
bool hopper_compiled();
// Whether `status` is the forced Hopper path refusing a call it does not cover
// (src/cuda/backend.cu): that test is skipped with the reason, not failed.
bool hopper_does_not_cover(const Status& status);

// First statement of every GPU test: a machine without a device reports the test as
// skipped (visibly, in ctest's summary), never as passed; so does a run forced onto the
// Hopper path on a device it cannot run on, where every call would only be refused.
#define SMLA_REQUIRE_GPU()                                                                 \
  do {                                                                                     \
    if (!::smla::test::gpu::cuda_available()) GTEST_SKIP() << "no CUDA device";            \
    if (::smla::test::gpu::hopper_forced() && ::smla::test::gpu::device_arch() != 90) {    \
      GTEST_SKIP() << "SMLA_BACKEND=hopper: the Hopper path needs an sm_90 device (cuda:0 " \
                   << "is sm_" << ::smla::test::gpu::device_arch() << ")";                 \
    }                                                                                      \
  } while (0)

// Skips the test, with the message, when `status` is the forced Hopper path refusing a call
// it does not cover. Inside a helper function this returns from the helper only.
#define SMLA_SKIP_IF_HOPPER_DOES_NOT_COVER(status)                                         \
  do {                                                                                     \
    const ::smla::Status& smla_skip_status_ = (status);                                    \
    if (::smla::test::gpu::hopper_does_not_cover(smla_skip_status_)) {                     \
      GTEST_SKIP() << smla_skip_status_.message();                                         \
    }                                                                                      \
  } while (0)

// Asserts that `expr`, a Status from an attention op (plan_size, make_plan,
// attend_workspace_size, attend) or from the helpers below, is ok, printing its message;
// the forced Hopper path refusing the call skips the test instead.
#define SMLA_ASSERT_OK(expr)                                           \
  do {                                                                 \
    const ::smla::Status smla_assert_status_ = (expr);                 \
    SMLA_SKIP_IF_HOPPER_DOES_NOT_COVER(smla_assert_status_);           \
    ASSERT_TRUE(::smla::test::gpu::status_ok(smla_assert_status_));    \
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

// A CUDA graph recorded from a test stream: begin(), the library calls on that stream, end(),
// then replay() as often as wanted. Global capture mode, like PyTorch's default: any call the
// library makes that is illegal during capture (a sync, an allocation) invalidates the capture
// and end() fails. A test that stops between begin() and end() leaves no stream capturing.
class CapturedGraph {
 public:
  explicit CapturedGraph(const TestStream& stream) : stream_(stream.get()) {}
  ~CapturedGraph();
  CapturedGraph(const CapturedGraph&) = delete;
  CapturedGraph& operator=(const CapturedGraph&) = delete;

  cudaError_t begin();
  cudaError_t end();     // ends the capture and instantiates the graph
  cudaError_t replay();  // launches it on the stream and waits for it

 private:
  cudaStream_t stream_;
  bool capturing_ = false;
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
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

  // Sizes and allocates both for `args`; the first failing size query's status otherwise.
  Status allocate(const AttendArgs& args);
  Workspace ws() const { return {workspace.get(), workspace.bytes()}; }
};

// Poisons `problem`'s outputs, runs make_plan (when `with_plan`) and attend on cuda:0 on
// the default stream, waits, and reads the outputs back into the problem. Returns the first
// failing call's status (a CUDA error at the wait as cuda_error).
Status run_attend(Problem& problem, bool with_plan = true);

// An assertion over a Status that prints its message.
::testing::AssertionResult status_ok(const Status& status);

}  // namespace smla::test::gpu
