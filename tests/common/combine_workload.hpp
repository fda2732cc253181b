// Random combine workloads (SPEC §3.3): S partial results of [T, h_q] rows, owned as bytes
// like a Problem (workload.hpp) so a GPU test mirrors each buffer and rebases the views.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/workload.hpp"
#include "smla/ops.hpp"

namespace smla::test {

struct CombineSpec {
  int64_t S = 2;
  int64_t T = 3;
  int h_q = 16;
  DType partial_dtype = DType::f32;  // f32 or bf16
  bool sink = false;
  bool sink_infinities = false;  // about half of the sink entries are +inf or -inf
  // About a quarter of the partials are empty (lse +inf or -inf) with NaN outputs, and some
  // rows have only empty partials.
  bool empty_partials = false;
  bool with_lse = true;
  bool strided = false;     // out head-major with padded rows, lse transposed
  double lse_spread = 4.0;  // partial lse ~ uniform in [-spread, spread]
  uint64_t seed = 1;

  std::string describe() const;
};

enum CombineBufferId : int {
  kPartialOut,
  kPartialLse,
  kCombineSink,
  kCombineOut,
  kCombineLse,
  kNumCombineBuffers
};

class CombineProblem {
 public:
  explicit CombineProblem(const CombineSpec& spec);

  const CombineSpec& spec() const { return spec_; }
  Buffer& buffer(int id) { return buffers_[id]; }
  const Buffer& buffer(int id) const { return buffers_[id]; }

  CombineArgs args();
  // As Problem::args: base(id) is where buffer `id` lives (never called for an empty one).
  CombineArgs args(Device device, const std::function<void*(int buffer_id)>& base) const;
  void poison_outputs();

  std::vector<float> out() const;  // [T, h_q, 512]
  std::vector<float> lse() const;  // [T, h_q]; empty without lse

 private:
  CombineSpec spec_;
  std::vector<Buffer> buffers_;
  CombineArgs layout_;  // views at byte offset 0 of their buffers
};

}  // namespace smla::test
