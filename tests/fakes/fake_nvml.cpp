// A stand-in for the driver's NVML (libnvidia-ml.so.1) with the functions
// tools/smla/sm_clock_sampler.cpp uses, so that the sampler is tested on machines without a
// GPU (tests/cpu/test_sm_clock_sampler.cpp): one device, at PCI bus id 0000:01:00.0, whose SM
// clock alternates between 1500 and 1980 MHz from one read to the next, with SwPowerCap (0x4)
// set in its clock event reasons while it reads 1500, and whose energy counter, as a driver's,
// changes only every kEnergyUpdateMs: by the energy of kWatts over that time; its instant power
// field (NVML_FI_DEV_POWER_INSTANT), refreshed as often, alternates kWatts -/+ kPowerSwingW
// (unless SMLA_FAKE_NVML_NO_POWER_FIELD is set: then the device lacks the field).
#include <chrono>
#include <cstdlib>
#include <cstring>

namespace {

struct Device {
  int clock_reads = 0;
  std::chrono::steady_clock::time_point loaded = std::chrono::steady_clock::now();
} device;

// tests/cpu/test_sm_clock_sampler.cpp expects these. An H100's driver updated its counter
// every ~100 ms (perf-log s72); 5 ms keeps the tests' spans short.
constexpr long long kEnergyUpdateMs = 5;
constexpr long long kWatts = 350;
constexpr long long kPowerSwingW = 50;
constexpr unsigned kFieldPowerInstant = 186;

constexpr int kSuccess = 0;
constexpr int kInvalidArgument = 2;
constexpr int kNotFound = 6;
constexpr int kClockSm = 1;

// nvmlFieldValue_t, with the unsigned int member of its value union (nvmlValueType_t 1).
struct FieldValue {
  unsigned field_id;
  unsigned scope_id;
  long long timestamp_us;
  long long latency_us;
  int value_type;
  int result;
  union {
    unsigned long long u64;
    unsigned u32;
  } value;
};

long long ms_since_loaded() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               device.loaded)
      .count();
}

}  // namespace

extern "C" {

int nvmlInit_v2() { return kSuccess; }
int nvmlShutdown() { return kSuccess; }

int nvmlDeviceGetHandleByPciBusId_v2(const char* bus_id, Device** handle) {
  if (std::strcmp(bus_id, "0000:01:00.0") != 0) return kNotFound;
  *handle = &device;
  return kSuccess;
}

int nvmlDeviceGetClockInfo(Device* handle, int type, unsigned* mhz) {
  if (handle != &device || type != kClockSm) return kInvalidArgument;
  *mhz = device.clock_reads++ % 2 == 0 ? 1500 : 1980;
  return kSuccess;
}

int nvmlDeviceGetCurrentClocksEventReasons(Device* handle, unsigned long long* reasons) {
  if (handle != &device) return kInvalidArgument;
  // The reasons are read right after the clock: the last read was 1500 when the count is odd.
  *reasons = device.clock_reads % 2 == 1 ? 0x4 : 0;
  return kSuccess;
}

int nvmlDeviceGetTotalEnergyConsumption(Device* handle, unsigned long long* mj) {
  if (handle != &device) return kInvalidArgument;
  const long long ms = ms_since_loaded();
  *mj = 5000 + static_cast<unsigned long long>(ms / kEnergyUpdateMs * kEnergyUpdateMs * kWatts);
  return kSuccess;
}

// Only the instant power field is known; any other gets NVML_ERROR_NOT_SUPPORTED (3) in its
// own return code, as a driver answers for a field the device lacks.
int nvmlDeviceGetFieldValues(Device* handle, int count, FieldValue* values) {
  if (handle != &device || count < 0) return kInvalidArgument;
  const long long refresh = ms_since_loaded() / kEnergyUpdateMs;
  for (int i = 0; i < count; ++i) {
    FieldValue& field = values[i];
    if (field.field_id != kFieldPowerInstant || std::getenv("SMLA_FAKE_NVML_NO_POWER_FIELD")) {
      field.result = 3;
      continue;
    }
    field.result = kSuccess;
    field.value_type = 1;
    field.value.u32 =
        static_cast<unsigned>((kWatts + (refresh % 2 == 0 ? -kPowerSwingW : kPowerSwingW)) * 1000);
  }
  return kSuccess;
}

}  // extern "C"
