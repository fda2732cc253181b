// `smla info`: what this build holds and what this machine can run.
#include <cstdio>

#include "args.hpp"
#include "cli.hpp"
#include "cuda_devices.hpp"
#include "json.hpp"
#include "smla/ops.hpp"

namespace smla::cli {

namespace {

const CommandSpec kSpec{
    "info",
    "smla info [--json]",
    "Prints the library version, the CUDA architectures and kernel preset compiled in, the CUDA\n"
    "devices (name, compute capability, SMs, memory) and which backends can run: the CPU\n"
    "reference always; the portable (sm_80+) and Hopper (sm_90a) GPU paths when compiled and a\n"
    "matching device is present.",
    {}};

const char* or_none(const char* text) { return text[0] != '\0' ? text : "(none: CPU-only build)"; }

}  // namespace

int info_command(const std::vector<std::string>& argv) {
  const Args args(kSpec, argv);
  if (args.print_help_if_asked()) return kExitOk;
  const CudaDeviceList list = cuda_devices();
  const GpuPaths paths = compiled_gpu_paths();
  bool portable_usable = false, hopper_usable = false;
  for (const CudaDevice& device : list.devices) {
    portable_usable = portable_usable || portable_runs_on(device);
    hopper_usable = hopper_usable || hopper_runs_on(device);
  }

  if (args.json()) {
    std::vector<JsonObject> devices;
    for (const CudaDevice& d : list.devices) {
      JsonObject device;
      device.add("ordinal", d.ordinal).add("name", d.name);
      device.add("compute_capability",
                 std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor));
      device.add("sm_count", d.sm_count).add("memory_bytes", d.memory_bytes);
      device.add("portable", portable_runs_on(d)).add("hopper", hopper_runs_on(d));
      devices.push_back(device);
    }
    JsonObject backends;
    backends.add("cpu", JsonObject().add("compiled", true).add("usable", true));
    backends.add(
        "portable",
        JsonObject().add("compiled", paths.portable_compiled).add("usable", portable_usable));
    backends.add("hopper",
                 JsonObject().add("compiled", paths.hopper_compiled).add("usable", hopper_usable));
    JsonObject out;
    out.add("command", "info").add("ok", true).add("version", version());
    out.add("cuda_architectures", compiled_cuda_architectures());
    out.add("kernel_preset", kernel_preset());
    out.add("cuda_devices", devices);
    if (list.devices.empty()) out.add("no_device_reason", list.why_none);
    out.add("backends", backends);
    std::printf("%s\n", out.str().c_str());
    return kExitOk;
  }

  std::printf("smla %s\n", version());
  std::printf("CUDA architectures: %s\n", or_none(compiled_cuda_architectures()));
  std::printf("kernel preset:      %s\n", or_none(kernel_preset()));
  if (list.devices.empty()) {
    std::printf("CUDA devices:       %s\n", list.why_none.c_str());
  } else {
    std::printf("CUDA devices:\n");
    for (const CudaDevice& d : list.devices) {
      std::printf("  [%d] %s, cc %d.%d, %d SMs, %.1f GiB\n", d.ordinal, d.name.c_str(), d.cc_major,
                  d.cc_minor, d.sm_count, static_cast<double>(d.memory_bytes) / (1 << 30));
    }
  }
  auto state = [](bool compiled, bool usable) {
    return !compiled ? "not compiled" : usable ? "available" : "compiled, no matching device";
  };
  std::printf("backends:\n");
  std::printf("  cpu reference      available\n");
  std::printf("  portable (sm_80+)  %s\n", state(paths.portable_compiled, portable_usable));
  std::printf("  hopper (sm_90a)    %s\n", state(paths.hopper_compiled, hopper_usable));
  return kExitOk;
}

}  // namespace smla::cli
