// L2 eviction policies (sm_80+) for the `.L2::cache_hint` forms of loads and copies (tma.cuh).
// Meant for bytes a kernel reads once while it gathers others again: the block-pair kernel's Q
// tiles, each read by one item, took L2 lines from the KV rows later items gather (an
// evict-first line is the first of its set to go; perf-notes ledger, s57). Not for the
// outputs: evict-first out stores measured slower (same entry). Never evict-last: lines so
// marked can outlive the call, even a benchmark's L2 flush.
#pragma once

#include <cstdint>

namespace smla::ptx {

// createpolicy.fractional.L2::evict_first.b64 (fraction 1.0): every line the hinted access
// touches is marked evict-first. ptxas folds it into the access's uniform descriptor.
__device__ __forceinline__ uint64_t l2_evict_first_policy() {
  uint64_t policy;
  asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(policy));
  return policy;
}

}  // namespace smla::ptx
