// The small API pieces every other file builds on: dtype facts, TensorView geometry, status
// names and the build information queries.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "smla/smla.hpp"

namespace smla {
namespace {

TEST(ApiDType, SizesAndNames) {
  EXPECT_EQ(dtype_size(DType::bf16), 2);
  EXPECT_EQ(dtype_size(DType::f32), 4);
  EXPECT_EQ(dtype_size(DType::i32), 4);
  EXPECT_EQ(dtype_size(DType::u8), 1);
  EXPECT_EQ(dtype_size(DType::i8), 1);
  EXPECT_EQ(dtype_size(static_cast<DType>(99)), 0);
  EXPECT_STREQ(dtype_name(DType::bf16), "bf16");
  EXPECT_STREQ(dtype_name(DType::i8), "i8");
  EXPECT_STREQ(dtype_name(static_cast<DType>(99)), "unknown");
}

TEST(ApiTensorView, ContiguousIsRowMajor) {
  int dummy = 0;
  const TensorView v = TensorView::contiguous(&dummy, DType::f32, {2, 3, 4});
  EXPECT_EQ(v.rank, 3);
  EXPECT_EQ(v.stride[0], 12);
  EXPECT_EQ(v.stride[1], 4);
  EXPECT_EQ(v.stride[2], 1);
  EXPECT_EQ(v.numel(), 24);
  EXPECT_TRUE(v.is_contiguous());
  EXPECT_TRUE(v.present());
  EXPECT_EQ(v.device, Device::cpu());
}

TEST(ApiTensorView, StridedAndContiguity) {
  int dummy = 0;
  // A transposed [T=3, h=2] view of a [h, T] buffer (FlashMLA's decode lse).
  const TensorView t = TensorView::strided(&dummy, DType::f32, {3, 2}, {1, 3});
  EXPECT_EQ(t.numel(), 6);
  EXPECT_FALSE(t.is_contiguous());
  // Extent-1 dims may carry any stride (PyTorch's rule), and empty views are contiguous.
  EXPECT_TRUE(TensorView::strided(&dummy, DType::f32, {1, 4}, {77, 1}).is_contiguous());
  EXPECT_TRUE(TensorView::strided(&dummy, DType::f32, {0, 4}, {9, 9}).is_contiguous());
  EXPECT_EQ(TensorView::contiguous(&dummy, DType::f32, {0, 4}).numel(), 0);
  // A short stride list keeps row-major strides for the rest.
  const TensorView s = TensorView::strided(&dummy, DType::f32, {2, 3, 4}, {100});
  EXPECT_EQ(s.stride[0], 100);
  EXPECT_EQ(s.stride[2], 1);
}

TEST(ApiTensorView, AbsentAndOverlongViews) {
  const TensorView absent;
  EXPECT_FALSE(absent.present());
  EXPECT_EQ(absent.numel(), 0);
  int dummy = 0;
  // Too many dims: the true rank is kept so validation can report it.
  const TensorView v = TensorView::contiguous(&dummy, DType::f32, {1, 2, 3, 4, 5});
  EXPECT_EQ(v.rank, 5);
  EXPECT_FALSE(v.is_contiguous());
  EXPECT_EQ(v.numel(), 0);
}

TEST(ApiStatus, CodeNames) {
  EXPECT_STREQ(status_code_name(StatusCode::ok), "ok");
  EXPECT_STREQ(status_code_name(StatusCode::invalid_argument), "invalid_argument");
  EXPECT_STREQ(status_code_name(StatusCode::not_built), "not_built");
  EXPECT_STREQ(status_code_name(StatusCode::unsupported), "unsupported");
  EXPECT_STREQ(status_code_name(StatusCode::cuda_error), "cuda_error");
  EXPECT_STREQ(status_code_name(StatusCode::internal), "internal");
}

TEST(ApiInfo, VersionAndBuild) {
  ASSERT_GT(std::strlen(version()), 0u);
  EXPECT_TRUE(version()[0] >= '0' && version()[0] <= '9') << version();
  const bool cuda_build = std::strlen(compiled_cuda_architectures()) > 0;
  EXPECT_EQ(cuda_build, std::strlen(kernel_preset()) > 0)
      << "architectures and preset must both be set, or both empty in a CPU-only build";
  if (!cuda_build) EXPECT_EQ(cuda_device_count(), 0);
  EXPECT_GE(cuda_device_count(), 0);
}

}  // namespace
}  // namespace smla
