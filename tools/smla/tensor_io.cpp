#include "tensor_io.hpp"

#include <cstdint>

#include "args.hpp"
#include "bf16.hpp"
#include "cli.hpp"

namespace smla::cli {

NpyInput read_input(const std::string& path, NpyDType dtype, size_t rank, const char* role) {
  NpyInput input{path, {}};
  try {
    input.array = read_npy(path);
  } catch (const NpyError& e) {
    throw failure(std::string(role) + ": " + e.what());
  }
  const NpyArray& a = input.array;
  if (a.dtype != dtype || a.shape.size() != rank) {
    throw failure(std::string(role) + ": " + path + ": expected a " + std::to_string(rank) + "-d " +
                  npy_descr(dtype) + " array, got shape " + a.shape_string() + " of " +
                  npy_descr(a.dtype));
  }
  return input;
}

std::vector<uint16_t> bf16_from_f32(const NpyArray& array) {
  std::vector<uint16_t> out(static_cast<size_t>(array.numel()));
  const float* in = array.data<float>();
  for (size_t i = 0; i < out.size(); ++i) out[i] = bf16_from_float(in[i]);
  return out;
}

NpyArray f32_from_bf16(const std::vector<uint16_t>& values, std::vector<int64_t> shape) {
  NpyArray out = NpyArray::zeros(NpyDType::f32, std::move(shape));
  float* dst = out.data<float>();
  for (size_t i = 0; i < values.size(); ++i) dst[i] = float_from_bf16(values[i]);
  return out;
}

TensorView view_of(NpyArray& array) {
  TensorView view;
  view.data = array.bytes.data();
  view.dtype = array.dtype == NpyDType::f32   ? DType::f32
               : array.dtype == NpyDType::i32 ? DType::i32
                                              : DType::u8;
  view.rank = static_cast<int32_t>(array.shape.size());
  int64_t stride = 1;
  for (int d = view.rank - 1; d >= 0; --d) {
    view.shape[d] = array.shape[d];
    view.stride[d] = stride;
    stride *= array.shape[d];
  }
  return view;
}

KvFormat format_option(const Args& args, const char* name) {
  const std::string text = args.required(name);
  KvFormat format{};
  if (!parse_format(text.c_str(), &format)) {
    throw usage_error(std::string(name) +
                      " expects bf16, fp8_v32, fp8_ds_mla or int8_ds_mla, got '" + text + "'");
  }
  return format;
}

int32_t block_size_option(const Args& args) {
  return static_cast<int32_t>(args.required_integer("--block-size", 1, 1 << 20));
}

namespace {

// How the messages name the row widths is_model_d_qk accepts.
constexpr const char* kDqkWidths = "576 (DeepSeek-V3.2) or 512 (DeepSeek-V4)";

}  // namespace

int d_qk_option(const Args& args) {
  // Any integer parses, so that the message names the two widths.
  const int64_t d_qk = args.required_integer("--d-qk", INT64_MIN, INT64_MAX);
  if (!is_model_d_qk(d_qk)) {
    throw usage_error(std::string("--d-qk expects ") + kDqkWidths + ", got " +
                      std::to_string(d_qk));
  }
  return static_cast<int>(d_qk);
}

int d_qk_of(const NpyInput& input, size_t dim) {
  const int64_t d_qk = input.array.shape[dim];
  if (!is_model_d_qk(d_qk)) {
    throw failure(input.path + ": dim " + std::to_string(dim) + " is d_qk, which must be " +
                  kDqkWidths + "; the file's shape is " + input.array.shape_string());
  }
  return static_cast<int>(d_qk);
}

KvPool cache_pool(NpyInput& cache, KvFormat format, int32_t block_size, int d_qk) {
  if (!format_supports_d_qk(format, d_qk)) {
    throw failure(std::string("format ") + format_name(format) + " cannot hold rows of d_qk " +
                  std::to_string(d_qk));
  }
  KvPool pool =
      KvPool::packed(format, cache.array.bytes.data(), cache.array.shape[0], block_size, d_qk);
  const int64_t block_bytes = pool.packed_block_bytes(d_qk);
  if (cache.array.shape[1] != block_bytes) {
    throw failure(cache.path + ": a " + format_name(format) + " cache of block size " +
                  std::to_string(block_size) + " and d_qk " + std::to_string(d_qk) +
                  " has blocks of " + std::to_string(block_bytes) + " bytes, the file's shape is " +
                  cache.array.shape_string());
  }
  return pool;
}

}  // namespace smla::cli
