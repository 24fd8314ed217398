// The few NVML calls the power sampler makes, found with dlopen("libnvidia-ml.so.1") at
// run time: the injection library has no link dependency on NVML, and a machine without
// it simply has no power readings. No NVML header is needed: the types below follow the
// layout of nvml.h (opaque device handles, nvmlFieldValue_t).
#pragma once

#include <cstdint>
#include <string>

namespace gpuperf::inject {

class Nvml {
 public:
  using Device = void*;

  // Loads the library and initializes NVML. False (with the reason) when unavailable.
  bool Load(std::string* why);
  // nvmlShutdown; the library stays loaded (NVML counts initializations per process).
  void Shutdown();

  // The device with this UUID ("GPU-xxxxxxxx-..."), or nullptr.
  Device ByUuid(const std::string& uuid) const;
  // The device at this NVML index, or nullptr.
  Device ByIndex(uint32_t index) const;

  // Board power in mW: the instantaneous reading where the driver has it, else
  // nvmlDeviceGetPowerUsage (a trailing average on recent GPUs). `instant` says which.
  bool ReadPower(Device device, uint32_t* milliwatts, bool* instant) const;
  // Energy since the driver loaded, mJ.
  bool ReadEnergy(Device device, uint64_t* millijoules) const;

 private:
  using Fn0 = int (*)();
  using ByIndexFn = int (*)(unsigned, Device*);
  using ByUuidFn = int (*)(const char*, Device*);
  using PowerFn = int (*)(Device, unsigned*);
  using EnergyFn = int (*)(Device, unsigned long long*);
  using FieldsFn = int (*)(Device, int, void*);

  void* library_ = nullptr;
  Fn0 init_ = nullptr;
  Fn0 shutdown_ = nullptr;
  ByIndexFn by_index_ = nullptr;
  ByUuidFn by_uuid_ = nullptr;
  PowerFn power_ = nullptr;
  EnergyFn energy_ = nullptr;
  FieldsFn fields_ = nullptr;
  mutable bool instant_works_ = true;  // cleared after the first refusal
};

}  // namespace gpuperf::inject
