// Building blocks of argument validation (SPEC §5). Each block checks one property of one
// argument and returns a Status whose message reads
//   "<op>: argument '<name>': expected <what was expected>, got <what was given>"
// The per-op rules that combine these blocks live in validate.cpp.
//
// The rules these blocks enforce (strides, alignment, pool geometry) are listed for callers
// in validate.hpp.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "smla/format.hpp"
#include "smla/status.hpp"
#include "smla/tensor.hpp"

// Returns the Status of `expr` from the enclosing function unless it is ok.
#define SMLA_RETURN_IF_ERROR(expr)                        \
  do {                                                    \
    ::smla::Status smla_return_status_ = (expr);          \
    if (!smla_return_status_.ok()) return smla_return_status_; \
  } while (0)

namespace smla::api {

// "[5, 64]"; "[]" for an absent view.
std::string shape_string(const TensorView& t);
// "cpu", "cuda:1".
std::string device_string(Device device);

// The one message format of every validation failure.
Status invalid_arg(const char* op, const std::string& name, const std::string& expected,
                   const std::string& given);

// One dimension of an expected shape: a symbol and its extent (kAny when the symbol is
// defined by this very argument, e.g. the k of indices).
inline constexpr int64_t kAny = -1;
struct Dim {
  const char* symbol;
  int64_t extent;
};

// What a tensor argument must look like.
struct TensorRule {
  std::vector<DType> dtypes;  // accepted dtypes (usually one)
  std::vector<Dim> dims;      // rank = dims.size()
  const char* shape_note = "";  // appended to the expected shape, e.g. "with T matching q"
  bool unit_last_stride = false;
  bool output = false;  // written by the op: no self-overlap
  bool rows16 = false;  // rows 16-byte aligned on a CUDA device
};

// Whether data pointers must be real: an op call needs them, a size query does not.
enum class Need { data, shapes_only };

// Checks rank, extents, dtype, strides (their extent in bytes fitting int64), pointer presence
// and alignment of a present tensor.
// `device` is the device of the call (alignment rules differ on CUDA).
Status check_tensor(const char* op, const char* name, const TensorView& t,
                    const TensorRule& rule, Device device, Need need);

// A tensor argument and the name its errors give it.
struct NamedTensor {
  const char* name;
  const TensorView* tensor;
};
// Fails if a tensor argument's rank is negative: an optional argument with a negative rank
// must not pass for an absent one (rank 0), which would drop an output without an error.
// (A rank beyond kMaxRank is check_tensor's shape error.)
Status check_ranks(const char* op, std::initializer_list<NamedTensor> tensors);

// Checks a pool's own fields against rows of `d_qk`: format, block geometry (its extents in
// slots and bytes fitting int64), strides, alignment and the int8 split-scale layout.
Status check_pool(const char* op, const char* name, const KvPool& pool, int d_qk,
                  Device device, Need need);

// A byte range [lo, hi) of one argument, for the aliasing checks; empty when hi == lo.
struct Span {
  std::string name;
  uintptr_t lo = 0;
  uintptr_t hi = 0;
};
Span tensor_span(const std::string& name, const TensorView& t);
// The pool's data region; its split scales come as a second span.
std::vector<Span> pool_spans(const std::string& name, const KvPool& pool, int d_qk);

// Fails if any output span overlaps any input span or another output span.
Status check_disjoint(const char* op, const std::vector<Span>& outputs,
                      const std::vector<Span>& inputs);

// Fails unless every named device equals `device`.
struct Placed {
  const char* name;
  Device device;
};
Status check_same_device(const char* op, Device device, const std::vector<Placed>& args);

// Asks the CUDA seam whether each non-null pointer really is memory of `device` (for CPU
// arguments this catches device pointers passed as host ones).
struct Pointer {
  const char* name;
  const void* ptr;
};
Status check_pointers(const char* op, Device device, const std::vector<Pointer>& ptrs);

}  // namespace smla::api
