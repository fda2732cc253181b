// The GPU's SM clock while a bench row's timed repetitions run, read through NVML every
// millisecond on a thread of its own. The same kernels measured 1-2% apart on two cards of
// one kind, and the heaviest rows up to 8% apart between rounds of one binary
// (docs/perf-notes.md, Findings s65 and s66); nvidia-smi's 100 ms samples
// (tools/with-gpu-clocks) cannot be matched to rows whose timed runs last 5-100 ms. A row's
// own clocks tell a clock difference from a kernel's.
//
// NVML is the driver's library, loaded at run time: without it (no driver, a CPU machine, a
// driver without the device) the sampler is unavailable, says why, and samples nothing.
#pragma once

#include <atomic>
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

  bool measured() const { return samples > 0; }
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
};

}  // namespace smla::cli
