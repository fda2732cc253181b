#include "gpu/gpu_harness.hpp"

#include <cstdlib>
#include <cstring>
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

int device_arch() {
  static const int arch = [] {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) return 0;
    return prop.major * 10 + prop.minor;
  }();
  return arch;
}

bool hopper_forced() {
  const char* forced = std::getenv("SMLA_BACKEND");
  return forced != nullptr && std::strcmp(forced, "hopper") == 0;
}

int heads_for_forced_path(int portable_heads) { return hopper_forced() ? 72 : portable_heads; }

bool hopper_compiled() {
  return (";" + std::string(compiled_gpu_paths()) + ";").find(";hopper;") != std::string::npos;
}

bool hopper_does_not_cover(const Status& status) {
  return status.code() == StatusCode::unsupported &&
         status.message().find("SMLA_BACKEND=hopper") != std::string::npos;
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
  cudaError_t err = cudaMemcpy(data_, host.data(), bytes_, cudaMemcpyHostToDevice);
  // From pageable memory cudaMemcpy may return before the data reaches the device, and the
  // tests' streams are non-blocking (not ordered after the legacy stream): wait for it.
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
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

CapturedGraph::~CapturedGraph() {
  if (capturing_) {
    cudaGraph_t partial = nullptr;
    cudaStreamEndCapture(stream_, &partial);
    if (partial != nullptr) cudaGraphDestroy(partial);
  }
  if (exec_ != nullptr) cudaGraphExecDestroy(exec_);
  if (graph_ != nullptr) cudaGraphDestroy(graph_);
}

cudaError_t CapturedGraph::begin() {
  const cudaError_t err = cudaStreamBeginCapture(stream_, cudaStreamCaptureModeGlobal);
  capturing_ = err == cudaSuccess;
  return err;
}

cudaError_t CapturedGraph::end() {
  capturing_ = false;
  const cudaError_t err = cudaStreamEndCapture(stream_, &graph_);
  if (err != cudaSuccess) return err;
  return cudaGraphInstantiate(&exec_, graph_, 0);
}

cudaError_t CapturedGraph::replay() {
  const cudaError_t err = cudaGraphLaunch(exec_, stream_);
  if (err != cudaSuccess) return err;
  return cudaStreamSynchronize(stream_);
}

::testing::AssertionResult status_ok(const Status& status) {
  if (status.ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << status_code_name(status.code()) << ": " << status.message();
}

// The ops' messages name the op ("smla::plan_size: ..."), so statuses pass through as they are.
Status AttendScratch::allocate(const AttendArgs& args) {
  size_t ws_bytes = 0, plan_bytes = 0;
  Status st = attend_workspace_size(args, &ws_bytes);
  if (st.ok()) st = plan_size(args, &plan_bytes);
  if (!st.ok()) return st;
  workspace = DeviceBuffer(ws_bytes);
  plan_buffer = DeviceBuffer(plan_bytes);
  plan = Plan{};
  plan.data = plan_buffer.get();
  plan.bytes = plan_bytes;
  return Status::success();
}

Status run_attend(Problem& problem, bool with_plan) {
  problem.poison_outputs();
  DeviceProblem device(problem);
  const AttendArgs args = device.args();
  AttendScratch scratch;
  Status st = scratch.allocate(args);
  if (st.ok() && with_plan) st = make_plan(args, &scratch.plan);
  if (st.ok()) st = attend(args, scratch.ws(), nullptr, with_plan ? &scratch.plan : nullptr);
  if (!st.ok()) return st;
  const cudaError_t err = cudaDeviceSynchronize();
  if (err != cudaSuccess) {
    return Status(StatusCode::cuda_error, std::string("attend: ") + cudaGetErrorString(err));
  }
  device.download_outputs(problem);
  return Status::success();
}

}  // namespace smla::test::gpu
