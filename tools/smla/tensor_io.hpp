// Between .npy files and the library's views: shape checks that name the file, the
// float32 <-> bf16 conversion, and the uint8 [num_blocks, block_bytes] form of a KV pool.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "npy.hpp"
#include "smla/format.hpp"
#include "smla/tensor.hpp"

namespace smla::cli {

class Args;

// An array read from `path`, with the path kept for error messages.
struct NpyInput {
  std::string path;
  NpyArray array;
};

// Reads `path` and checks its dtype and rank; `role` ("indices") names it in errors.
NpyInput read_input(const std::string& path, NpyDType dtype, size_t rank, const char* role);

// float32 -> bf16 (round to nearest even), and back.
std::vector<uint16_t> bf16_from_f32(const NpyArray& array);
NpyArray f32_from_bf16(const std::vector<uint16_t>& values, std::vector<int64_t> shape);

// A contiguous CPU view of the array, as the library's `dtype` (an int32 file -> i32).
TensorView view_of(NpyArray& array);

// Parses a --format style option value; a usage error lists the valid names.
KvFormat format_option(const Args& args, const char* name);
// The --block-size option: slots per pool block, 1 .. 2^20.
int32_t block_size_option(const Args& args);
// The --d-qk option: 576 or 512 (a usage error otherwise).
int d_qk_option(const Args& args);
// Dim `dim` of an input file as d_qk: 576 or 512, else a failure naming the file. Read
// before any buffer is sized by it (a [2^20, 128, 0] q must not allocate 128 GiB of out).
int d_qk_of(const NpyInput& input, size_t dim);

// The pool held by a uint8 [num_blocks, block_bytes] cache file, where block_bytes must be
// the packed block size of `format` for rows of `d_qk` and `block_size` slots.
KvPool cache_pool(NpyInput& cache, KvFormat format, int32_t block_size, int d_qk);

}  // namespace smla::cli
