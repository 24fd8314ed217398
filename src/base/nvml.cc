#include "base/nvml.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <type_traits>

#include "base/nvml_field_value.h"

namespace gpuperf {
// NVML's own types, as its ABI lays them out (a named namespace: Nvml::Api has fields of these
// types, and a unity batch would warn about a class using another file's anonymous namespace).
namespace nvml_abi {

using NvmlStatus = int;  // 0: NVML_SUCCESS
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

}  // namespace nvml_abi
using namespace nvml_abi;

struct Nvml::Api {
  using Device = Nvml::Device;
  // What every reader needs.
  NvmlStatus (*init)();
  NvmlStatus (*shutdown)();
  NvmlStatus (*handle)(unsigned int, Device*);
  NvmlStatus (*power)(Device, unsigned int*);
  // What some readings need; null where the driver lacks it.
  NvmlStatus (*count)(unsigned int*);
  NvmlStatus (*by_uuid)(const char*, Device*);
  NvmlStatus (*uuid)(Device, char*, unsigned int);
  NvmlStatus (*name)(Device, char*, unsigned int);
  NvmlStatus (*utilization)(Device, NvmlUtilization*);
  NvmlStatus (*clock)(Device, int, unsigned int*);
  NvmlStatus (*memory)(Device, NvmlMemory*);
  NvmlStatus (*temperature)(Device, int, unsigned int*);
  NvmlStatus (*energy)(Device, unsigned long long*);
  NvmlStatus (*fields)(Device, int, nvml::FieldValue*);
  const char* (*error_string)(NvmlStatus);
};

std::unique_ptr<Nvml> Nvml::Open(std::string* why) {
  void* library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    *why = "libnvidia-ml.so.1 not found (no NVIDIA driver here)";
    return nullptr;
  }
  auto api = std::make_unique<Api>();
  auto bind = [&](auto& fn, const char* symbol) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(library, symbol));
  };
  bind(api->init, "nvmlInit_v2");
  bind(api->shutdown, "nvmlShutdown");
  bind(api->handle, "nvmlDeviceGetHandleByIndex_v2");
  bind(api->power, "nvmlDeviceGetPowerUsage");
  bind(api->count, "nvmlDeviceGetCount_v2");
  bind(api->by_uuid, "nvmlDeviceGetHandleByUUID");
  bind(api->uuid, "nvmlDeviceGetUUID");
  bind(api->name, "nvmlDeviceGetName");
  bind(api->utilization, "nvmlDeviceGetUtilizationRates");
  bind(api->clock, "nvmlDeviceGetClockInfo");
  bind(api->memory, "nvmlDeviceGetMemoryInfo");
  bind(api->temperature, "nvmlDeviceGetTemperature");
  bind(api->energy, "nvmlDeviceGetTotalEnergyConsumption");
  bind(api->fields, "nvmlDeviceGetFieldValues");
  bind(api->error_string, "nvmlErrorString");
  if (api->init == nullptr || api->shutdown == nullptr || api->handle == nullptr ||
      api->power == nullptr) {
    *why =
        "libnvidia-ml.so.1 lacks nvmlInit_v2, nvmlShutdown, nvmlDeviceGetHandleByIndex_v2 or "
        "nvmlDeviceGetPowerUsage";
    return nullptr;
  }
  if (const NvmlStatus status = api->init(); status != nvml::kSuccess) {
    *why = "nvmlInit_v2 failed: " + (api->error_string != nullptr
                                         ? std::string(api->error_string(status))
                                         : "NVML error " + std::to_string(status));
    return nullptr;
  }
  return std::unique_ptr<Nvml>(new Nvml(std::move(api)));
}

Nvml::Nvml(std::unique_ptr<Api> api) : api_(std::move(api)) {}

Nvml::~Nvml() {
  api_->shutdown();
}

std::vector<NvmlDevice> Nvml::Read() const {
  std::vector<NvmlDevice> devices;
  unsigned int count = 0;
  if (api_->count == nullptr || api_->count(&count) != nvml::kSuccess) return devices;
  auto ok = [](auto* fn, auto... args) { return fn != nullptr && fn(args...) == nvml::kSuccess; };
  for (unsigned int i = 0; i < count; ++i) {
    Device handle = nullptr;
    if (api_->handle(i, &handle) != nvml::kSuccess) continue;
    NvmlDevice device;
    device.index = i;
    char text[kTextBytes] = {};
    if (ok(api_->uuid, handle, text, kTextBytes)) device.uuid = text;
    if (ok(api_->name, handle, text, kTextBytes)) device.name = text;
    NvmlUtilization utilization{};
    if (ok(api_->utilization, handle, &utilization)) {
      device.gpu_util_percent = static_cast<int>(utilization.gpu);
      device.memory_util_percent = static_cast<int>(utilization.memory);
    }
    unsigned int value = 0;
    if (ok(api_->clock, handle, kClockSm, &value)) device.sm_clock_mhz = static_cast<int>(value);
    if (ok(api_->clock, handle, kClockMem, &value)) {
      device.memory_clock_mhz = static_cast<int>(value);
    }
    if (ok(api_->power, handle, &value)) device.power_watts = value / 1000.0;
    if (ok(api_->temperature, handle, kTemperatureGpu, &value)) {
      device.temperature_c = static_cast<int>(value);
    }
    NvmlMemory memory{};
    if (ok(api_->memory, handle, &memory)) {
      device.memory_used_bytes = static_cast<int64_t>(memory.used);
      device.memory_total_bytes = static_cast<int64_t>(memory.total);
    }
    devices.push_back(std::move(device));
  }
  return devices;
}

Nvml::Device Nvml::ByUuid(const std::string& uuid) const {
  Device device = nullptr;
  if (api_->by_uuid == nullptr || api_->by_uuid(uuid.c_str(), &device) != nvml::kSuccess) {
    return nullptr;
  }
  return device;
}

Nvml::Device Nvml::ByIndex(uint32_t index) const {
  Device device = nullptr;
  if (api_->handle(index, &device) != nvml::kSuccess) return nullptr;
  return device;
}

bool Nvml::ReadPower(Device device, uint32_t* milliwatts, bool* instant) const {
  if (api_->fields != nullptr && instant_works_) {
    nvml::FieldValue field;
    std::memset(&field, 0, sizeof(field));
    field.field_id = nvml::kFieldPowerInstant;
    if (api_->fields(device, 1, &field) == nvml::kSuccess && field.result == nvml::kSuccess) {
      switch (field.value_type) {
        case 0:  // double
          *milliwatts = static_cast<uint32_t>(field.value.d);
          break;
        case 1:  // unsigned int
          *milliwatts = field.value.ui;
          break;
        case 2:  // unsigned long
          *milliwatts = static_cast<uint32_t>(field.value.ul);
          break;
        case 3:  // unsigned long long
          *milliwatts = static_cast<uint32_t>(field.value.ull);
          break;
        case 4:  // signed long long
          *milliwatts = static_cast<uint32_t>(field.value.sll);
          break;
        default:  // signed int and anything newer
          *milliwatts = static_cast<uint32_t>(field.value.si);
          break;
      }
      *instant = true;
      return true;
    }
    instant_works_ = false;  // older driver or GPU: the averaged reading from now on
  }
  unsigned value = 0;
  if (api_->power(device, &value) != nvml::kSuccess) return false;
  *milliwatts = value;
  *instant = false;
  return true;
}

bool Nvml::ReadEnergy(Device device, uint64_t* millijoules) const {
  unsigned long long value = 0;
  if (api_->energy == nullptr || api_->energy(device, &value) != nvml::kSuccess) return false;
  *millijoules = value;
  return true;
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

}  // namespace gpuperf
