// A stand-in libnvidia-ml.so.1 for CI (no GPU, no driver): the few NVML calls gpuperf's
// power sampler makes (src/inject/power/nvml.cc), with the same signatures and layouts.
// Loaded through LD_LIBRARY_PATH. Each device draws a constant power, and its energy
// counter grows by exactly that power over CLOCK_MONOTONIC time, so a test can check the
// sampled power against the counter.
//
//   FAKE_NVML_DEVICES     devices (default 2)
//   FAKE_NVML_POWER_MW    power of device i: this + i * 10000 mW (default 250000)
//   FAKE_NVML_NO_INSTANT  set: NVML_FI_DEV_POWER_INSTANT is refused (older drivers)
//   FAKE_NVML_INIT_ERROR  nvmlInit_v2 returns this error code (e.g. 9, driver not loaded)
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "inject/power/nvml_field_value.h"

namespace {

using gpuperf::nvml::kFieldPowerInstant;
using gpuperf::nvml::kSuccess;
constexpr int kInvalidArgument = 2;
constexpr int kNotSupported = 3;
constexpr int kUninitialized = 1;
constexpr int kNotFound = 6;
constexpr int kMaxDevices = 16;

using gpuperf::nvml::FieldValue;

struct Device {
  int index;
};
Device g_devices[kMaxDevices];
int g_initialized = 0;
uint64_t g_init_ns = 0;

uint64_t Now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + ts.tv_nsec;
}

int DeviceCount() {
  const char* text = std::getenv("FAKE_NVML_DEVICES");
  const int n = text ? std::atoi(text) : 2;
  return n < 0 ? 0 : n > kMaxDevices ? kMaxDevices : n;
}

unsigned PowerMw(const Device* d) {
  const char* text = std::getenv("FAKE_NVML_POWER_MW");
  const unsigned base = text ? static_cast<unsigned>(std::atoi(text)) : 250000;
  return base + static_cast<unsigned>(d->index) * 10000;
}

const Device* Valid(void* handle) {
  for (const Device& d : g_devices) {
    if (handle == &d && d.index < DeviceCount()) return &d;
  }
  return nullptr;
}

}  // namespace

extern "C" {

int nvmlInit_v2() {
  if (const char* error = std::getenv("FAKE_NVML_INIT_ERROR")) return std::atoi(error);
  for (int i = 0; i < kMaxDevices; ++i) g_devices[i].index = i;
  if (g_initialized++ == 0) g_init_ns = Now();
  return kSuccess;
}

int nvmlShutdown() {
  if (g_initialized == 0) return kUninitialized;
  --g_initialized;
  return kSuccess;
}

int nvmlDeviceGetCount_v2(unsigned* count) {
  if (!g_initialized) return kUninitialized;
  *count = static_cast<unsigned>(DeviceCount());
  return kSuccess;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned index, void** device) {
  if (!g_initialized) return kUninitialized;
  if (device == nullptr || index >= static_cast<unsigned>(DeviceCount())) return kInvalidArgument;
  *device = &g_devices[index];
  return kSuccess;
}

// UUIDs are "GPU-00000000-0000-0000-0000-00000000000N" for device N.
int nvmlDeviceGetHandleByUUID(const char* uuid, void** device) {
  if (!g_initialized) return kUninitialized;
  unsigned index = 0;
  if (uuid == nullptr || std::sscanf(uuid, "GPU-00000000-0000-0000-0000-%12u", &index) != 1 ||
      index >= static_cast<unsigned>(DeviceCount())) {
    return kNotFound;
  }
  *device = &g_devices[index];
  return kSuccess;
}

int nvmlDeviceGetPowerUsage(void* device, unsigned* milliwatts) {
  const Device* d = Valid(device);
  if (!g_initialized || d == nullptr || milliwatts == nullptr) return kInvalidArgument;
  *milliwatts = PowerMw(d);
  return kSuccess;
}

int nvmlDeviceGetTotalEnergyConsumption(void* device, unsigned long long* millijoules) {
  const Device* d = Valid(device);
  if (!g_initialized || d == nullptr || millijoules == nullptr) return kInvalidArgument;
  // 1 kJ at load, then the device's power over the time since.
  *millijoules = 1000000ull + PowerMw(d) * (Now() - g_init_ns) / 1000000000ull;
  return kSuccess;
}

int nvmlDeviceGetFieldValues(void* device, int count, FieldValue* values) {
  const Device* d = Valid(device);
  if (!g_initialized || d == nullptr || values == nullptr || count < 0) return kInvalidArgument;
  for (int i = 0; i < count; ++i) {
    FieldValue& v = values[i];
    v.timestamp_us = static_cast<long long>(Now() / 1000);
    if (v.field_id == kFieldPowerInstant && std::getenv("FAKE_NVML_NO_INSTANT") == nullptr) {
      v.value_type = 1;  // unsigned int
      v.value.ui = PowerMw(d);
      v.result = kSuccess;
    } else {
      v.result = kNotSupported;
    }
  }
  return kSuccess;
}

}  // extern "C"
