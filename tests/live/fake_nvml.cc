// A stand-in libnvidia-ml.so.1 for CI (no driver there): four devices with fixed readings, so
// that tests see gpuperf join a process's device to NVML's by UUID and label it with NVML's
// index. Device 3 has the UUID the fake libcupti gives CUDA device 0
// (GPU-01000000-0000-0000-0000-000000000000); the others have UUIDs no process has.
// Only the entry points gpuperf resolves (src/base/nvml.cc, for `gpuperf top`/`serve` and the
// recorder's power sampler), with NVML's signatures. For the power sampler each device draws
// its fixed power, as an instantaneous field value too, and its energy counter grows by exactly
// that power over CLOCK_MONOTONIC time. Switches:
//   FAKE_NVML_NO_INSTANT  set: NVML_FI_DEV_POWER_INSTANT is refused (older drivers)
//   FAKE_NVML_INIT_ERROR  nvmlInit_v2 returns this error code (e.g. 9, driver not loaded)
//   FAKE_NVML_POWER_MW    comma-separated milliwatts that replace the devices' powers in
//                         index order (e.g. "100000,130000": device 1 draws 30% more)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "base/nvml_field_value.h"

namespace {

struct FakeDevice {
  const char* uuid;
  unsigned utilization;
  unsigned power_mw;
};
const FakeDevice kDevices[] = {
    {"GPU-aaaaaaaa-0000-0000-0000-000000000000", 10, 100000},
    {"GPU-bbbbbbbb-0000-0000-0000-000000000000", 20, 110000},
    {"GPU-cccccccc-0000-0000-0000-000000000000", 30, 120000},
    {"GPU-01000000-0000-0000-0000-000000000000", 87, 351500},
};
constexpr unsigned kCount = sizeof(kDevices) / sizeof(kDevices[0]);

struct Utilization {
  unsigned int gpu;
  unsigned int memory;
};
struct Memory {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

// A device handle is a pointer to its entry.
const FakeDevice* Device(void* handle) {
  return static_cast<const FakeDevice*>(handle);
}

unsigned long long g_init_ns = 0;

// The device's power: its fixed one, or its entry in FAKE_NVML_POWER_MW.
unsigned PowerMw(void* handle) {
  const FakeDevice* device = Device(handle);
  const char* list = std::getenv("FAKE_NVML_POWER_MW");
  if (list == nullptr) return device->power_mw;
  const long index = device - kDevices;
  for (long i = 0; *list != '\0'; ++i) {
    char* end = nullptr;
    const unsigned long value = std::strtoul(list, &end, 10);
    if (end == list) break;
    if (i == index) return static_cast<unsigned>(value);
    list = *end == ',' ? end + 1 : end;
  }
  return device->power_mw;
}

unsigned long long NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<unsigned long long>(ts.tv_sec) * 1000000000ull + ts.tv_nsec;
}

}  // namespace

extern "C" {

int nvmlInit_v2() {
  if (const char* error = std::getenv("FAKE_NVML_INIT_ERROR")) return std::atoi(error);
  if (g_init_ns == 0) g_init_ns = NowNs();
  return 0;
}
int nvmlShutdown() {
  return 0;
}
const char* nvmlErrorString(int) {
  return "fake NVML error";
}
int nvmlDeviceGetCount_v2(unsigned int* count) {
  *count = kCount;
  return 0;
}
int nvmlDeviceGetHandleByIndex_v2(unsigned int index, void** handle) {
  if (index >= kCount) return 2;  // NVML_ERROR_INVALID_ARGUMENT
  *handle = const_cast<FakeDevice*>(&kDevices[index]);
  return 0;
}
int nvmlDeviceGetUUID(void* handle, char* uuid, unsigned int length) {
  std::snprintf(uuid, length, "%s", Device(handle)->uuid);
  return 0;
}
int nvmlDeviceGetName(void*, char* name, unsigned int length) {
  std::snprintf(name, length, "NVIDIA H100 80GB HBM3 (fake NVML)");
  return 0;
}
int nvmlDeviceGetUtilizationRates(void* handle, Utilization* utilization) {
  utilization->gpu = Device(handle)->utilization;
  utilization->memory = Device(handle)->utilization / 2;
  return 0;
}
int nvmlDeviceGetClockInfo(void*, int type, unsigned int* clock) {
  *clock = type == 1 ? 1980 : 2619;  // NVML_CLOCK_SM, else memory
  return 0;
}
int nvmlDeviceGetPowerUsage(void* handle, unsigned int* milliwatts) {
  *milliwatts = PowerMw(handle);
  return 0;
}
int nvmlDeviceGetMemoryInfo(void*, Memory* memory) {
  memory->total = 85520809984ull;
  memory->used = 12884901888ull;
  memory->free = memory->total - memory->used;
  return 0;
}
int nvmlDeviceGetTemperature(void*, int, unsigned int*) {
  return 3;  // NVML_ERROR_NOT_SUPPORTED: a reading the fake does not give
}
int nvmlDeviceGetHandleByUUID(const char* uuid, void** handle) {
  for (const FakeDevice& d : kDevices) {
    if (uuid != nullptr && std::strcmp(uuid, d.uuid) == 0) {
      *handle = const_cast<FakeDevice*>(&d);
      return 0;
    }
  }
  return 6;  // NVML_ERROR_NOT_FOUND
}
// 1 kJ at load, then the device's power over the time since.
int nvmlDeviceGetTotalEnergyConsumption(void* handle, unsigned long long* millijoules) {
  *millijoules = 1000000ull + PowerMw(handle) * (NowNs() - g_init_ns) / 1000000000ull;
  return 0;
}
int nvmlDeviceGetFieldValues(void* handle, int count, gpuperf::nvml::FieldValue* values) {
  for (int i = 0; i < count; ++i) {
    gpuperf::nvml::FieldValue& v = values[i];
    v.timestamp_us = static_cast<long long>(NowNs() / 1000);
    if (v.field_id == gpuperf::nvml::kFieldPowerInstant &&
        std::getenv("FAKE_NVML_NO_INSTANT") == nullptr) {
      v.value_type = 1;  // unsigned int
      v.value.ui = PowerMw(handle);
      v.result = 0;
    } else {
      v.result = 3;  // NVML_ERROR_NOT_SUPPORTED
    }
  }
  return 0;
}

}  // extern "C"
