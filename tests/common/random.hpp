// A small seeded generator for test workloads. Written out (splitmix64 + Box-Muller) rather
// than taken from <random>, whose distributions differ between standard libraries: a seed
// names the same workload on every machine, so a failing case can be replayed anywhere.
#pragma once

#include <cmath>
#include <cstdint>
#include <iterator>

namespace smla::test {

class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}

  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1), 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  // Uniform integer in [lo, hi] (inclusive; hi >= lo).
  int64_t uniform_int(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(next() % static_cast<uint64_t>(hi - lo + 1));
  }
  // N(0, stddev^2) as float. Box-Muller yields two independent normals per pair of
  // uniforms; the second is kept for the next call (workloads draw millions).
  float normal(double stddev) {
    if (has_spare_) {
      has_spare_ = false;
      return static_cast<float>(stddev * spare_);
    }
    const double radius = std::sqrt(-2.0 * std::log(1.0 - uniform()));  // 1 - u in (0, 1]
    const double angle = 6.283185307179586 * uniform();
    spare_ = radius * std::sin(angle);
    has_spare_ = true;
    return static_cast<float>(stddev * radius * std::cos(angle));
  }
  // One element of a C array or a std::array, uniformly.
  template <class Values>
  auto pick(const Values& values) {
    return values[uniform_int(0, static_cast<int64_t>(std::size(values)) - 1)];
  }

 private:
  uint64_t state_;
  double spare_ = 0.0;  // the unused N(0, 1) of the last Box-Muller pair
  bool has_spare_ = false;
};

}  // namespace smla::test
