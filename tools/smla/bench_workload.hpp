// The workloads of `smla bench` and the host-side problems built from them: DeepSeek-shaped
// queries, random top-k selections and quantized paged KV pools, generated following the
// rules of /work/shared/BENCHMARKS.md (q and kv ~ N(0,1)/10; prefill rows a random subset of
// [0, s_kv) without repeats; decode cache lengths max(N(s_kv, s_kv/2), 2) per request,
// pages shuffled, indices distinct and random within the request's length).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "smla/format.hpp"
#include "smla/ops.hpp"

namespace smla::cli {

struct PoolShape {
  KvFormat format = KvFormat::bf16;
  int32_t block_size = 64;
  int64_t s_kv = 0;  // prefill: slots of the pool; decode: mean cache length per request
  int32_t topk = 0;  // entries of each index row into this pool
};

// BENCHMARKS.md's data: q and kv ~ N(0,1)/10, the spread FlashMLA's figures were measured on.
inline constexpr double kBenchSigma = 0.1;

struct Workload {
  std::string name;     // "V3.2 prefill"
  bool decode = false;  // decode: `batch` requests of `tokens / batch` query tokens each
  int d_qk = 576;
  int h_q = 128;
  int64_t tokens = 0;  // T
  int32_t batch = 1;
  PoolShape main{};
  PoolShape extra{};  // extra.topk == 0: no extra pool
  bool sink = false;
  double sigma = kBenchSigma;  // q and kv ~ N(0, sigma^2) (`smla bench --sigma`)

  bool has_extra() const { return extra.topk > 0; }
  // BENCHMARKS.md counting: every index slot counts, 2 * (d_qk + d_v) FLOPs per head.
  double flops() const;
  std::string shape_text() const;   // "T=4 h_q=128 d_qk=576 topk=2048" (+ " sigma=1" if not 0.1)
  std::string format_text() const;  // "fp8_v32/64" or "fp8_ds_mla/256+fp8_ds_mla/64"
};

// Bytes that a resize leaves as they are (std::allocator's value-initialization would zero
// them): a decode pool is gigabytes, written once by make_pool instead of twice.
template <class T>
struct UninitializedAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = UninitializedAllocator<U>;
  };
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

// A pool in host memory: `pool` views `bytes` (hence move-only: a copy would view the
// original's bytes).
struct HostPool {
  HostPool() = default;
  HostPool(HostPool&&) = default;
  HostPool& operator=(HostPool&&) = default;
  HostPool(const HostPool&) = delete;
  HostPool& operator=(const HostPool&) = delete;

  KvPool pool;
  std::vector<unsigned char, UninitializedAllocator<unsigned char>> bytes;
  std::vector<int32_t> indices;   // [T, topk] slot ids, -1 where a request is shorter than topk
  int64_t distinct_selected = 0;  // slots selected by at least one token
};

struct HostProblem {
  Workload workload;
  float scale = 0.0f;       // 1 / sqrt(d_qk), FlashMLA's default
  std::vector<uint16_t> q;  // [T, h_q, d_qk] bf16
  std::vector<float> sink;  // [h_q], empty without sink
  HostPool main;
  HostPool extra;  // empty without an extra pool

  // BENCHMARKS.md decode counting: q and out in bf16, each distinct selected token once.
  double bytes_moved() const;
  // Arguments over this problem's host memory, writing to `out` [T, h_q, 512] bf16 and
  // `lse`, `max_logits` [T, h_q] f32. The GPU bench swaps in device pointers.
  AttendArgs attend_args(void* out, void* lse, void* max_logits) const;
};

// Deterministic in `seed`. Pools larger than a few tens of thousands of rows repeat a
// random set of blocks (see the .cpp): generating and quantizing gigabytes of distinct rows
// would take minutes of host time without changing what the kernels do.
HostProblem make_problem(const Workload& workload, uint64_t seed);

}  // namespace smla::cli
