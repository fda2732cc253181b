// The reference combine (SPEC §3.3, include/smla/ops.hpp): merges partial attention results
// by log-sum-exp, in double so it can serve as the oracle of the GPU combine.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <new>
#include <vector>

#include "formats/numeric.hpp"
#include "reference/parallel.hpp"
#include "reference/reference.hpp"
#include "reference/strided.hpp"

namespace smla::reference {
namespace {

// Element d of partial i's row (t, h) as float, whichever dtype the partials have.
float partial_value(const TensorView& partial_out, int64_t i, int64_t t, int64_t h, int64_t d) {
  if (partial_out.dtype == DType::bf16)
    return fmt::bf16_to_float(*element<const uint16_t>(partial_out, i, t, h, d));
  return *element<const float>(partial_out, i, t, h, d);
}

// Row (t, h). `weights` is scratch of S entries.
void combine_row(const CombineArgs& args, int64_t t, int64_t h, std::vector<double>& weights) {
  const int64_t splits = args.partial_lse.shape[0];
  // A partial with an infinite lse holds nothing (+inf is attend's "no valid entry"): it gets
  // weight 0 by being skipped, so whatever its out holds (even NaN) never leaks.
  double max_lse = -std::numeric_limits<double>::infinity();
  bool any = false;
  for (int64_t i = 0; i < splits; ++i) {
    const double lse = *element<const float>(args.partial_lse, i, t, h);
    if (std::isinf(lse)) continue;
    max_lse = any ? std::max(max_lse, lse) : lse;
    any = true;
  }

  uint16_t* out = element<uint16_t>(args.out, t, h, 0);  // [kDv]
  if (!any) {
    std::fill(out, out + kDv, fmt::float_to_bf16_rne(0.0f));
    if (args.lse.present())
      *element<float>(args.lse, t, h) = std::numeric_limits<float>::infinity();
    return;
  }

  double sum = 0.0;
  for (int64_t i = 0; i < splits; ++i) {
    const double lse = *element<const float>(args.partial_lse, i, t, h);
    weights[i] = std::isinf(lse) ? 0.0 : std::exp(lse - max_lse);
    sum += weights[i];
  }
  const double merged_lse = max_lse + std::log(sum);
  if (args.lse.present()) *element<float>(args.lse, t, h) = static_cast<float>(merged_lse);
  // The sink is applied once, to the merged result: f = 1 / (1 + exp(sink - L)).
  double f = 1.0;
  if (args.sink.present()) {
    const double sink = *element<const float>(args.sink, h);
    f = 1.0 / (1.0 + std::exp(sink - merged_lse));
  }
  const double out_scale = f / sum;
  for (int64_t d = 0; d < kDv; ++d) {
    double acc = 0.0;
    for (int64_t i = 0; i < splits; ++i)
      if (weights[i] != 0.0) acc += weights[i] * partial_value(args.partial_out, i, t, h, d);
    out[d] = fmt::float_to_bf16_rne(static_cast<float>(acc * out_scale));
  }
}

}  // namespace

Status combine(const CombineArgs& args) {
  const int64_t splits = args.partial_lse.shape[0];
  const int64_t tokens = args.partial_lse.shape[1];
  const int64_t h_q = args.partial_lse.shape[2];
  if (tokens == 0 || h_q == 0) return Status::success();
  try {
    const int workers = parallel_workers(tokens);
    std::vector<std::vector<double>> weights(workers, std::vector<double>(splits));
    parallel_for(tokens, workers, [&](int64_t t, int worker) {
      for (int64_t h = 0; h < h_q; ++h) combine_row(args, t, h, weights[worker]);
    });
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::internal, "combine (cpu): out of host memory for the scratch");
  }
  return Status::success();
}

}  // namespace smla::reference
