#include "inject/power/nvml.h"

#include <dlfcn.h>

#include <cstring>

#include "inject/power/nvml_field_value.h"

namespace gpuperf::inject {
namespace {

using nvml::FieldValue;
using nvml::kFieldPowerInstant;
using nvml::kSuccess;

template <class Fn>
Fn Symbol(void* library, const char* name) {
  return reinterpret_cast<Fn>(dlsym(library, name));
}

}  // namespace

bool Nvml::Load(std::string* why) {
  library_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library_ == nullptr) {
    *why = "libnvidia-ml.so.1 not found";
    return false;
  }
  init_ = Symbol<Fn0>(library_, "nvmlInit_v2");
  shutdown_ = Symbol<Fn0>(library_, "nvmlShutdown");
  by_index_ = Symbol<ByIndexFn>(library_, "nvmlDeviceGetHandleByIndex_v2");
  by_uuid_ = Symbol<ByUuidFn>(library_, "nvmlDeviceGetHandleByUUID");
  power_ = Symbol<PowerFn>(library_, "nvmlDeviceGetPowerUsage");
  energy_ = Symbol<EnergyFn>(library_, "nvmlDeviceGetTotalEnergyConsumption");
  fields_ = Symbol<FieldsFn>(library_, "nvmlDeviceGetFieldValues");
  if (init_ == nullptr || by_index_ == nullptr || power_ == nullptr) {
    *why =
        "libnvidia-ml.so.1 lacks nvmlInit_v2, nvmlDeviceGetHandleByIndex_v2 or "
        "nvmlDeviceGetPowerUsage";
    return false;
  }
  const int result = init_();
  if (result != kSuccess) {
    *why = "nvmlInit_v2 failed with NVML error " + std::to_string(result);
    return false;
  }
  return true;
}

void Nvml::Shutdown() {
  if (shutdown_ != nullptr) shutdown_();
}

Nvml::Device Nvml::ByUuid(const std::string& uuid) const {
  Device device = nullptr;
  if (by_uuid_ == nullptr || by_uuid_(uuid.c_str(), &device) != kSuccess) return nullptr;
  return device;
}

Nvml::Device Nvml::ByIndex(uint32_t index) const {
  Device device = nullptr;
  if (by_index_(index, &device) != kSuccess) return nullptr;
  return device;
}

bool Nvml::ReadPower(Device device, uint32_t* milliwatts, bool* instant) const {
  if (fields_ != nullptr && instant_works_) {
    FieldValue field;
    std::memset(&field, 0, sizeof(field));
    field.field_id = kFieldPowerInstant;
    if (fields_(device, 1, &field) == kSuccess && field.result == kSuccess) {
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
  if (power_(device, &value) != kSuccess) return false;
  *milliwatts = value;
  *instant = false;
  return true;
}

bool Nvml::ReadEnergy(Device device, uint64_t* millijoules) const {
  unsigned long long value = 0;
  if (energy_ == nullptr || energy_(device, &value) != kSuccess) return false;
  *millijoules = value;
  return true;
}

}  // namespace gpuperf::inject
