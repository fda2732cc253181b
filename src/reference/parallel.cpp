#include "reference/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace smla::reference {

int cpu_thread_count() {
  if (const char* env = std::getenv("SMLA_CPU_THREADS")) {
    char* end = nullptr;
    const long n = std::strtol(env, &end, 10);
    // Anything but a positive integer falls back to the hardware count.
    if (end != env && *end == '\0' && n > 0) return static_cast<int>(std::min(n, 1024L));
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

int parallel_workers(int64_t n_items) {
  return static_cast<int>(std::clamp<int64_t>(n_items, 1, cpu_thread_count()));
}

void parallel_for(int64_t n_items, int workers,
                  const std::function<void(int64_t item, int worker)>& body) {
  if (n_items <= 0) return;
  std::atomic<int64_t> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto run = [&](int worker) {
    try {
      for (int64_t item = next++; item < n_items; item = next++) body(item, worker);
    } catch (...) {
      const std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
      next = n_items;  // stop handing out work; the call fails anyway
    }
  };
  std::vector<std::thread> threads;
  threads.reserve(workers - 1);
  for (int w = 1; w < workers; ++w) threads.emplace_back(run, w);
  run(0);
  for (std::thread& thread : threads) thread.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace smla::reference
