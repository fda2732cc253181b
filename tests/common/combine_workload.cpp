#include "common/combine_workload.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "common/random.hpp"
#include "formats/numeric.hpp"

namespace smla::test {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr int64_t kRowPad = 8;  // elements; keeps strided bf16 rows 16-byte aligned

}  // namespace

std::string CombineSpec::describe() const {
  std::ostringstream s;
  s << "S=" << S << " T=" << T << " h_q=" << h_q << " partials=" << dtype_name(partial_dtype)
    << (sink ? (sink_infinities ? " sink(+-inf)" : " sink") : "")
    << (empty_partials ? " empty-partials" : "") << (with_lse ? "" : " no-lse")
    << (strided ? " strided" : "") << " lse_spread=" << lse_spread << " seed=" << seed;
  return s.str();
}

CombineProblem::CombineProblem(const CombineSpec& spec)
    : spec_(spec), buffers_(kNumCombineBuffers) {
  static const char* const names[kNumCombineBuffers] = {"partial_out", "partial_lse", "sink", "out",
                                                        "lse"};
  for (int id = 0; id < kNumCombineBuffers; ++id) buffers_[id].name = names[id];
  buffers_[kCombineOut].output = buffers_[kCombineLse].output = true;
  Rng rng(spec.seed);
  const int64_t S = spec.S, T = spec.T, h_q = spec.h_q;
  const Device cpu = Device::cpu();

  // Partials: lse first, so an empty partial (+-inf) gets NaN outputs that must not leak.
  layout_.partial_lse = TensorView::contiguous(nullptr, DType::f32, {S, T, h_q}, cpu);
  layout_.partial_out = TensorView::contiguous(nullptr, spec.partial_dtype, {S, T, h_q, kDv}, cpu);
  buffers_[kPartialLse].bytes.resize(S * T * h_q * 4);
  buffers_[kPartialOut].bytes.resize(S * T * h_q * kDv * dtype_size(spec.partial_dtype));
  for (int64_t row = 0; row < S * T * h_q; ++row) {
    float lse = static_cast<float>(rng.uniform(-spec.lse_spread, spec.lse_spread));
    if (spec.empty_partials && rng.uniform_int(0, 3) == 0)
      lse = rng.uniform_int(0, 1) ? kInf : -kInf;
    store(buffers_[kPartialLse].bytes, row, lse);
    for (int d = 0; d < kDv; ++d) {
      // Attend's outputs are convex combinations of V rows: |values| ~ 0.1.
      const float value =
          std::isinf(lse) ? std::numeric_limits<float>::quiet_NaN() : rng.normal(0.1);
      if (spec.partial_dtype == DType::bf16)
        store(buffers_[kPartialOut].bytes, row * kDv + d, fmt::float_to_bf16_rne(value));
      else
        store(buffers_[kPartialOut].bytes, row * kDv + d, value);
    }
  }
  if (spec.sink) {
    buffers_[kCombineSink].bytes.resize(h_q * 4);
    for (int64_t h = 0; h < h_q; ++h) {
      float value = static_cast<float>(rng.uniform(-spec.lse_spread, spec.lse_spread + 2));
      if (spec.sink_infinities && rng.uniform_int(0, 1))
        value = rng.uniform_int(0, 1) ? kInf : -kInf;
      store(buffers_[kCombineSink].bytes, h, value);
    }
    layout_.sink = TensorView::contiguous(nullptr, DType::f32, {h_q}, cpu);
  }
  // out [T, h_q, 512]; strided: head-major [h_q, T, 512 + pad]. lse [T, h_q]; strided: [h_q, T].
  const int64_t out_row = spec.strided ? kDv + kRowPad : kDv;
  buffers_[kCombineOut].bytes.resize(T * h_q * out_row * 2);
  layout_.out = TensorView::strided(
      nullptr, DType::bf16, {T, h_q, kDv},
      {spec.strided ? out_row : h_q * kDv, spec.strided ? T * out_row : kDv, 1}, cpu);
  if (spec.with_lse) {
    buffers_[kCombineLse].bytes.resize(T * h_q * 4);
    layout_.lse = TensorView::strided(nullptr, DType::f32, {T, h_q},
                                      {spec.strided ? 1 : h_q, spec.strided ? T : 1}, cpu);
  }
  poison_outputs();
}

CombineArgs CombineProblem::args() {
  return args(Device::cpu(), [this](int id) -> void* { return buffers_[id].bytes.data(); });
}

CombineArgs CombineProblem::args(Device device,
                                 const std::function<void*(int buffer_id)>& base) const {
  CombineArgs a = layout_;
  auto place = [&](TensorView& view, int id) {
    if (!view.present()) return;
    view.device = device;
    if (!buffers_[id].bytes.empty()) view.data = base(id);
  };
  place(a.partial_out, kPartialOut);
  place(a.partial_lse, kPartialLse);
  place(a.sink, kCombineSink);
  place(a.out, kCombineOut);
  place(a.lse, kCombineLse);
  return a;
}

void CombineProblem::poison_outputs() {
  for (Buffer& b : buffers_)
    if (b.output) std::fill(b.bytes.begin(), b.bytes.end(), kPoisonByte);
}

std::vector<float> CombineProblem::out() const {
  return read_view(layout_.out, buffers_[kCombineOut].bytes);
}

std::vector<float> CombineProblem::lse() const {
  return read_view(layout_.lse, buffers_[kCombineLse].bytes);
}

}  // namespace smla::test
