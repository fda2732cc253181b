// The anchor rows of smla's GPU paths: FlashMLA's own sparse kernels timed on one H200.
// Source: bench/anchors/flashmla-sm90-h200.json (a copy of the team's
// anchors/flashmla-sm90-h200.json; FlashMLA 9241ae3, sm_90a, CUDA 13.0) and the tables of
// BENCHMARKS.md. Only the figures the bench prints are embedded here.
#pragma once

#include <cstdint>

#include "bench_workload.hpp"

namespace smla::cli {

struct Anchor {
  bool decode;
  int d_qk;
  int h_q;
  int32_t batch;  // decode requests (prefill: 1)
  int64_t s_kv;
  int32_t topk;
  int32_t extra_topk;  // 0: no extra pool
  bool sink;
  double flashmla_us;
};

// Prefill: s_q = 4096, bf16 kv. Decode: s_q = 2 (MTP), fp8 caches, sink on.
inline constexpr Anchor kAnchors[] = {
    {false, 576, 128, 1, 8192, 2048, 0, false, 3498.99},
    {false, 576, 128, 1, 32768, 2048, 0, false, 3819.52},
    {false, 576, 128, 1, 131072, 2048, 0, false, 4158.55},
    {false, 576, 64, 1, 32768, 2048, 0, false, 1894.21},
    {false, 512, 64, 1, 32768, 512, 0, true, 549.5},
    {false, 512, 128, 1, 32768, 1024, 0, true, 1848.27},
    {true, 576, 128, 2, 32768, 2048, 0, true, 20.29},
    {true, 576, 128, 64, 32768, 2048, 0, true, 185.57},
    {true, 576, 128, 128, 32768, 2048, 0, true, 362.65},
    {true, 512, 64, 64, 16384, 128, 512, true, 49.17},
    {true, 512, 64, 148, 16384, 128, 512, true, 118.48},
    {true, 512, 64, 148, 32768, 16384, 0, true, 2032.56},
    {true, 576, 64, 148, 32768, 16384, 0, true, 1856.18},
    {true, 512, 128, 148, 32768, 16384, 0, true, 2696.17},
    {true, 576, 128, 148, 32768, 16384, 0, true, 3039.36},
};

inline constexpr int64_t kAnchorPrefillTokens = 4096;
inline constexpr int64_t kAnchorDecodeTokensPerRequest = 2;

// The workload an anchor row describes, with BENCHMARKS.md's formats and page sizes:
// prefill bf16 (pages of 64: a packed bf16 pool is the same bytes at any page size);
// decode d_qk 576 fp8_v32 pages of 64; d_qk 512 fp8_ds_mla, main pool pages of 256 and the
// extra pool pages of 64.
Workload anchor_workload(const Anchor& anchor);

}  // namespace smla::cli
