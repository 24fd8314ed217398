// NVML, the driver's management library, when libnvidia-ml.so.1 can be loaded: dlopen'ed,
// never linked, so that gpuperf and the injection library run where there is no driver. One
// loader for both of its readers: the recorder's power sampler (src/inject/power: board power
// and energy of the GPUs a process uses) and `gpuperf top`/`serve` (src/live: every device's
// state). No NVML header is needed: the few types used follow nvml.h's layout (opaque device
// handles, int status codes, plain structs; nvml_field_value.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace gpuperf {

struct NvmlDevice {
  uint32_t index = 0;  // NVML's (and nvidia-smi's, DCGM's "gpu") index
  std::string uuid;    // "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"
  std::string name;
  // Each reading is -1 when NVML could not give it (not supported, no permission).
  int gpu_util_percent = -1;  // any kernel running, over NVML's last sample period
  int memory_util_percent = -1;
  int sm_clock_mhz = -1;
  int memory_clock_mhz = -1;
  double power_watts = -1;
  int temperature_c = -1;
  int64_t memory_used_bytes = -1;
  int64_t memory_total_bytes = -1;
};

class Nvml {
 public:
  using Device = void*;

  // Loads the library and initializes NVML; nullptr with the reason in `why` when it cannot.
  // Entry points only some readings use may be missing (an older driver): those readings
  // then fail, the others work.
  static std::unique_ptr<Nvml> Open(std::string* why);
  // nvmlShutdown. The library stays loaded: NVML counts initializations per process, and a
  // driver library is no safer to unload than to load twice.
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  // One reading of every device (gpuperf top and serve).
  std::vector<NvmlDevice> Read() const;

  // The device with this UUID ("GPU-xxxxxxxx-..."), or nullptr.
  Device ByUuid(const std::string& uuid) const;
  // The device at this NVML index, or nullptr.
  Device ByIndex(uint32_t index) const;
  // Board power in mW: the instantaneous reading where the driver has it, else
  // nvmlDeviceGetPowerUsage (a trailing average on recent GPUs). `instant` says which.
  bool ReadPower(Device device, uint32_t* milliwatts, bool* instant) const;
  // Energy since the driver loaded, mJ.
  bool ReadEnergy(Device device, uint64_t* millijoules) const;

  struct Api;  // the entry points, resolved with dlsym

 private:
  explicit Nvml(std::unique_ptr<Api> api);
  std::unique_ptr<Api> api_;
  mutable bool instant_works_ = true;  // cleared after the first refusal
};

// The NVML form of a CUDA device UUID: "GPU-" and the 16 bytes in hex, dashed 8-4-4-4-12.
std::string UuidText(const uint8_t (&uuid)[16]);

}  // namespace gpuperf
