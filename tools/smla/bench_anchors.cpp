#include "bench_anchors.hpp"

#include <string>

namespace smla::cli {

Workload anchor_workload(const Anchor& a) {
  Workload w;
  w.decode = a.decode;
  w.d_qk = a.d_qk;
  w.h_q = a.h_q;
  w.batch = a.batch;
  w.sink = a.sink;
  if (!a.decode) {
    w.name = "prefill";
    w.tokens = kAnchorPrefillTokens;
    w.main = {KvFormat::bf16, 64, a.s_kv, a.topk};
    return w;
  }
  w.name = "decode";
  w.tokens = a.batch * kAnchorDecodeTokensPerRequest;
  if (a.d_qk == 576) {
    w.main = {KvFormat::fp8_v32, 64, a.s_kv, a.topk};
  } else {
    w.main = {KvFormat::fp8_ds_mla, 256, a.s_kv, a.topk};
    if (a.extra_topk > 0) w.extra = {KvFormat::fp8_ds_mla, 64, a.s_kv, a.extra_topk};
  }
  return w;
}

}  // namespace smla::cli
