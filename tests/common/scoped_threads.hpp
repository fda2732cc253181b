// Sets the reference backend's thread count (env SMLA_CPU_THREADS) for one scope, so a test
// can show that outputs do not depend on it.
#pragma once

#include <cstdlib>
#include <string>

namespace smla::test {

class ScopedThreads {
 public:
  explicit ScopedThreads(int n) { setenv("SMLA_CPU_THREADS", std::to_string(n).c_str(), 1); }
  ~ScopedThreads() { unsetenv("SMLA_CPU_THREADS"); }
  ScopedThreads(const ScopedThreads&) = delete;
  ScopedThreads& operator=(const ScopedThreads&) = delete;
};

}  // namespace smla::test
