// Special registers read where they are used.
#pragma once

namespace smla::ptx {

// %tid.x, read anew at each call (asm volatile, so never merged with an earlier read): values
// derived from it after a long loop are then recomputed there rather than kept live, or
// spilled, across the loop. A spilled one is reloaded after the loop from a line that other
// traffic may have pushed out of L1 and L2 meanwhile (perf-notes ledger, s57).
__device__ __forceinline__ unsigned thread_index_x_now() {
  unsigned t;
  asm volatile("mov.u32 %0, %%tid.x;\n" : "=r"(t));
  return t;
}

}  // namespace smla::ptx
