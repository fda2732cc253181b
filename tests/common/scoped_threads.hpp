// Sets the reference backend's thread count (env SMLA_CPU_THREADS) for one scope, so a test
// can show that outputs do not depend on it.
#pragma once

#include <string>

#include "common/scoped_env.hpp"

namespace smla::test {

class ScopedThreads {
 public:
  explicit ScopedThreads(int n) : env_("SMLA_CPU_THREADS", std::to_string(n).c_str()) {}

 private:
  ScopedEnv env_;
};

}  // namespace smla::test
