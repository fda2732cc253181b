// The reference attend (SPEC §1): the oracle every GPU path is checked against, so it favours
// accuracy (float64 softmax statistics, float sums only over short runs that end in float64)
// over speed, but stays fast enough for the CLI's CPU bench by decoding each selected K row
// once per work item and reusing it for every head of that item.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <new>
#include <vector>

#include "formats/numeric.hpp"
#include "formats/token_codec.hpp"
#include "reference/parallel.hpp"
#include "reference/reference.hpp"
#include "reference/strided.hpp"

namespace smla::reference {
namespace {

// K rows are processed in tiles of this many rows so that a tile (<= 72 KiB of floats)
// stays in L2 while every head of the work item sweeps over it.
constexpr int64_t K_TILE_ROWS = 32;
// Aim for this many work items per thread, so uneven rows still balance.
constexpr int64_t ITEMS_PER_THREAD = 4;

// One valid entry of a token's selection: a slot of one of the two pools.
struct Entry {
  const KvPool* pool;
  int64_t slot;
};

// Per-worker buffers, grown on demand and reused across the worker's items.
struct Scratch {
  std::vector<Entry> entries;
  std::vector<uint16_t> token_bf16;  // [d_qk]
  std::vector<float> k_rows;         // [n_entries, d_qk]
  std::vector<float> q_rows;         // [heads, d_qk]
  std::vector<double> weights;       // [heads, n_entries]: logits, then exp(s - max)
  std::vector<double> acc;           // [heads, kDv]
  std::vector<double> out_scale;     // [heads]: f / sum_j exp(s_j - max)
};

// Appends the valid entries of row t (SPEC §1): position below the row's length and
// 0 <= index < slots. Only comparisons, never arithmetic on the index values, so INT_MIN
// and INT_MAX are as safe as -1.
void append_valid_entries(const KvPool& pool, const TensorView& indices, const TensorView& lengths,
                          int64_t t, std::vector<Entry>& entries) {
  const int64_t k = indices.shape[1];
  int64_t used = k;
  if (lengths.present()) {
    const int64_t length = *element<const int32_t>(lengths, t);
    used = std::clamp<int64_t>(length, 0, k);
  }
  const int64_t slots = pool.slots();
  for (int64_t p = 0; p < used; ++p) {
    const int64_t slot = *element<const int32_t>(indices, t, p);
    if (slot >= 0 && slot < slots) entries.push_back({&pool, slot});
  }
}

// Rows are summed in chunks of this many elements: d_qk (576, 512) and d_v are multiples.
constexpr int DOT_CHUNK = 64;
static_assert(kDv % DOT_CHUNK == 0 && 576 % DOT_CHUNK == 0, "rows split into whole chunks");

// q . k for bf16-valued rows. Each product is exact in float (8-bit significands), so eight
// float lanes per 64-element chunk round only their 8-term sums (<= ~1e-7 relative of the
// chunk's sum of |products|); chunks add up in double. Twice the speed of an all-double dot
// and far inside SPEC's lse tolerance. The fixed order keeps the result deterministic.
double dot(const float* a, const float* b, int n) {
  double sum[4] = {0.0, 0.0, 0.0, 0.0};
  for (int c = 0; c < n; c += DOT_CHUNK) {
    float lane[8] = {};
    for (int i = c; i < c + DOT_CHUNK; i += 8)
      for (int l = 0; l < 8; ++l) lane[l] += a[i + l] * b[i + l];
    for (int l = 0; l < 4; ++l) sum[l] += static_cast<double>(lane[l]) + lane[l + 4];
  }
  return (sum[0] + sum[1]) + (sum[2] + sum[3]);
}

void write_empty(const AttendArgs& args, int64_t t, int h0, int h1) {
  for (int h = h0; h < h1; ++h) {
    uint16_t* out = element<uint16_t>(args.out, t, h, 0);  // [kDv]
    std::fill(out, out + kDv, fmt::float_to_bf16_rne(0.0f));
    if (args.lse.present())
      *element<float>(args.lse, t, h) = std::numeric_limits<float>::infinity();
    if (args.max_logits.present())
      *element<float>(args.max_logits, t, h) = -std::numeric_limits<float>::infinity();
  }
}

// Token t, heads [h0, h1). The arithmetic for a given (t, h) does not depend on which item
// holds it, so the head split (chosen from the thread count) never changes a bit.
void attend_item(const AttendArgs& args, int64_t t, int h0, int h1, Scratch& s) {
  const int d_qk = static_cast<int>(args.q.shape[2]);
  const int heads = h1 - h0;

  s.entries.clear();
  append_valid_entries(args.kv, args.indices, args.lengths, t, s.entries);
  if (args.extra_kv.present())
    append_valid_entries(args.extra_kv, args.extra_indices, args.extra_lengths, t, s.entries);
  const int64_t n = static_cast<int64_t>(s.entries.size());
  // Invalid entries are skipped, never weighted by 0: a NaN in an unused row cannot leak.
  if (n == 0) return write_empty(args, t, h0, h1);

  s.token_bf16.resize(d_qk);
  s.k_rows.resize(n * d_qk);
  for (int64_t j = 0; j < n; ++j) {
    fmt::decode_token(*s.entries[j].pool, s.entries[j].slot, d_qk, s.token_bf16.data());
    float* row = &s.k_rows[j * d_qk];
    for (int d = 0; d < d_qk; ++d) row[d] = fmt::bf16_to_float(s.token_bf16[d]);
  }
  s.q_rows.resize(static_cast<size_t>(heads) * d_qk);
  for (int h = 0; h < heads; ++h) {
    const uint16_t* q = element<const uint16_t>(args.q, t, h0 + h, 0);  // [d_qk]
    for (int d = 0; d < d_qk; ++d) s.q_rows[h * d_qk + d] = fmt::bf16_to_float(q[d]);
  }

  // Logits s_j = scale * q . K_j, head-major [heads, n].
  s.weights.resize(heads * n);
  const double scale = args.scale;
  for (int64_t j0 = 0; j0 < n; j0 += K_TILE_ROWS) {
    const int64_t j1 = std::min(n, j0 + K_TILE_ROWS);
    for (int h = 0; h < heads; ++h)
      for (int64_t j = j0; j < j1; ++j)
        s.weights[h * n + j] = scale * dot(&s.q_rows[h * d_qk], &s.k_rows[j * d_qk], d_qk);
  }

  // Softmax statistics in double, relative to the row maximum so exp never overflows.
  s.out_scale.resize(heads);
  for (int h = 0; h < heads; ++h) {
    double* w = &s.weights[h * n];  // [n]
    const double max_logit = *std::max_element(w, w + n);
    double sum = 0.0;
    for (int64_t j = 0; j < n; ++j) {
      w[j] = std::exp(w[j] - max_logit);
      sum += w[j];
    }
    const double lse = max_logit + std::log(sum);
    if (args.lse.present()) *element<float>(args.lse, t, h0 + h) = static_cast<float>(lse);
    if (args.max_logits.present())
      *element<float>(args.max_logits, t, h0 + h) = static_cast<float>(max_logit);
    // The sink factor f = 1 / (1 + exp(sink - lse)): sink = +inf gives 0, -inf gives 1.
    double f = 1.0;
    if (args.sink.present()) {
      const double sink = *element<const float>(args.sink, h0 + h);
      f = 1.0 / (1.0 + std::exp(sink - lse));
    }
    s.out_scale[h] = f / sum;
  }

  // out = (f / sum) * sum_j exp(s_j - max) * V_j, with V_j = K_j[:kDv]. Like dot: float
  // sums over one tile of at most K_TILE_ROWS rows, tiles added in double.
  s.acc.assign(static_cast<size_t>(heads) * kDv, 0.0);
  float tile_acc[kDv];
  for (int64_t j0 = 0; j0 < n; j0 += K_TILE_ROWS) {
    const int64_t j1 = std::min(n, j0 + K_TILE_ROWS);
    for (int h = 0; h < heads; ++h) {
      std::fill(tile_acc, tile_acc + kDv, 0.0f);
      for (int64_t j = j0; j < j1; ++j) {
        const float w = static_cast<float>(s.weights[h * n + j]);
        const float* v = &s.k_rows[j * d_qk];  // [kDv] of [d_qk]
        for (int d = 0; d < kDv; ++d) tile_acc[d] += w * v[d];
      }
      double* acc = &s.acc[h * kDv];  // [kDv]
      for (int d = 0; d < kDv; ++d) acc[d] += tile_acc[d];
    }
  }
  for (int h = 0; h < heads; ++h) {
    uint16_t* out = element<uint16_t>(args.out, t, h0 + h, 0);  // [kDv]
    const double* acc = &s.acc[h * kDv];
    for (int d = 0; d < kDv; ++d)
      out[d] = fmt::float_to_bf16_rne(static_cast<float>(acc[d] * s.out_scale[h]));
  }
}

}  // namespace

Status attend(const AttendArgs& args) {
  const int64_t tokens = args.q.shape[0];
  const int h_q = static_cast<int>(args.q.shape[1]);
  if (tokens == 0 || h_q == 0) return Status::success();

  // Split heads only when there are too few tokens to keep every thread busy: each split
  // decodes the token's K rows again.
  const int64_t wanted_items = ITEMS_PER_THREAD * cpu_thread_count();
  const int64_t head_splits = std::clamp<int64_t>((wanted_items + tokens - 1) / tokens, 1, h_q);
  const int heads_per_item = static_cast<int>((h_q + head_splits - 1) / head_splits);
  const int64_t items_per_token = (h_q + heads_per_item - 1) / heads_per_item;

  try {
    const int64_t items = tokens * items_per_token;
    const int workers = parallel_workers(items);
    std::vector<Scratch> scratch(workers);
    parallel_for(items, workers, [&](int64_t item, int worker) {
      const int64_t t = item / items_per_token;
      const int h0 = static_cast<int>(item % items_per_token) * heads_per_item;
      attend_item(args, t, h0, std::min(h_q, h0 + heads_per_item), scratch[worker]);
    });
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::internal, "attend (cpu): out of host memory for the scratch");
  }
  return Status::success();
}

}  // namespace smla::reference
