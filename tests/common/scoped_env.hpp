// Environment variables that the library reads per call (SMLA_BACKEND, SMLA_CPU_THREADS, the
// Hopper design switches), set for one scope: the process's own value comes back after it,
// or the variable is unset again, whatever the test did meanwhile (ctest runs suites under
// several values of these).
#pragma once

#include <cstdlib>
#include <optional>
#include <string>

namespace smla::test {

class ScopedEnv {
 public:
  // Sets `name` to `value` for the scope; a null `value` leaves it as it is (the test sets it
  // itself, and the scope only restores it).
  explicit ScopedEnv(const char* name, const char* value = nullptr) : name_(name) {
    if (const char* old = std::getenv(name)) saved_ = old;
    if (value != nullptr) setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (saved_) {
      setenv(name_, saved_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> saved_;
};

}  // namespace smla::test
