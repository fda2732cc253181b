#include "common/naive_attention.hpp"

#include <cmath>
#include <cstring>
#include <limits>

#include "formats/numeric.hpp"
#include "formats/token_codec.hpp"

namespace smla::test {
namespace {

template <class T>
T read(const TensorView& v, int64_t i0, int64_t i1 = 0, int64_t i2 = 0) {
  T x;
  const int64_t offset =
      i0 * v.stride[0] + (v.rank > 1 ? i1 * v.stride[1] : 0) + (v.rank > 2 ? i2 * v.stride[2] : 0);
  std::memcpy(&x, static_cast<const char*>(v.data) + offset * int64_t{sizeof(T)}, sizeof(T));
  return x;
}

// K rows of the valid entries of token t, in order: main pool, then extra pool.
void valid_rows(const KvPool& pool, const TensorView& indices, const TensorView& lengths, int64_t t,
                int d_qk, std::vector<std::vector<double>>& rows) {
  if (!pool.present()) return;
  std::vector<uint16_t> token(d_qk);
  for (int64_t p = 0; p < indices.shape[1]; ++p) {
    if (lengths.present() && !(p < read<int32_t>(lengths, t))) continue;
    const int32_t index = read<int32_t>(indices, t, p);
    if (!(index >= 0 && index < pool.slots())) continue;
    fmt::decode_token(pool, index, d_qk, token.data());
    std::vector<double> row(d_qk);
    for (int d = 0; d < d_qk; ++d) row[d] = fmt::bf16_to_float(token[d]);
    rows.push_back(row);
  }
}

}  // namespace

AttendResult naive_attend(const AttendArgs& args) {
  AttendResult r;
  r.T = args.q.shape[0];
  r.h_q = static_cast<int>(args.q.shape[1]);
  const int d_qk = static_cast<int>(args.q.shape[2]);
  r.out.assign(r.T * r.h_q * kDv, 0.0);
  r.lse.assign(r.T * r.h_q, std::numeric_limits<double>::infinity());
  r.max_logits.assign(r.T * r.h_q, -std::numeric_limits<double>::infinity());

  for (int64_t t = 0; t < r.T; ++t) {
    std::vector<std::vector<double>> K;
    valid_rows(args.kv, args.indices, args.lengths, t, d_qk, K);
    valid_rows(args.extra_kv, args.extra_indices, args.extra_lengths, t, d_qk, K);
    if (K.empty()) continue;  // out 0, lse +inf, max_logits -inf
    for (int h = 0; h < r.h_q; ++h) {
      std::vector<double> q(d_qk);
      for (int d = 0; d < d_qk; ++d) q[d] = fmt::bf16_to_float(read<uint16_t>(args.q, t, h, d));
      std::vector<double> s(K.size());
      double max_s = -std::numeric_limits<double>::infinity();
      for (size_t j = 0; j < K.size(); ++j) {
        double dot = 0.0;
        for (int d = 0; d < d_qk; ++d) dot += q[d] * K[j][d];
        s[j] = static_cast<double>(args.scale) * dot;
        max_s = std::max(max_s, s[j]);
      }
      double sum = 0.0;
      for (double sj : s) sum += std::exp(sj - max_s);
      const double lse = max_s + std::log(sum);
      double f = 1.0;
      if (args.sink.present()) f = 1.0 / (1.0 + std::exp(read<float>(args.sink, h) - lse));
      double* out = &r.out[(t * r.h_q + h) * kDv];
      for (size_t j = 0; j < K.size(); ++j) {
        const double p = f * std::exp(s[j] - lse);
        for (int d = 0; d < kDv; ++d) out[d] += p * K[j][d];
      }
      r.lse[t * r.h_q + h] = lse;
      r.max_logits[t * r.h_q + h] = max_s;
    }
  }
  return r;
}

}  // namespace smla::test
