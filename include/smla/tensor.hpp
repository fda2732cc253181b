// Non-owning strided tensor views. smla never allocates or frees the memory behind them.
#pragma once

#include <cstdint>
#include <initializer_list>

namespace smla {

enum class DType : int32_t { bf16 = 0, f32 = 1, i32 = 2, u8 = 3, i8 = 4 };

int dtype_size(DType dtype);       // bytes per element
const char* dtype_name(DType dtype);

enum class DeviceKind : int32_t { cpu = 0, cuda = 1 };

struct Device {
  DeviceKind kind = DeviceKind::cpu;
  int32_t index = 0;  // CUDA ordinal; 0 for the CPU

  static Device cpu() { return {DeviceKind::cpu, 0}; }
  static Device cuda(int32_t ordinal = 0) { return {DeviceKind::cuda, ordinal}; }
  bool operator==(const Device&) const = default;
};

inline constexpr int kMaxRank = 4;

// A view of memory the caller owns. Strides are in elements (not bytes), like PyTorch's.
// A view with rank 0 is "absent": optional arguments are passed that way (a negative rank
// is an invalid argument).
struct TensorView {
  void* data = nullptr;
  DType dtype = DType::f32;
  int32_t rank = 0;
  int64_t shape[kMaxRank] = {};
  int64_t stride[kMaxRank] = {};
  Device device{};

  bool present() const { return rank > 0; }
  int64_t numel() const;
  bool is_contiguous() const;

  // A row-major contiguous view of `data` with the given shape.
  static TensorView contiguous(void* data, DType dtype, std::initializer_list<int64_t> shape,
                               Device device = Device::cpu());
  // The same view with explicit strides (elements).
  static TensorView strided(void* data, DType dtype, std::initializer_list<int64_t> shape,
                            std::initializer_list<int64_t> stride, Device device = Device::cpu());
};

}  // namespace smla
