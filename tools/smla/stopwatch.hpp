// Wall-clock laps on the host: how `smla bench` accounts for its own time per row.
#pragma once

#include <chrono>

namespace smla::cli {

class Stopwatch {
 public:
  // Seconds since construction or the previous lap.
  double lap() {
    const Clock::time_point now = Clock::now();
    const double seconds = std::chrono::duration<double>(now - last_).count();
    last_ = now;
    return seconds;
  }

 private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point last_ = Clock::now();
};

}  // namespace smla::cli
