#include "gpu/gpu_harness.hpp"

#include <stdexcept>
#include <string>
#include <utility>

namespace smla::test::gpu {

bool cuda_available() {
  // Asked through the library, so the tests see exactly what smla sees (a build without a
  // usable driver answers 0 as well).
  static const bool available = cuda_device_count() > 0;
  return available;
}

DeviceBuffer::DeviceBuffer(size_t bytes) : bytes_(bytes) {
  if (bytes == 0) return;
  const cudaError_t err = cudaMalloc(&data_, bytes);
  if (err != cudaSuccess) {
    throw std::runtime_error("cudaMalloc(" + std::to_string(bytes) +
                             ") failed: " + cudaGetErrorString(err));
  }
}

DeviceBuffer::~DeviceBuffer() {
  if (data_ != nullptr) cudaFree(data_);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) cudaFree(data_);
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void DeviceBuffer::upload(const std::vector<uint8_t>& host) {
  if (host.size() != bytes_) throw std::runtime_error("DeviceBuffer::upload: size mismatch");
  if (bytes_ == 0) return;
  const cudaError_t err = cudaMemcpy(data_, host.data(), bytes_, cudaMemcpyHostToDevice);
  if (err != cudaSuccess) throw std::runtime_error(cudaGetErrorString(err));
}

std::vector<uint8_t> DeviceBuffer::download() const {
  std::vector<uint8_t> host(bytes_);
  if (bytes_ == 0) return host;
  const cudaError_t err = cudaMemcpy(host.data(), data_, bytes_, cudaMemcpyDeviceToHost);
  if (err != cudaSuccess) throw std::runtime_error(cudaGetErrorString(err));
  return host;
}

TestStream::TestStream() {
  const cudaError_t err = cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking);
  if (err != cudaSuccess) throw std::runtime_error(cudaGetErrorString(err));
}

TestStream::~TestStream() {
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}

::testing::AssertionResult status_ok(const Status& status) {
  if (status.ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << status_code_name(status.code()) << ": " << status.message();
}

::testing::AssertionResult AttendScratch::allocate(const AttendArgs& args) {
  size_t ws_bytes = 0, plan_bytes = 0;
  ::testing::AssertionResult r = status_ok(attend_workspace_size(args, &ws_bytes));
  if (!r) return r << " (attend_workspace_size)";
  r = status_ok(plan_size(args, &plan_bytes));
  if (!r) return r << " (plan_size)";
  workspace = DeviceBuffer(ws_bytes);
  plan_buffer = DeviceBuffer(plan_bytes);
  plan = Plan{};
  plan.data = plan_buffer.get();
  plan.bytes = plan_bytes;
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult run_attend(Problem& problem, bool with_plan) {
  problem.poison_outputs();
  DeviceProblem device(problem);
  const AttendArgs args = device.args();
  AttendScratch scratch;
  ::testing::AssertionResult r = scratch.allocate(args);
  if (!r) return r;
  if (with_plan) {
    r = status_ok(make_plan(args, &scratch.plan));
    if (!r) return r << " (make_plan)";
  }
  r = status_ok(attend(args, scratch.ws(), nullptr, with_plan ? &scratch.plan : nullptr));
  if (!r) return r << " (attend)";
  const cudaError_t err = cudaDeviceSynchronize();
  if (err != cudaSuccess) {
    return ::testing::AssertionFailure() << "attend: " << cudaGetErrorString(err);
  }
  device.download_outputs(problem);
  return ::testing::AssertionSuccess();
}

}  // namespace smla::test::gpu
