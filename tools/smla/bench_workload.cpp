#include "bench_workload.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <sstream>

#include "bf16.hpp"
#include "cli.hpp"
#include "json.hpp"
#include "reference/parallel.hpp"

namespace smla::cli {

namespace {

// Rows generated and quantized per pool at most. Larger pools (the GPU decode anchors hold
// up to ~5M tokens, 3 GB) repeat these blocks: the kernels gather by slot id and cannot
// tell, every selected row is still a real N(0, sigma^2) row, and the check reads the same
// bytes.
constexpr int64_t kDistinctRows = int64_t{1} << 16;

// splitmix64: small, fast, and good enough for test data; std::normal_distribution on
// std::mt19937_64 is several times slower on the ~300M values of a prefill q.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  int64_t below(int64_t n) { return static_cast<int64_t>(next() % static_cast<uint64_t>(n)); }
  double normal() {  // Box-Muller
    const double u = 1.0 - uniform();
    return std::sqrt(-2.0 * std::log(u)) * std::cos(2.0 * M_PI * uniform());
  }

 private:
  uint64_t state_;
};

// `count` bf16 values ~ N(0, sigma^2), generated in parallel chunks with their own seeds so
// the result does not depend on the number of threads.
std::vector<uint16_t> normal_bf16(int64_t count, double sigma, uint64_t seed) {
  constexpr int64_t kChunk = int64_t{1} << 20;
  std::vector<uint16_t> out(static_cast<size_t>(count));
  const int64_t chunks = (count + kChunk - 1) / kChunk;
  reference::parallel_for(chunks, reference::parallel_workers(chunks), [&](int64_t c, int) {
    Rng rng(seed * 0x100000001b3ull + static_cast<uint64_t>(c));
    for (int64_t i = c * kChunk; i < std::min(count, (c + 1) * kChunk); ++i) {
      out[i] = bf16_from_float(static_cast<float>(sigma * rng.normal()));
    }
  });
  return out;
}

HostPool make_pool(const PoolShape& shape, int d_qk, double sigma, int64_t num_blocks,
                   uint64_t seed) {
  HostPool host;
  const int64_t block_bytes =
      KvPool::packed(shape.format, nullptr, num_blocks, shape.block_size, d_qk)
          .packed_block_bytes(d_qk);
  // Every byte is written once: the distinct blocks zeroed (bytes quantize leaves, such as
  // padding, are then defined) and quantized, the rest copied from them by all cores.
  host.bytes.resize(static_cast<size_t>(num_blocks * block_bytes));
  host.pool = KvPool::packed(shape.format, host.bytes.data(), num_blocks, shape.block_size, d_qk);

  const int64_t distinct_blocks =
      std::min(num_blocks, std::max<int64_t>(1, kDistinctRows / shape.block_size));
  const int64_t rows = distinct_blocks * shape.block_size;
  std::vector<uint16_t> values = normal_bf16(rows * d_qk, sigma, seed);
  std::memset(host.bytes.data(), 0, static_cast<size_t>(distinct_blocks * block_bytes));
  const KvPool head =
      KvPool::packed(shape.format, host.bytes.data(), distinct_blocks, shape.block_size, d_qk);
  check_status(quantize(TensorView::contiguous(values.data(), DType::bf16, {rows, d_qk}), head),
               "bench: quantizing the KV pool");
  // One block (tens of kilobytes, whole pages) per item.
  const int64_t copies = num_blocks - distinct_blocks;
  reference::parallel_for(copies, reference::parallel_workers(copies), [&](int64_t i, int) {
    const int64_t b = distinct_blocks + i;
    std::memcpy(host.bytes.data() + b * block_bytes,
                host.bytes.data() + (b % distinct_blocks) * block_bytes, block_bytes);
  });
  return host;
}

// Takes `k` distinct values of `perm` into `row` in random order. Partial Fisher-Yates on
// a persistent permutation: whatever order `perm` is left in, the next draw is again a
// uniform random subset, so it is never re-initialized (O(k) per row, not O(pool)).
void draw_distinct(std::vector<int32_t>& perm, int64_t k, Rng& rng, int32_t* row) {
  const int64_t n = static_cast<int64_t>(perm.size());
  for (int64_t i = 0; i < k; ++i) {
    std::swap(perm[i], perm[i + rng.below(n - i)]);
    row[i] = perm[i];
  }
}

void count_distinct(HostPool& host) {
  std::vector<bool> seen(static_cast<size_t>(host.pool.slots()), false);
  for (const int32_t slot : host.indices) {
    if (slot >= 0 && !seen[slot]) {
      seen[slot] = true;
      ++host.distinct_selected;
    }
  }
}

// Prefill: one pool of s_kv slots shared by every token; each row a random subset of it.
HostPool prefill_pool(const Workload& w, const PoolShape& shape, uint64_t seed) {
  if (shape.topk > shape.s_kv) {
    throw failure("bench: workload " + w.name + " selects more than s_kv");
  }
  const int64_t num_blocks = (shape.s_kv + shape.block_size - 1) / shape.block_size;
  HostPool host = make_pool(shape, w.d_qk, w.sigma, num_blocks, seed);
  Rng rng(seed + 1);
  std::vector<int32_t> perm(static_cast<size_t>(shape.s_kv));
  std::iota(perm.begin(), perm.end(), 0);
  host.indices.resize(static_cast<size_t>(w.tokens * shape.topk));
  for (int64_t t = 0; t < w.tokens; ++t) {
    draw_distinct(perm, shape.topk, rng, host.indices.data() + t * shape.topk);
  }
  count_distinct(host);
  return host;
}

// Decode: each request owns max(N(s_kv, s_kv/2), 2) tokens in its own pages, and the pages
// of all requests are shuffled over the pool (as a paged allocator leaves them). Each query
// token selects min(topk, length) distinct positions of its request; the rest of its row
// is -1.
HostPool decode_pool(const Workload& w, const PoolShape& shape, uint64_t seed) {
  Rng rng(seed + 1);
  const int64_t bs = shape.block_size;
  std::vector<int64_t> lengths(static_cast<size_t>(w.batch));
  std::vector<int64_t> first_page(static_cast<size_t>(w.batch) + 1, 0);
  for (int32_t r = 0; r < w.batch; ++r) {
    const double drawn = static_cast<double>(shape.s_kv) * (1.0 + 0.5 * rng.normal());
    lengths[r] = std::max<int64_t>(std::llround(drawn), 2);
    first_page[r + 1] = first_page[r] + (lengths[r] + bs - 1) / bs;
  }
  std::vector<int32_t> page_of(static_cast<size_t>(first_page.back()));
  std::iota(page_of.begin(), page_of.end(), 0);
  for (int64_t i = static_cast<int64_t>(page_of.size()) - 1; i > 0; --i) {
    std::swap(page_of[i], page_of[rng.below(i + 1)]);
  }
  HostPool host = make_pool(shape, w.d_qk, w.sigma, first_page.back(), seed);
  host.indices.assign(static_cast<size_t>(w.tokens * shape.topk), -1);
  const int64_t tokens_per_request = w.tokens / w.batch;
  std::vector<int32_t> perm;
  for (int32_t r = 0; r < w.batch; ++r) {
    perm.resize(static_cast<size_t>(lengths[r]));
    std::iota(perm.begin(), perm.end(), 0);
    const int64_t k = std::min<int64_t>(shape.topk, lengths[r]);
    for (int64_t s = 0; s < tokens_per_request; ++s) {
      int32_t* row = host.indices.data() + (r * tokens_per_request + s) * shape.topk;
      draw_distinct(perm, k, rng, row);
      for (int64_t i = 0; i < k; ++i) {  // position in the request -> slot in the pool
        row[i] = static_cast<int32_t>(page_of[first_page[r] + row[i] / bs] * bs + row[i] % bs);
      }
    }
  }
  count_distinct(host);
  return host;
}

std::string pool_text(const PoolShape& shape) {
  return std::string(format_name(shape.format)) + "/" + std::to_string(shape.block_size);
}

TensorView indices_view(const HostPool& host, int64_t tokens, int32_t topk) {
  return TensorView::contiguous(const_cast<int32_t*>(host.indices.data()), DType::i32,
                                {tokens, topk});
}

}  // namespace

double Workload::flops() const {
  return 2.0 * h_q * static_cast<double>(tokens) * (main.topk + extra.topk) * (d_qk + kDv);
}

std::string Workload::shape_text() const {
  std::ostringstream out;
  if (decode) {
    out << "b=" << batch << " s_q=" << tokens / batch;
  } else {
    out << "T=" << tokens;
  }
  out << " h_q=" << h_q << " d_qk=" << d_qk << " topk=" << main.topk;
  if (has_extra()) out << "+" << extra.topk;
  out << " s_kv=" << main.s_kv;
  if (sink) out << " sink";
  // The shortest text that reads back as sigma: a rounded label would read as another
  // spread (0.1000001 as 0.1).
  if (sigma != kBenchSigma) out << " sigma=" << shortest_text(sigma);
  return out.str();
}

std::string Workload::format_text() const {
  return has_extra() ? pool_text(main) + "+" + pool_text(extra) : pool_text(main);
}

double HostProblem::bytes_moved() const {
  const Workload& w = workload;
  double bytes = 2.0 * static_cast<double>(w.tokens) * w.h_q * (w.d_qk + kDv);
  bytes += static_cast<double>(main.distinct_selected) * format_token_bytes(w.main.format, w.d_qk);
  if (w.has_extra()) {
    bytes +=
        static_cast<double>(extra.distinct_selected) * format_token_bytes(w.extra.format, w.d_qk);
  }
  return bytes;
}

AttendArgs HostProblem::attend_args(void* out, void* lse, void* max_logits) const {
  const Workload& w = workload;
  AttendArgs args;
  args.q = TensorView::contiguous(const_cast<uint16_t*>(q.data()), DType::bf16,
                                  {w.tokens, w.h_q, w.d_qk});
  args.kv = main.pool;
  args.indices = indices_view(main, w.tokens, w.main.topk);
  if (w.has_extra()) {
    args.extra_kv = extra.pool;
    args.extra_indices = indices_view(extra, w.tokens, w.extra.topk);
  }
  if (w.sink) {
    args.sink = TensorView::contiguous(const_cast<float*>(sink.data()), DType::f32, {w.h_q});
  }
  args.scale = scale;
  args.out = TensorView::contiguous(out, DType::bf16, {w.tokens, w.h_q, kDv});
  args.lse = TensorView::contiguous(lse, DType::f32, {w.tokens, w.h_q});
  args.max_logits = TensorView::contiguous(max_logits, DType::f32, {w.tokens, w.h_q});
  return args;
}

HostProblem make_problem(const Workload& workload, uint64_t seed) {
  HostProblem problem;
  problem.workload = workload;
  problem.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(workload.d_qk)));
  problem.q = normal_bf16(workload.tokens * workload.h_q * workload.d_qk, workload.sigma, seed);
  if (workload.sink) {
    Rng rng(seed + 7);
    problem.sink.resize(static_cast<size_t>(workload.h_q));
    for (float& s : problem.sink) s = static_cast<float>(rng.normal());
  }
  auto pool = workload.decode ? decode_pool : prefill_pool;
  problem.main = pool(workload, workload.main, seed + 101);
  if (workload.has_extra()) problem.extra = pool(workload, workload.extra, seed + 202);
  return problem;
}

}  // namespace smla::cli
