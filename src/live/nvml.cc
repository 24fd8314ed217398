#include "live/nvml.h"

#include <dlfcn.h>

#include <cstdio>
#include <type_traits>

namespace gpuperf::live {
namespace {

// The few NVML declarations used (nvml.h is not needed to build): an opaque device
// handle, an int status (0 = NVML_SUCCESS), plain structs.
using NvmlDeviceHandle = void*;
using NvmlStatus = int;
struct NvmlUtilization {
  unsigned int gpu;
  unsigned int memory;
};
struct NvmlMemory {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};
constexpr int kClockSm = 1;   // NVML_CLOCK_SM
constexpr int kClockMem = 2;  // NVML_CLOCK_MEM
constexpr int kTemperatureGpu = 0;
constexpr unsigned kTextBytes = 96;  // NVML_DEVICE_UUID_V2_BUFFER_SIZE, ..._NAME_V2_...

}  // namespace

struct Nvml::Api {
  NvmlStatus (*init)();
  NvmlStatus (*shutdown)();
  NvmlStatus (*count)(unsigned int*);
  NvmlStatus (*handle)(unsigned int, NvmlDeviceHandle*);
  NvmlStatus (*uuid)(NvmlDeviceHandle, char*, unsigned int);
  NvmlStatus (*name)(NvmlDeviceHandle, char*, unsigned int);
  NvmlStatus (*utilization)(NvmlDeviceHandle, NvmlUtilization*);
  NvmlStatus (*clock)(NvmlDeviceHandle, int, unsigned int*);
  NvmlStatus (*power)(NvmlDeviceHandle, unsigned int*);
  NvmlStatus (*memory)(NvmlDeviceHandle, NvmlMemory*);
  NvmlStatus (*temperature)(NvmlDeviceHandle, int, unsigned int*);
  const char* (*error_string)(NvmlStatus);
};

std::unique_ptr<Nvml> Nvml::Open(std::string* why) {
  void* library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    *why = "libnvidia-ml.so.1 not found (no NVIDIA driver here)";
    return nullptr;
  }
  auto api = std::make_unique<Api>();
  bool complete = true;
  auto bind = [&](auto& fn, const char* symbol) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(library, symbol));
    if (fn == nullptr) complete = false;
  };
  bind(api->init, "nvmlInit_v2");
  bind(api->shutdown, "nvmlShutdown");
  bind(api->count, "nvmlDeviceGetCount_v2");
  bind(api->handle, "nvmlDeviceGetHandleByIndex_v2");
  bind(api->uuid, "nvmlDeviceGetUUID");
  bind(api->name, "nvmlDeviceGetName");
  bind(api->utilization, "nvmlDeviceGetUtilizationRates");
  bind(api->clock, "nvmlDeviceGetClockInfo");
  bind(api->power, "nvmlDeviceGetPowerUsage");
  bind(api->memory, "nvmlDeviceGetMemoryInfo");
  bind(api->temperature, "nvmlDeviceGetTemperature");
  bind(api->error_string, "nvmlErrorString");
  if (!complete) {
    dlclose(library);
    *why = "libnvidia-ml.so.1 lacks an expected function";
    return nullptr;
  }
  if (NvmlStatus status = api->init(); status != 0) {
    *why = std::string("nvmlInit failed: ") + api->error_string(status);
    dlclose(library);
    return nullptr;
  }
  return std::unique_ptr<Nvml>(new Nvml(library, std::move(api)));
}

Nvml::Nvml(void* library, std::unique_ptr<Api> api) : library_(library), api_(std::move(api)) {}

Nvml::~Nvml() {
  api_->shutdown();
  dlclose(library_);
}

std::vector<NvmlDevice> Nvml::Read() const {
  std::vector<NvmlDevice> devices;
  unsigned int count = 0;
  if (api_->count(&count) != 0) return devices;
  for (unsigned int i = 0; i < count; ++i) {
    NvmlDeviceHandle handle = nullptr;
    if (api_->handle(i, &handle) != 0) continue;
    NvmlDevice device;
    device.index = i;
    char text[kTextBytes] = {};
    if (api_->uuid(handle, text, kTextBytes) == 0) device.uuid = text;
    if (api_->name(handle, text, kTextBytes) == 0) device.name = text;
    NvmlUtilization utilization{};
    if (api_->utilization(handle, &utilization) == 0) {
      device.gpu_util_percent = static_cast<int>(utilization.gpu);
      device.memory_util_percent = static_cast<int>(utilization.memory);
    }
    unsigned int value = 0;
    if (api_->clock(handle, kClockSm, &value) == 0) device.sm_clock_mhz = static_cast<int>(value);
    if (api_->clock(handle, kClockMem, &value) == 0) {
      device.memory_clock_mhz = static_cast<int>(value);
    }
    if (api_->power(handle, &value) == 0) device.power_watts = value / 1000.0;
    if (api_->temperature(handle, kTemperatureGpu, &value) == 0) {
      device.temperature_c = static_cast<int>(value);
    }
    NvmlMemory memory{};
    if (api_->memory(handle, &memory) == 0) {
      device.memory_used_bytes = static_cast<int64_t>(memory.used);
      device.memory_total_bytes = static_cast<int64_t>(memory.total);
    }
    devices.push_back(std::move(device));
  }
  return devices;
}

std::string UuidText(const uint8_t (&uuid)[16]) {
  char text[64];
  int n = std::snprintf(text, sizeof(text), "GPU-");
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) text[n++] = '-';
    n += std::snprintf(text + n, sizeof(text) - n, "%02x", uuid[i]);
  }
  return std::string(text, n);
}

}  // namespace gpuperf::live
