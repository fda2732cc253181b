#include "bench_check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "api/fnv1a.hpp"
#include "bf16.hpp"
#include "cli.hpp"
#include "formats/token_codec.hpp"
#include "reference/parallel.hpp"

namespace smla::cli {

namespace {

// The float64 results of one (token, head).
struct Expected {
  double lse;
  double max_logit;
  std::vector<double> out;  // [512]
};

// The dequantized K rows one token selects, main pool then extra pool, valid entries only.
// Each row is decoded alone (fmt::decode_token, the reader dequantize and the reference use),
// on every core: dequantizing the whole blocks the entries fall in, on one thread, took 1-12 s
// a row on the H200 machine's host for the anchors' large pools, most of the bench's time.
class SelectedRows {
 public:
  SelectedRows(const HostProblem& problem, int64_t token) : d_qk_(problem.workload.d_qk) {
    const Workload& w = problem.workload;
    gather(problem.main, w.main.topk, token);
    if (w.has_extra()) gather(problem.extra, w.extra.topk, token);
  }
  int64_t count() const { return static_cast<int64_t>(rows_.size()) / d_qk_; }
  const float* row(int64_t j) const { return rows_.data() + j * d_qk_; }

 private:
  void gather(const HostPool& host, int32_t topk, int64_t token) {
    const KvPool& pool = host.pool;
    std::vector<int64_t> slots;
    for (int32_t i = 0; i < topk; ++i) {
      const int64_t slot = host.indices[token * topk + i];
      if (slot >= 0 && slot < pool.slots()) slots.push_back(slot);  // SPEC §1: skip invalid
    }
    const size_t first = rows_.size();
    rows_.resize(first + slots.size() * static_cast<size_t>(d_qk_));
    const int64_t n = static_cast<int64_t>(slots.size());
    const int workers = reference::parallel_workers(n);
    std::vector<std::vector<uint16_t>> scratch(workers, std::vector<uint16_t>(d_qk_));
    reference::parallel_for(n, workers, [&](int64_t j, int worker) {
      uint16_t* values = scratch[worker].data();
      fmt::decode_token(pool, slots[j], d_qk_, values);
      float* dst = rows_.data() + first + j * d_qk_;
      for (int c = 0; c < d_qk_; ++c) dst[c] = float_from_bf16(values[c]);
    });
  }

  int d_qk_;
  std::vector<float> rows_;  // [count, d_qk]
};

Expected evaluate(const HostProblem& problem, const SelectedRows& rows, int64_t token, int head) {
  const Workload& w = problem.workload;
  const uint16_t* q = problem.q.data() + (token * w.h_q + head) * w.d_qk;
  std::vector<double> qd(static_cast<size_t>(w.d_qk));
  for (int c = 0; c < w.d_qk; ++c) qd[c] = float_from_bf16(q[c]);

  const int64_t n = rows.count();
  std::vector<double> logits(static_cast<size_t>(n));
  double max_logit = -std::numeric_limits<double>::infinity();
  for (int64_t j = 0; j < n; ++j) {
    double dot = 0;
    for (int c = 0; c < w.d_qk; ++c) dot += qd[c] * rows.row(j)[c];
    logits[j] = static_cast<double>(problem.scale) * dot;
    max_logit = std::max(max_logit, logits[j]);
  }
  Expected e{std::numeric_limits<double>::infinity(), max_logit, std::vector<double>(kDv, 0.0)};
  if (n == 0) return e;  // no valid entry: out 0, lse +inf, max_logits -inf
  double sum = 0;
  for (const double s : logits) sum += std::exp(s - max_logit);
  e.lse = max_logit + std::log(sum);
  const double sink_factor =
      w.sink ? 1.0 / (1.0 + std::exp(static_cast<double>(problem.sink[head]) - e.lse)) : 1.0;
  for (int64_t j = 0; j < n; ++j) {
    const double p = std::exp(logits[j] - e.lse) * sink_factor;
    for (int c = 0; c < kDv; ++c) e.out[c] += p * rows.row(j)[c];
  }
  return e;
}

// SPEC §1: infinities must match exactly, NaN never passes.
bool scalar_ok(double got, double ref, double tolerance) {
  if (std::isnan(got) || std::isnan(ref)) return false;
  if (std::isinf(got) || std::isinf(ref)) return got == ref;
  return std::fabs(got - ref) <= tolerance;
}

std::string describe(const char* what, int64_t token, int head, int component, double got,
                     double ref) {
  char buf[160];
  if (component < 0) {
    std::snprintf(buf, sizeof buf, "%s[token %lld, head %d] = %.9g, float64 gives %.9g", what,
                  static_cast<long long>(token), head, got, ref);
  } else {
    std::snprintf(buf, sizeof buf, "%s[token %lld, head %d, %d] = %.9g, float64 gives %.9g", what,
                  static_cast<long long>(token), head, component, got, ref);
  }
  return buf;
}

}  // namespace

uint32_t outputs_digest(const SampledOutputs& got) {
  api::Fnv1a h;
  h.add_bytes(got.out.data(), got.out.size() * sizeof got.out[0]);
  h.add_bytes(got.lse.data(), got.lse.size() * sizeof got.lse[0]);
  h.add_bytes(got.max_logits.data(), got.max_logits.size() * sizeof got.max_logits[0]);
  return static_cast<uint32_t>(h.value() ^ (h.value() >> 32));
}

std::vector<int64_t> sample_tokens(int64_t tokens, int64_t count) {
  count = std::min(count, tokens);
  std::vector<int64_t> sample;
  for (int64_t i = 0; i < count; ++i) {
    sample.push_back(count == 1 ? 0 : i * (tokens - 1) / (count - 1));
  }
  return sample;
}

CheckResult check_against_float64(const HostProblem& problem, const SampledOutputs& got) {
  const Workload& w = problem.workload;
  const int64_t samples = static_cast<int64_t>(got.tokens.size());
  std::vector<Expected> expected(static_cast<size_t>(samples * w.h_q));
  for (int64_t s = 0; s < samples; ++s) {
    const SelectedRows rows(problem, got.tokens[s]);
    // Heads are independent: spread them over the host's cores (a decode row with top-k
    // 16384 is ~2 GFLOP of float64 per token).
    reference::parallel_for(w.h_q, reference::parallel_workers(w.h_q), [&](int64_t h, int) {
      expected[s * w.h_q + h] = evaluate(problem, rows, got.tokens[s], static_cast<int>(h));
    });
  }

  CheckResult result;
  double dot = 0, norm_got = 0, norm_ref = 0;
  auto violation = [&](std::string text) {
    if (result.detail.empty()) result.detail = std::move(text);
  };
  for (int64_t s = 0; s < samples; ++s) {
    const int64_t token = got.tokens[s];
    for (int h = 0; h < w.h_q; ++h) {
      const Expected& e = expected[s * w.h_q + h];
      const size_t at = static_cast<size_t>(s * w.h_q + h);
      if (!scalar_ok(got.lse[at], e.lse, 1e-5 + std::fabs(e.lse) / 16384)) {
        violation(describe("lse", token, h, -1, got.lse[at], e.lse));
      }
      if (!scalar_ok(got.max_logits[at], e.max_logit, 1e-5 + std::fabs(e.max_logit) / 16384)) {
        violation(describe("max_logits", token, h, -1, got.max_logits[at], e.max_logit));
      }
      for (int c = 0; c < kDv; ++c) {
        const double value = float_from_bf16(got.out[at * kDv + c]);
        const double ref = e.out[c];
        const double error = std::fabs(value - ref);
        if (!(error <= 1e-3 + std::fabs(ref) / 64)) {
          violation(describe("out", token, h, c, value, ref));
        }
        if (!std::isnan(error)) result.max_out_error = std::max(result.max_out_error, error);
        dot += value * ref;
        norm_got += value * value;
        norm_ref += ref * ref;
      }
    }
  }
  if (norm_got > 0 || norm_ref > 0) {
    result.cosine_gap = 1.0 - dot / (std::sqrt(norm_got) * std::sqrt(norm_ref));
  }
  if (!(result.cosine_gap <= 1e-5)) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "1 - cos(out, float64) = %.3g > 1e-5", result.cosine_gap);
    violation(buf);
  }
  result.passed = result.detail.empty();
  result.outputs_digest = outputs_digest(got);
  if (result.passed) {
    char buf[192];
    std::snprintf(buf, sizeof buf,
                  "%lld tokens x %d heads vs float64: max |out err| %.2e, 1-cos %.1e, "
                  "outputs %08x",
                  static_cast<long long>(samples), w.h_q, result.max_out_error, result.cosine_gap,
                  result.outputs_digest);
    result.detail = buf;
  }
  return result;
}

}  // namespace smla::cli
