// nvml.h's nvmlFieldValue_t, for nvmlDeviceGetFieldValues, and the one field the power
// sampler reads. Shared with the fake libnvidia-ml.so.1 of the tests (tests/fakes/fake_nvml),
// which answers in the same layout.
#pragma once

namespace gpuperf::nvml {

struct FieldValue {
  unsigned field_id;
  unsigned scope_id;
  long long timestamp_us;
  long long latency_us;
  int value_type;  // nvmlValueType_t: 0 double, 1 unsigned int, 2 unsigned long,
                   // 3 unsigned long long, 4 signed long long, 5 signed int
  int result;      // nvmlReturn_t of this field
  union {
    double d;
    unsigned ui;
    unsigned long ul;
    unsigned long long ull;
    long long sll;
    int si;
  } value;
};
static_assert(sizeof(FieldValue) == 40, "nvmlFieldValue_t is 40 bytes");

inline constexpr unsigned kFieldPowerInstant = 186;  // NVML_FI_DEV_POWER_INSTANT, mW
inline constexpr int kSuccess = 0;                   // NVML_SUCCESS

}  // namespace gpuperf::nvml
