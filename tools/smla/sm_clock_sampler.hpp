// The GPU's SM clock while a bench row's timed repetitions run, read through NVML every
// millisecond on a thread of its own. The same kernels measured 1-2% apart on two cards of
// one kind, and the heaviest rows up to 8% apart between rounds of one binary
// (docs/perf-notes.md, Findings s65 and s66); nvidia-smi's 100 ms samples
// (tools/with-gpu-clocks) cannot be matched to rows whose timed runs last 5-100 ms. A row's
// own clocks tell a clock difference from a kernel's.
//
// NVML's clock is the one the driver asks for, not always the one the SMs run at: under the
// prefill kernels an H100 or H200 reading 1980 MHz ran at ~1.78 GHz, and lower still after
// ~40-80 ms of them back to back (perf-log s69; a timeline build reads the SMs' own cycles).
// So the sampler also reads the GPU's energy counter: the mean power over the span, whether a
// row runs against the power limit. The driver updates that counter only every so often
// (every ~100 ms on the H100 of perf-log s72), so its value at the span's two ends says
// little about a span of a few of its updates: the sampler polls it with the clock and takes
// the mean power between the first and the last update it saw inside the span, and gives none
// where the span held too few updates to tell it. It also polls NVML's instant power field,
// which the driver may refresh more often than the counter (how often is what its changes
// tell), for the spans the counter cannot resolve.
//
// NVML is the driver's library, loaded at run time: without it (no driver, a CPU machine, a
// driver without the device) the sampler is unavailable, says why, and samples nothing.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

namespace smla::cli {

struct SmClockStats {
  int samples = 0;
  unsigned min_mhz = 0;
  unsigned max_mhz = 0;
  double mean_mhz = 0;
  // NVML's clock event reason bits (nvmlClocksEventReasons) set in any sample.
  unsigned long long reasons = 0;
  // The span's wall seconds.
  double span_s = 0;
  // NVML's total-energy counter: whether the driver gives it, how often it changed inside the
  // span, and between its first and last change there, the seconds and the millijoules.
  bool energy_read = false;
  int energy_updates = 0;
  double energy_window_s = 0;
  unsigned long long energy_window_mj = 0;
  // NVML's instant power field (NVML_FI_DEV_POWER_INSTANT): the polls that read it (none where
  // the driver does not give it), how often its value changed from one poll to the next, and
  // the mean of the polls' readings, W. A reading holds until the driver refreshes the field, so the mean
  // over the evenly spaced polls weighs each value by how long it held; with few changes it
  // is a few values' mean, and the first may predate the span.
  int power_readings = 0;
  int power_changes = 0;
  double power_mean_w = 0;

  bool measured() const { return samples > 0; }
  bool power_measured() const { return power_readings > 0; }
  // Whether the counter's updates inside the span tell its mean power: at least two of them,
  // kMinEnergyWindowS apart or more (each update is seen up to a poll late).
  bool energy_measured() const;
  // Mean power between the counter's first and last update inside the span, W (NaN unless
  // energy_measured()).
  double mean_watts() const;
};

// The least time between the first and last energy updates a span's mean power is taken from:
// each is seen up to a poll late (1 ms and NVML's calls, on an idle host), so the power errs by
// about 10% at most.
inline constexpr double kMinEnergyWindowS = 0.020;

// The names of the reason bits set in `reasons`, joined by ',' ("none" for 0; a bit without a
// name as its hex value), e.g. "SwPowerCap,HwSlowdown".
std::string clock_event_reason_names(unsigned long long reasons);

class SmClockSampler {
 public:
  // The sampler of the GPU at PCI bus id `pci_bus_id` (CudaDevice::pci_bus_id's
  // domain:bus:device.function in hex), through the NVML library `library`.
  explicit SmClockSampler(const std::string& pci_bus_id,
                          const char* library = "libnvidia-ml.so.1");
  ~SmClockSampler();
  SmClockSampler(const SmClockSampler&) = delete;
  SmClockSampler& operator=(const SmClockSampler&) = delete;

  bool available() const { return nvml_ != nullptr; }
  // Why available() is false ("" when it is true).
  const std::string& why_unavailable() const { return why_unavailable_; }

  // Starts sampling (nothing when unavailable); stop() ends it and returns what it saw, with at
  // least one sample when available, however short the span.
  void start();
  SmClockStats stop();

 private:
  struct Nvml;  // the library's handle, the functions used, the device
  void sample();
  void sample_energy();
  void sample_power();

  std::unique_ptr<Nvml> nvml_;
  std::string why_unavailable_;
  std::thread thread_;
  std::atomic<bool> running_{false};
  SmClockStats stats_;  // written by the sampling thread between start() and its join
  double mhz_sum_ = 0;
  double power_sum_w_ = 0;
  unsigned power_last_mw_ = 0;  // the instant power's last reading (while power_readings > 0)
  std::chrono::steady_clock::time_point span_start_;
  // The counter's last value read (while stats_.energy_read), and its first change seen inside
  // the span.
  unsigned long long energy_last_mj_ = 0;
  std::chrono::steady_clock::time_point energy_first_update_;
  unsigned long long energy_first_update_mj_ = 0;
};

}  // namespace smla::cli
