// Device state from NVML (utilization, clocks, power, memory), when libnvidia-ml.so.1 can
// be loaded: dlopen'ed, never linked, so gpuperf runs where there is no driver.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace gpuperf::live {

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
  // Loads and initializes NVML; nullptr with the reason in `why` when it cannot.
  static std::unique_ptr<Nvml> Open(std::string* why);
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  // One reading of every device.
  std::vector<NvmlDevice> Read() const;

  struct Api;  // the entry points, resolved with dlsym

 private:
  Nvml(void* library, std::unique_ptr<Api> api);
  void* library_;
  std::unique_ptr<Api> api_;
};

// The NVML form of a CUDA device UUID: "GPU-" and the 16 bytes in hex, dashed 8-4-4-4-12.
std::string UuidText(const uint8_t (&uuid)[16]);

}  // namespace gpuperf::live
