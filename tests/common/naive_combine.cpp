#include "common/naive_combine.hpp"

#include <cmath>
#include <cstring>
#include <limits>

#include "formats/numeric.hpp"

namespace smla::test {
namespace {

float read_f32(const TensorView& v, int64_t offset) {
  float x;
  std::memcpy(&x, static_cast<const char*>(v.data) + 4 * offset, 4);
  return x;
}

}  // namespace

AttendResult naive_combine(const CombineArgs& args) {
  const TensorView& po = args.partial_out;
  const TensorView& pl = args.partial_lse;
  AttendResult r;
  r.T = pl.shape[1];
  r.h_q = static_cast<int>(pl.shape[2]);
  r.out.assign(r.T * r.h_q * kDv, 0.0);
  r.lse.assign(r.T * r.h_q, std::numeric_limits<double>::infinity());
  for (int64_t t = 0; t < r.T; ++t)
    for (int h = 0; h < r.h_q; ++h) {
      // L = ln sum_i exp(lse_i) over the partials that hold something.
      double sum = 0.0;
      double shift = -std::numeric_limits<double>::infinity();
      for (int64_t i = 0; i < pl.shape[0]; ++i) {
        const double lse = read_f32(pl, i * pl.stride[0] + t * pl.stride[1] + h * pl.stride[2]);
        if (std::isfinite(lse)) shift = std::max(shift, lse);
      }
      if (std::isinf(shift)) continue;  // every partial empty: out 0, lse +inf
      for (int64_t i = 0; i < pl.shape[0]; ++i) {
        const double lse = read_f32(pl, i * pl.stride[0] + t * pl.stride[1] + h * pl.stride[2]);
        if (std::isfinite(lse)) sum += std::exp(lse - shift);
      }
      const double L = shift + std::log(sum);
      double f = 1.0;
      if (args.sink.present())
        f = 1.0 / (1.0 + std::exp(read_f32(args.sink, h * args.sink.stride[0]) - L));
      for (int64_t i = 0; i < pl.shape[0]; ++i) {
        const double lse = read_f32(pl, i * pl.stride[0] + t * pl.stride[1] + h * pl.stride[2]);
        if (!std::isfinite(lse)) continue;
        const double w = f * std::exp(lse - L);
        for (int d = 0; d < kDv; ++d) {
          const int64_t at = i * po.stride[0] + t * po.stride[1] + h * po.stride[2] + d;
          double x;
          if (po.dtype == DType::bf16) {
            uint16_t bits;
            std::memcpy(&bits, static_cast<const char*>(po.data) + 2 * at, 2);
            x = fmt::bf16_to_float(bits);
          } else {
            x = read_f32(po, at);
          }
          r.out[(t * r.h_q + h) * kDv + d] += w * x;
        }
      }
      r.lse[t * r.h_q + h] = L;
    }
  return r;
}

}  // namespace smla::test
