#include "array_views.hpp"

namespace smla::python {

void throw_invalid(const std::string& message) {
  throw StatusError(Status(StatusCode::invalid_argument, message));
}

namespace {

// "int64", "float16", ... as the caller's framework would name the dtype it passed.
std::string dtype_description(nb::dlpack::dtype dtype) {
  using Code = nb::dlpack::dtype_code;
  std::string kind;
  switch (static_cast<Code>(dtype.code)) {
    case Code::Int: kind = "int"; break;
    case Code::UInt: kind = "uint"; break;
    case Code::Float: kind = "float"; break;
    case Code::Bfloat: kind = "bfloat"; break;
    case Code::Complex: kind = "complex"; break;
    case Code::Bool: kind = "bool"; break;
    default:  // the float8/float6/float4 codes never reach here: 8-bit types are bytes
      return "of DLPack type code " + std::to_string(dtype.code) + " with " +
             std::to_string(dtype.bits) + " bits";
  }
  std::string text = kind + std::to_string(dtype.bits);
  if (dtype.lanes != 1) text += "x" + std::to_string(dtype.lanes);
  return text;
}

}  // namespace

DType to_dtype(nb::dlpack::dtype dtype, const char* name) {
  using Code = nb::dlpack::dtype_code;
  const auto code = static_cast<Code>(dtype.code);
  if (dtype.lanes == 1) {
    if (dtype.bits == 16 && (code == Code::Bfloat || code == Code::UInt)) return DType::bf16;
    if (dtype.bits == 32 && code == Code::Float) return DType::f32;
    if (dtype.bits == 32 && code == Code::Int) return DType::i32;
    // Cache bytes; the Python layer views float8_e4m3fn caches as uint8 and refuses other
    // 8-bit floats, whose bytes mean something else. Bool is no cache dtype either.
    if (dtype.bits == 8 && code == Code::Int) return DType::i8;
    if (dtype.bits == 8 && code == Code::UInt) return DType::u8;
  }
  throw_invalid(std::string(name) + ": dtype " + dtype_description(dtype) +
                " is not one smla reads; expected bfloat16 (or uint16 bf16 bits), float32, "
                "int32, or cache bytes (uint8, int8)");
}

Device to_device(int device_type, int device_id, const char* name) {
  // Pinned host memory is ordinary CPU memory for the reference backend; managed memory is
  // addressable by its CUDA device.
  if (device_type == nb::device::cpu::value || device_type == nb::device::cuda_host::value) {
    return Device::cpu();
  }
  if (device_type == nb::device::cuda::value || device_type == nb::device::cuda_managed::value) {
    return Device::cuda(device_id);
  }
  throw_invalid(std::string(name) + ": arrays on DLPack device type " +
                std::to_string(device_type) + " are not supported; expected CPU or CUDA");
}

KvFormat parse_format_or_throw(const std::string& format, const char* name) {
  KvFormat parsed{};
  if (!parse_format(format.c_str(), &parsed)) {
    throw_invalid(std::string(name) + ": unknown KV format '" + format +
                  "'; expected bf16, fp8_v32, fp8_ds_mla or int8_ds_mla");
  }
  return parsed;
}

namespace {

// Checks [num_blocks, block_size(, 1), inner] and that tokens inside a block are packed.
void check_blocked(const InArray& array, int64_t inner, const char* name, const char* what) {
  const std::string n(name);
  const size_t rank = array.ndim();
  if (rank != 3 && rank != 4 && !(rank == 2 && inner == 1)) {
    throw_invalid(n + ": expected " + what + " of shape [num_blocks, block_size, " +
                  std::to_string(inner) + "] or [num_blocks, block_size, 1, " +
                  std::to_string(inner) + "], got rank " + std::to_string(rank));
  }
  const size_t last = rank - 1;
  // An empty cache has no token to pack or load, whatever its strides (NumPy 2 makes every
  // stride of a fresh empty array 0).
  bool empty = false;
  for (size_t d = 0; d < rank; ++d) empty = empty || array.shape(d) == 0;
  if (rank == 4 && array.shape(2) != 1) {
    throw_invalid(n + ": dim 2 (the KV heads) must be 1 for MLA, got " +
                  std::to_string(array.shape(2)));
  }
  if (rank > 2 && static_cast<int64_t>(array.shape(last)) != inner) {
    throw_invalid(n + ": expected " + what + " with " + std::to_string(inner) +
                  " elements in the last dim, got " + std::to_string(array.shape(last)));
  }
  if (empty) return;
  if (rank > 2 && array.shape(last) > 1 && array.stride(last) != 1) {
    throw_invalid(n + ": the last dim must have unit stride, got stride " +
                  std::to_string(array.stride(last)));
  }
  if (array.shape(1) > 1 && array.stride(1) != inner) {
    throw_invalid(n + ": tokens of a block must be packed (stride of dim 1 = " +
                  std::to_string(inner) + "), got stride " + std::to_string(array.stride(1)));
  }
}

}  // namespace

KvPool kv_pool(const InArray& cache, const std::string& format, int d_qk,
               const std::optional<InArray>& scales, const char* name) {
  const std::string n(name);
  const KvFormat kv_format = parse_format_or_throw(format, name);
  if (!format_supports_d_qk(kv_format, d_qk)) {
    throw_invalid(n + ": format " + format + " cannot hold rows of d_qk " +
                  std::to_string(d_qk));
  }
  if (scales && kv_format != KvFormat::int8_ds_mla) {
    throw_invalid(n + ": separate scales exist only for int8_ds_mla, format is " + format);
  }
  const int64_t itemsize = static_cast<int64_t>(cache.itemsize());
  const int64_t token_bytes = format_token_bytes(kv_format, d_qk, scales.has_value());
  if (cache.ndim() < 1 || token_bytes % itemsize != 0) {
    throw_invalid(n + ": a " + format + " token of d_qk " + std::to_string(d_qk) + " is " +
                  std::to_string(token_bytes) + " bytes, not a whole number of " +
                  std::to_string(itemsize) + "-byte elements");
  }
  check_blocked(cache, token_bytes / itemsize, name, "a cache");
  to_dtype(cache.dtype(), name);  // rejects dtypes that are not plain bytes, bf16 or f32

  KvPool pool;
  pool.format = kv_format;
  pool.data = const_cast<void*>(cache.data());
  pool.num_blocks = static_cast<int64_t>(cache.shape(0));
  pool.block_size = static_cast<int32_t>(cache.shape(1));
  pool.block_stride = cache.stride(0) * itemsize;
  pool.device = to_device(cache.device_type(), cache.device_id(), name);
  if (scales) {
    const std::string scales_name = n + "_scales";
    check_blocked(*scales, 1, scales_name.c_str(), "row scales");
    if (to_dtype(scales->dtype(), scales_name.c_str()) != DType::f32 ||
        scales->shape(0) != cache.shape(0) || scales->shape(1) != cache.shape(1)) {
      throw_invalid(scales_name + ": expected float32 scales of shape [" +
                    std::to_string(cache.shape(0)) + ", " + std::to_string(cache.shape(1)) +
                    "] beside the int8 values");
    }
    pool.scales = const_cast<void*>(scales->data());
    pool.scale_block_stride = scales->stride(0) * static_cast<int64_t>(sizeof(float));
  }
  return pool;
}

}  // namespace smla::python
