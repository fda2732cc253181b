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
// So the sampler also reads the GPU's energy counter around the span: millijoules per
// repetition and the mean power over it, whether a row runs against the power limit.
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
  // The span's wall seconds, and the GPU's energy over it (NVML's total-energy counter, read at
  // start() and stop(); energy_measured is false where the driver does not give it).
  double span_s = 0;
  bool energy_measured = false;
  unsigned long long energy_mj = 0;

  bool measured() const { return samples > 0; }
  // Mean power over the span, W (NaN without the energy).
  double mean_watts() const;
};

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

  std::unique_ptr<Nvml> nvml_;
  std::string why_unavailable_;
  std::thread thread_;
  std::atomic<bool> running_{false};
  SmClockStats stats_;  // written by the sampling thread between start() and its join
  double mhz_sum_ = 0;
  std::chrono::steady_clock::time_point span_start_;
  bool energy_at_start_read_ = false;
  unsigned long long energy_at_start_mj_ = 0;
};

}  // namespace smla::cli
