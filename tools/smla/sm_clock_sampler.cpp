#include "sm_clock_sampler.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

namespace smla::cli {

namespace {

// NVML's C ABI, the part used here (nvml.h, which the CUDA toolkit does not always ship):
// every call returns 0 on success; a device handle is an opaque pointer.
using NvmlReturn = int;
using NvmlDevice = struct NvmlDeviceOpaque*;
constexpr NvmlReturn kNvmlSuccess = 0;
constexpr int kNvmlClockSm = 1;                   // nvmlClockType_t NVML_CLOCK_SM
constexpr unsigned kNvmlFieldPowerInstant = 186;  // NVML_FI_DEV_POWER_INSTANT, mW

// nvmlFieldValue_t: a field's id in, its value and return code out.
struct NvmlFieldValue {
  unsigned field_id;
  unsigned scope_id;
  long long timestamp_us;
  long long latency_us;
  int value_type;  // nvmlValueType_t
  NvmlReturn result;
  union {
    double f64;
    unsigned u32;
    unsigned long ul;
    unsigned long long u64;
    long long i64;
    int i32;
    unsigned short u16;
  } value;
};
static_assert(sizeof(NvmlFieldValue) == 40, "nvmlFieldValue_t's layout");

// A field's value by its nvmlValueType_t; NaN for a type this file does not know.
double field_value(const NvmlFieldValue& field) {
  switch (field.value_type) {
    case 0:
      return field.value.f64;
    case 1:
      return field.value.u32;
    case 2:
      return static_cast<double>(field.value.ul);
    case 3:
      return static_cast<double>(field.value.u64);
    case 4:
      return static_cast<double>(field.value.i64);
    case 5:
      return field.value.i32;
    case 6:
      return field.value.u16;
    default:
      return std::nan("");
  }
}

// The names tools/gpu-clocks-summary gives the same bits, lowest first.
constexpr struct {
  unsigned long long bit;
  const char* name;
} kReasons[] = {
    {0x1, "Idle"},       {0x2, "AppClocks"},  {0x4, "SwPowerCap"},
    {0x8, "HwSlowdown"}, {0x10, "SyncBoost"}, {0x20, "SwThermal"},
    {0x40, "HwThermal"}, {0x80, "HwPowerBrake"}, {0x100, "DisplayClocks"},
};

constexpr auto kInterval = std::chrono::milliseconds(1);

}  // namespace

bool SmClockStats::energy_measured() const {
  return energy_updates >= 2 && energy_window_s >= kMinEnergyWindowS;
}

double SmClockStats::mean_watts() const {
  if (!energy_measured()) return std::nan("");
  return static_cast<double>(energy_window_mj) * 1e-3 / energy_window_s;
}

std::string clock_event_reason_names(unsigned long long reasons) {
  if (reasons == 0) return "none";
  std::string names;
  const auto append = [&](const char* name) {
    if (!names.empty()) names += ',';
    names += name;
  };
  for (const auto& reason : kReasons) {
    if ((reasons & reason.bit) == 0) continue;
    append(reason.name);
    reasons &= ~reason.bit;
  }
  if (reasons != 0) {
    char hex[24];
    std::snprintf(hex, sizeof hex, "0x%llx", reasons);
    append(hex);
  }
  return names;
}

struct SmClockSampler::Nvml {
  void* library = nullptr;
  NvmlReturn (*shutdown)() = nullptr;
  NvmlReturn (*clock_info)(NvmlDevice, int, unsigned*) = nullptr;
  NvmlReturn (*event_reasons)(NvmlDevice, unsigned long long*) = nullptr;  // may be absent
  NvmlReturn (*total_energy)(NvmlDevice, unsigned long long*) = nullptr;   // may be absent
  NvmlReturn (*field_values)(NvmlDevice, int, NvmlFieldValue*) = nullptr;  // may be absent
  NvmlDevice device = nullptr;

  // The GPU's energy counter (mJ since the driver loaded), into *mj; false where absent.
  bool read_energy(unsigned long long* mj) const {
    return total_energy != nullptr && total_energy(device, mj) == kNvmlSuccess;
  }
  // The GPU's instant power (mW), into *mw; false where the driver does not give it.
  bool read_instant_power(unsigned* mw) const {
    if (field_values == nullptr) return false;
    NvmlFieldValue field{};
    field.field_id = kNvmlFieldPowerInstant;
    if (field_values(device, 1, &field) != kNvmlSuccess || field.result != kNvmlSuccess) {
      return false;
    }
    const double value = field_value(field);
    if (!(value >= 0 && value < 1e9)) return false;  // NaN or not a power in mW
    *mw = static_cast<unsigned>(value);
    return true;
  }

  ~Nvml() {
    if (shutdown != nullptr) shutdown();
    if (library != nullptr) dlclose(library);
  }
  template <class F>
  bool resolve(F*& f, const char* name) {
    f = reinterpret_cast<F*>(dlsym(library, name));
    return f != nullptr;
  }
};

SmClockSampler::SmClockSampler(const std::string& pci_bus_id, const char* library) {
  auto nvml = std::make_unique<Nvml>();
  nvml->library = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (nvml->library == nullptr) {
    why_unavailable_ = std::string("cannot load ") + library;
    return;
  }
  NvmlReturn (*init)() = nullptr;
  NvmlReturn (*by_bus_id)(const char*, NvmlDevice*) = nullptr;
  if (!nvml->resolve(init, "nvmlInit_v2") ||
      !nvml->resolve(by_bus_id, "nvmlDeviceGetHandleByPciBusId_v2") ||
      !nvml->resolve(nvml->clock_info, "nvmlDeviceGetClockInfo")) {
    why_unavailable_ = std::string(library) + " lacks the functions the sampler uses";
    return;
  }
  if (init() != kNvmlSuccess) {
    why_unavailable_ = "nvmlInit failed";
    return;
  }
  nvml->resolve(nvml->shutdown, "nvmlShutdown");
  // Drivers since R535 name them event reasons; older ones only throttle reasons.
  if (!nvml->resolve(nvml->event_reasons, "nvmlDeviceGetCurrentClocksEventReasons")) {
    nvml->resolve(nvml->event_reasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
  }
  nvml->resolve(nvml->total_energy, "nvmlDeviceGetTotalEnergyConsumption");  // Volta and later
  nvml->resolve(nvml->field_values, "nvmlDeviceGetFieldValues");
  unsigned mhz = 0;
  if (by_bus_id(pci_bus_id.c_str(), &nvml->device) != kNvmlSuccess ||
      nvml->clock_info(nvml->device, kNvmlClockSm, &mhz) != kNvmlSuccess) {
    why_unavailable_ = "NVML does not read the SM clock of the device at " + pci_bus_id;
    return;
  }
  nvml_ = std::move(nvml);
}

SmClockSampler::~SmClockSampler() {
  if (thread_.joinable()) stop();
}

void SmClockSampler::start() {
  if (!available() || thread_.joinable()) return;
  stats_ = SmClockStats{};
  mhz_sum_ = 0;
  power_sum_w_ = 0;
  // The counter's value before the span: its first change seen after this is inside it.
  stats_.energy_read = nvml_->read_energy(&energy_last_mj_);
  span_start_ = std::chrono::steady_clock::now();
  running_ = true;
  thread_ = std::thread([this] {
    do {
      sample();
      std::this_thread::sleep_for(kInterval);
    } while (running_);
  });
}

SmClockStats SmClockSampler::stop() {
  if (!thread_.joinable()) return SmClockStats{};
  running_ = false;
  // The span ends now, not after the sampling thread's last sleep.
  const auto span_end = std::chrono::steady_clock::now();
  thread_.join();
  stats_.span_s = std::chrono::duration<double>(span_end - span_start_).count();
  if (stats_.samples > 0) stats_.mean_mhz = mhz_sum_ / stats_.samples;
  if (stats_.power_measured()) stats_.power_mean_w = power_sum_w_ / stats_.power_readings;
  return stats_;
}

void SmClockSampler::sample() {
  unsigned mhz = 0;
  if (nvml_->clock_info(nvml_->device, kNvmlClockSm, &mhz) != kNvmlSuccess) return;
  stats_.min_mhz = stats_.samples == 0 ? mhz : std::min(stats_.min_mhz, mhz);
  stats_.max_mhz = std::max(stats_.max_mhz, mhz);
  mhz_sum_ += mhz;
  ++stats_.samples;
  unsigned long long reasons = 0;
  if (nvml_->event_reasons != nullptr &&
      nvml_->event_reasons(nvml_->device, &reasons) == kNvmlSuccess) {
    stats_.reasons |= reasons;
  }
  sample_energy();
  sample_power();
}

void SmClockSampler::sample_power() {
  unsigned mw = 0;
  if (!nvml_->read_instant_power(&mw)) return;
  if (stats_.power_readings > 0 && mw != power_last_mw_) ++stats_.power_changes;
  power_last_mw_ = mw;
  power_sum_w_ += mw * 1e-3;
  ++stats_.power_readings;
}

// A change of the energy counter since its last read is one of its updates, seen at most a poll
// after it happened. Updates seen once stop() has begun are after the span and left out.
void SmClockSampler::sample_energy() {
  unsigned long long mj = 0;
  if (!stats_.energy_read || !nvml_->read_energy(&mj)) return;
  const auto now = std::chrono::steady_clock::now();
  if (mj == energy_last_mj_ || !running_) return;
  if (mj < energy_last_mj_) {  // the counter went back (the driver reloaded): no figure
    stats_.energy_read = false;
    stats_.energy_updates = 0;
    return;
  }
  energy_last_mj_ = mj;
  if (stats_.energy_updates++ == 0) {
    energy_first_update_ = now;
    energy_first_update_mj_ = mj;
    return;
  }
  stats_.energy_window_s = std::chrono::duration<double>(now - energy_first_update_).count();
  stats_.energy_window_mj = mj - energy_first_update_mj_;
}

}  // namespace smla::cli
