// The host-side parallel loop of `smla bench`: data generation, pool filling and the float64
// check spread independent items over the host's cores.
#pragma once

#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

namespace smla::cli {

// Calls body(i) for every i in [0, count), item i on thread i % workers: which thread runs
// an item never changes what it computes, so results do not depend on the core count.
template <class Body>
void parallel_for(int64_t count, Body&& body) {
  if (count <= 0) return;
  const int64_t workers =
      std::clamp<int64_t>(std::thread::hardware_concurrency(), 1, std::min<int64_t>(count, 64));
  std::vector<std::thread> threads;
  for (int64_t w = 0; w < workers; ++w) {
    threads.emplace_back([&, w] {
      for (int64_t i = w; i < count; i += workers) body(i);
    });
  }
  for (std::thread& t : threads) t.join();
}

}  // namespace smla::cli
