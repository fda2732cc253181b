// The reference backend's only threading primitive: a parallel loop over independent work
// items. Each item writes its own outputs and never reads another's, so results are bitwise
// the same whatever the thread count (SPEC §1: same inputs, same outputs).
#pragma once

#include <cstdint>
#include <functional>

namespace smla::reference {

// Threads the reference backend uses: the env SMLA_CPU_THREADS when it holds a positive
// integer, else std::thread::hardware_concurrency() (at least 1). Read on every call so a
// test can change it between calls.
int cpu_thread_count();

// How many threads a loop of n_items should use: min(cpu_thread_count(), n_items), >= 1.
int parallel_workers(int64_t n_items);

// Calls body(item, worker) once for every item in [0, n_items) on `workers` threads;
// `worker` in [0, workers) names the thread so the body can use per-worker scratch. Items
// are handed out one at a time from a shared counter (they may differ in cost). The calling
// thread is worker 0. An exception in any body is rethrown here after all threads joined.
void parallel_for(int64_t n_items, int workers,
                  const std::function<void(int64_t item, int worker)>& body);

}  // namespace smla::reference
