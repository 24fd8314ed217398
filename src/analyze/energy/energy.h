// GPU energy attributed to kernels: an estimate from the power readings the recorder took
// (PowerSampleRecord, NVML, 10-20 per second; docs/energy.md).
//
// Between two readings the board drew their mean power (the trapezoid rule). That energy
// goes to the kernels running on that GPU at each moment, shared equally among the kernels
// running at the same time; moments with no kernel running count as idle. So the kernels'
// joules plus idle add up to the integral of the readings over the sampled window, exactly.
// Kernels (or parts) outside that window get nothing and are counted as unsampled.
//
// Each GPU of each process is its own series (the power of one GPU, the kernels of that
// process on it). A GPU shared by several processes is not split between them.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "gpuperf/records.h"

namespace gpuperf {

// One kernel to attribute; `tag` is the caller's (a kernel name, a launch stack).
struct EnergySpan {
  uint32_t pid = 0;
  uint32_t device = 0;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint32_t tag = 0;
};

struct EnergyDevice {
  uint32_t pid = 0;
  uint32_t device = 0;
  uint64_t samples = 0;
  uint64_t first_ns = 0, last_ns = 0;  // the sampled window
  double rate_hz = 0;                  // from the median interval between readings
  PowerSource source = PowerSource::kNone;
  double sampled_j = 0;     // the integral of the readings over the window
  double attributed_j = 0;  // to kernels
  double idle_j = 0;        // while no kernel ran
  uint64_t kernel_ns = 0;
  uint64_t unsampled_kernel_ns = 0;  // kernel time outside the window
  // NVML's energy counter between its first and last reading, and the readings' integral
  // over that same stretch, for comparison. counter_j < 0: the counter was not read twice.
  double counter_j = -1;
  double sampled_over_counter_j = 0;
};

struct EnergyAttribution {
  std::vector<double> joules_by_tag;  // indexed by EnergySpan::tag
  std::vector<EnergyDevice> devices;  // (pid, device) order; only those with readings
  double attributed_j() const;
};

// `samples` in any order, on the same clock as `spans`. Tags must be < `tags`.
EnergyAttribution AttributeEnergy(std::span<const PowerSampleRecord> samples,
                                  std::vector<EnergySpan> spans, size_t tags);

}  // namespace gpuperf
